/**
 * Issue 29 on the real Neutron: Raven SIGKILLed at seeded moments during bursts of pods on a VM node of the OVN rig
 * (ML2/OVN's trunk driver, MariaDB), with subport pools on, restarted each time; then every pod has its own subport of
 * the VM's trunk, claimed in Neutron for it alone, each VLAN id is on the trunk once, and no two pods' VIFs name one
 * port or one VLAN id. The simulator's version (test/e2e/raven/nested-kill.test.ts) kills at more points; this one
 * checks that what it relies on (the trunk as the only record of the VLAN ids, `If-Match` claims, atomic
 * `add_subports`) holds on Neutron itself. No packets: it is about who owns what. Run by `npm run test:nested-vm`
 * (RAVEN_NESTED_VM=1), not in CI: a run costs a few minutes of a slow Neutron.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../support/node-test.ts';
import { neutronAdmin, neutronScratch, readRig, registerVmNode, type Rig } from '../support/dataplane.ts';
import { seeded } from '../support/seeded.ts';
import { startTestServer, testConnection, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { inParallel, killChild, podBody, startControllerChild, type ControllerChild } from '../e2e/raven/support.ts';
import { parseVif, VIF_ANNOTATION, type Pod } from '../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackError, OpenStackSession } from '../../src/openstack/index.ts';
import { purgeCluster } from '../support/neutron-cluster.ts';

const RIG_ENV = process.env.RAVEN_DATAPLANE_ENV;
const skip =
  (process.env.RAVEN_NESTED_VM !== '1' && 'runs under npm run test:nested-vm only (RAVEN_NESTED_VM=1)') ||
  (!RIG_ENV && 'needs the OVN dataplane rig') ||
  (!/^RAVEN_DATAPLANE_BACKEND=ovn$/m.test(RIG_ENV ? readFileSync(RIG_ENV, 'utf8') : '') &&
    'needs the OVN rig (trunks)');
const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 29_292_929);
const NS = 'nk';
const VM_NODE = 'nk-vm';
const BURSTS = 3;
const PER_BURST = 6;

describe(
  `nested pods on the real Neutron: Raven SIGKILLed during bursts (seed ${SEED})`,
  { skip, timeout: 600_000 },
  () => {
    const tag = randomBytes(3).toString('hex');
    const clusterId = `nk${tag}`;
    const random = seeded(SEED);
    let rig: Rig;
    let neutron: ReturnType<typeof neutronAdmin>;
    let scratch: ReturnType<typeof neutronScratch> | undefined;
    let server: TestServer | undefined;
    let kube: KubeClient | undefined;
    let child: ControllerChild | undefined;
    let trunkId = '';
    let settings: Record<string, string> = {};

    const make = (kind: string, body: object) => scratch!.make(kind, body);
    const trunkSubports = async () =>
      (
        await neutron<{ sub_ports: { port_id: string; segmentation_id: number }[] }>(
          'GET',
          `trunks/${trunkId}/get_subports`,
        )
      ).sub_ports;
    const deviceOf = async (portIds: string[]) =>
      new Map(
        (
          await neutron<{ ports: { id: string; device_id: string }[] }>(
            'GET',
            `ports?${portIds.map((id) => `id=${id}`).join('&')}`,
          )
        ).ports.map((p) => [p.id, p.device_id]),
      );

    before(async () => {
      rig = (await readRig())!;
      neutron = neutronAdmin(rig.neutronUrl);
      scratch = neutronScratch(neutron);
      const nodes = await make('network', { name: `nk-${tag}-nodes` });
      await make('subnet', { network_id: nodes.id, ip_version: 4, cidr: '10.253.0.0/24' });
      const pods = await make('network', { name: `nk-${tag}-pods` });
      const podSubnet = await make('subnet', { network_id: pods.id, ip_version: 4, cidr: '10.253.16.0/20' });
      const router = await make('router', { name: `nk-${tag}-router` });
      const serverId = randomUUID();
      const vmPort = await make('port', {
        name: `nk-${tag}-vm`,
        network_id: nodes.id,
        'binding:host_id': rig.host,
        device_owner: 'compute:nova',
        device_id: serverId,
      });
      trunkId = (await make('trunk', { name: `nk-${tag}-trunk`, port_id: vmPort.id })).id;
      server = await startTestServer();
      kube = new KubeClient({ connection: testConnection(server) });
      await registerVmNode(kube, VM_NODE, serverId);
      await kube.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      settings = {
        RAVEN_CLUSTER_ID: clusterId,
        RAVEN_SUBNET_STRATEGY: 'shared',
        RAVEN_POD_SUBNET_ID: podSubnet.id,
        RAVEN_ROUTER_ID: router.id,
        RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
        RAVEN_TRANSLATE_SERVICES: 'false',
        RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
        RAVEN_NESTED_MODE: 'existing',
        RAVEN_PORT_POOL_SIZING: 'static',
        RAVEN_PORT_POOL_MIN: '2',
        RAVEN_PORT_POOL_MAX: '8',
        RAVEN_PORT_POOL_BATCH: '3',
        RAVEN_LEADER_ELECT: 'false',
        RAVEN_OPS_PORT: '0',
        RAVEN_RESYNC_PERIOD_SECONDS: '0',
        RAVEN_LOG_LEVEL: 'silent',
      };
    });

    after(async () => {
      await killChild(child);
      await kube?.close();
      await server?.stop();
      const session = new OpenStackSession({
        cloud: loadCloudConfig({ cloud: rig.cloud, env: { OS_CLIENT_CONFIG_FILE: rig.cloudsYaml } }),
        timeoutMs: 120_000,
      });
      // Raven's ports, off the trunk first. A killed Raven's last requests may still land (Neutron finishes a request
      // whose client is gone), putting a port back on it: then again, a few times.
      for (let round = 0; ; round++) {
        await scratch?.release();
        try {
          await purgeCluster(new NeutronClient(session), clusterId);
          break;
        } catch (err) {
          if (round >= 4 || !(err instanceof OpenStackError && err.code === 'OPENSTACK_TRUNK_PORT_IN_USE')) throw err;
          await sleep(2_000);
        }
      }
      await session.close();
      await scratch?.deleteAll();
    });

    it('leaves no subport claimed twice and no VLAN id twice on the trunk', async () => {
      const start = () =>
        startControllerChild({ server: server!, cloudsYaml: rig.cloudsYaml, cloud: rig.cloud }, settings);
      let serial = 0;
      for (let burst = 0; burst < BURSTS; burst++) {
        child = start();
        await child.opsUrl;
        const pods = Array.from({ length: PER_BURST }, () => podBody(NS, `p-${serial++}`, VM_NODE));
        await inParallel(pods, PER_BURST, (p) => kube!.create(resources.pods, p, { namespace: NS }));
        // a real Neutron answers in 0.1–2 s: kills land between creates, adds to the trunk and claims
        await sleep(500 + Math.floor(random() * 4_000));
        const wired = (await kube!.listAll<Pod>(resources.pods, { namespace: NS })).items.filter(
          (p) => p.metadata.annotations?.[VIF_ANNOTATION],
        ).length;
        child.proc.kill('SIGKILL');
        await child.exited;
        console.log(`# burst ${burst + 1}: Raven killed with ${wired} of ${serial} pods given a VIF`);
      }
      child = start();
      const { vifs } = await waitFor(
        'every pod on a subport of its own, claimed',
        async () => {
          const pods = (await kube!.listAll<Pod>(resources.pods, { namespace: NS })).items;
          const vifs = pods.map((p) => parseVif(p.metadata.annotations?.[VIF_ANNOTATION]));
          if (!vifs.every((v, i) => v?.nested && v.podUid === pods[i]!.metadata.uid)) return undefined;
          const devices = await deviceOf(vifs.map((v) => v!.portId));
          return vifs.every((v) => devices.get(v!.portId) === v!.podUid) ? { vifs: vifs.map((v) => v!) } : undefined;
        },
        { timeoutMs: 240_000, intervalMs: 1_000 },
      );
      assert.equal(vifs.length, BURSTS * PER_BURST);
      assert.equal(new Set(vifs.map((v) => v.portId)).size, vifs.length, 'two pods name one port');
      assert.equal(new Set(vifs.map((v) => v.nested!.vlan)).size, vifs.length, 'two pods name one VLAN id');
      const subPorts = await trunkSubports();
      const vlans = subPorts.map((s) => s.segmentation_id);
      assert.equal(new Set(vlans).size, vlans.length, 'a VLAN id is on the trunk twice');
      const onTrunk = new Map(subPorts.map((s) => [s.port_id, s.segmentation_id]));
      for (const vif of vifs)
        assert.equal(onTrunk.get(vif.portId), vif.nested!.vlan, 'a VIF names a VLAN id its port is not on');
      console.log(
        `# ${vifs.length} pods, ${subPorts.length} subports on the trunk (${subPorts.length - vifs.length} free)`,
      );
      // The other subports are the pool's: free (no live pod's claim).
      const uids = new Set(vifs.map((v) => v.podUid));
      const others = subPorts.map((s) => s.port_id).filter((id) => !vifs.some((v) => v.portId === id));
      if (others.length)
        for (const [id, device] of await deviceOf(others)) assert.ok(!uids.has(device), `${id} claimed twice`);
    });
  },
);
