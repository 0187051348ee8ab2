/**
 * Nested pods in CI (issue 29): the Neutron/OVN half of the real-VM test (nested-vm.test.ts), on the OVN rig with no
 * VM. This host's kernel has no 802.1Q, so the VM's side is a stand-in (docs/ovn.md, "Nested pods in CI"): a second
 * bridge of the rig's userspace Open vSwitch is the VM's switch — its trunk port is one end of a veth whose other end
 * is the VM's NIC on the integration bridge, bound to the trunk's parent port, and each nested pod's veth is an access
 * port on its subport's VLAN id, so frames leave the "VM" tagged as a VLAN sub-interface would tag them. Everything
 * else is real: Raven's controller (in process, nested mode, warm subport pools) gives the pods subports of the
 * trunk and VIFs with their VLAN ids, and OVN carries the packets: a nested pod reaches a bare pod and another nested
 * pod, and a bare pod reaches it; a deleted pod's subport stays on the trunk for the next.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from '../support/node-test.ts';
import {
  netnsNames,
  neutronAdmin,
  neutronScratch,
  pings,
  plugIntoBridge,
  readRig,
  recentLogs,
  registerVmNode,
  runController,
  type Rig,
} from '../support/dataplane.ts';
import { waitFor } from '../support/wait.ts';
import { startTestServer, testConnection, type TestServer } from '../support/server.ts';
import { parseVif, VIF_ANNOTATION, type Pod, type Vif } from '../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../../src/openstack/index.ts';
import { purgeCluster } from '../support/neutron-cluster.ts';

const sh = promisify(execFile);
const RIG_ENV = process.env.RAVEN_DATAPLANE_ENV;
const skip =
  (!RIG_ENV && 'needs the dataplane rig (npm run test:dataplane)') ||
  (!/^RAVEN_DATAPLANE_BACKEND=ovn$/m.test(RIG_ENV ? readFileSync(RIG_ENV, 'utf8') : '') &&
    'needs the OVN rig (trunks), not linuxbridge');
const VM_NODE = 'nested-ovs-vm';
/** The first packets through a new path: OVN's flows for a new logical port come within seconds. */
const PACKETS = { timeoutMs: 60_000, intervalMs: 500 };

interface Port {
  id: string;
  mac_address: string;
  fixed_ips: { ip_address: string }[];
}

describe('nested pods on trunk subports, the VM a stand-in switch (OVN)', { skip, timeout: 600_000 }, () => {
  const tag = randomBytes(3).toString('hex');
  let rig: Rig;
  let neutron: ReturnType<typeof neutronAdmin>;
  let scratch: ReturnType<typeof neutronScratch> | undefined;
  const netns: string[] = [];
  const devices: string[] = [];
  let vmBridge = '';
  let trunkId = '';
  let gateway = '';
  let bare: Port;
  let server: TestServer | undefined;
  let kube: KubeClient | undefined;
  const clusterId = `nov${tag}`;
  let session: OpenStackSession | undefined;
  let stop: (() => Promise<void>) | undefined;
  const ip = (p: { fixed_ips: { ip_address: string }[] }) => p.fixed_ips[0]!.ip_address;
  const vsctl = (...args: string[]) =>
    sh('ovs-vsctl', [`--db=${rig.ovs!.database}`, '--timeout=10', ...args], { timeout: 15_000 });
  const inNs = (ns: string, ...c: string[]) => sh('ip', ['netns', 'exec', ns, ...c], { timeout: 15_000 });

  const make = (kind: string, body: object) => scratch!.make(kind, body);

  /** A pod's namespace with `eth0` (the port's MAC and address), its other end `host`; a TCP responder saying `name`. */
  async function podNamespace(name: string, host: string, mac: string, address: string): Promise<string> {
    const ns = `${rig.netnsPrefix}${tag}-${name}`;
    netns.push(ns);
    await sh('ip', ['netns', 'add', ns]);
    await sh('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    devices.push(host);
    await inNs(ns, 'ip', 'link', 'set', 'eth0', 'address', mac, 'mtu', '1442', 'up');
    await inNs(ns, 'ip', 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    await inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
    await inNs(ns, 'ip', 'route', 'add', 'default', 'via', gateway);
    // the userspace datapath never completes a checksum left to the "hardware" (docs/ovn.md)
    await inNs(ns, 'ethtool', '-K', 'eth0', 'tx', 'off');
    await sh('ip', ['link', 'set', host, 'up']);
    const responder = `socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo ${name}'`;
    await sh('ip', ['netns', 'exec', ns, 'setsid', 'sh', '-c', `${responder} </dev/null >/dev/null 2>&1 &`]);
    return ns;
  }

  /** TCP from `ns` to the responder at `address`: what it says, or '' when nothing answers within 3 s. */
  const tcp = (ns: string, address: string) =>
    inNs(ns, 'socat', '-T3', '-', `TCP:${address}:8080,connect-timeout=3`).then(
      ({ stdout }) => stdout.trim(),
      () => '',
    );

  /** A nested pod plugged as a VLAN sub-interface would be: an access port of the VM's switch on its VIF's VLAN id. */
  async function plugNested(name: string, vif: Vif): Promise<string> {
    const host = `${rig.interfacePrefix}${vif.portId.slice(0, 11)}`;
    const ns = await podNamespace(name, host, vif.mac, vif.ips[0]!.address);
    await vsctl('add-port', vmBridge, host, `tag=${vif.nested!.vlan}`);
    return ns;
  }

  const vifOf = async (pod: Pod) =>
    parseVif(
      (await kube!.get<Pod>(resources.pods, pod.metadata.name ?? '', 'default')).metadata.annotations?.[VIF_ANNOTATION],
    );
  /** A pod on the VM's node, and the nested VIF Raven's controller writes on it. */
  async function nestedPod(name: string): Promise<{ pod: Pod; vif: Vif }> {
    const pod = await kube!.create(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${tag}-${name}`, namespace: 'default' },
      spec: { nodeName: VM_NODE, containers: [{ name: 'app', image: 'app' }] },
    });
    const vif = await waitFor(`the VIF of ${name}`, async () => (await vifOf(pod))?.nested && vifOf(pod), {
      timeoutMs: 120_000,
      intervalMs: 100,
      explain: () => `Raven's last log lines:\n${recentLogs(20)}`,
    });
    return { pod, vif };
  }
  const trunkSubports = async () =>
    new Map(
      (
        await neutron<{ sub_ports: { port_id: string; segmentation_id: number }[] }>(
          'GET',
          `trunks/${trunkId}/get_subports`,
        )
      ).sub_ports.map((s) => [s.port_id, s.segmentation_id]),
    );

  before(async () => {
    rig = (await readRig())!;
    neutron = neutronAdmin(rig.neutronUrl);
    scratch = neutronScratch(neutron);
    const network = async (name: string, cidr: string) => {
      const net = await make('network', { name: `nov-${tag}-${name}` });
      const subnet = await make('subnet', { network_id: net.id, ip_version: 4, cidr, name: `nov-${tag}-${name}` });
      return { net: net.id, subnet: subnet.id, gateway: String(subnet.gateway_ip) };
    };
    const nodes = await network('nodes', '10.252.0.0/24');
    const pods = await network('pods', '10.252.1.0/24');
    gateway = pods.gateway;
    const router = await make('router', { name: `nov-${tag}-router` });
    await neutron('PUT', `routers/${router.id}/add_router_interface`, { subnet_id: pods.subnet });
    // open: this test is about the path, not the groups (the real-VM test and network-policy.test.ts are)
    const sg = await make('security_group', { name: `nov-${tag}-open` });
    for (const protocol of ['icmp', 'tcp'])
      await neutron('POST', 'security-group-rules', {
        security_group_rule: { security_group_id: sg.id, direction: 'ingress', ethertype: 'IPv4', protocol },
      });

    // The VM: Nova's port (its device the server), a trunk on it, its NIC on the integration bridge; its switch.
    const serverId = randomUUID();
    const vmPort = (await make('port', {
      name: `nov-${tag}-vm`,
      network_id: nodes.net,
      security_groups: [sg.id],
      'binding:host_id': rig.host,
      device_owner: 'compute:nova',
      device_id: serverId,
    })) as unknown as Port;
    trunkId = (await make('trunk', { name: `nov-${tag}-trunk`, port_id: vmPort.id })).id;
    vmBridge = `${rig.interfacePrefix}vm${tag}`;
    await vsctl('add-br', vmBridge, '--', 'set', 'bridge', vmBridge, 'datapath_type=netdev');
    const nic = `${rig.interfacePrefix}${vmPort.id.slice(0, 11)}`;
    const trunkPort = `${rig.interfacePrefix}t${vmPort.id.slice(0, 10)}`;
    await sh('ip', ['link', 'add', nic, 'type', 'veth', 'peer', 'name', trunkPort]);
    devices.push(nic);
    for (const d of [nic, trunkPort]) await sh('ip', ['link', 'set', d, 'mtu', '1500', 'up']);
    await vsctl('add-port', vmBridge, trunkPort);
    await plugIntoBridge(rig, nic, vmPort);

    // A bare pod on the pod network, bound to this host as the rig's pods are.
    bare = (await make('port', {
      name: `nov-${tag}-bare`,
      network_id: pods.net,
      security_groups: [sg.id],
      'binding:host_id': rig.host,
    })) as unknown as Port;
    const bareHost = `${rig.interfacePrefix}${bare.id.slice(0, 11)}`;
    await podNamespace('bare', bareHost, bare.mac_address, ip(bare));
    await plugIntoBridge(rig, bareHost, bare);

    // Raven's controller: nested mode with the VM's trunk, the pod subnet shared, warm subport pools, the open group.
    server = await startTestServer();
    kube = new KubeClient({ connection: testConnection(server) });
    await registerVmNode(kube, VM_NODE, serverId);
    const cloud = loadCloudConfig({ cloud: rig.cloud, env: { OS_CLIENT_CONFIG_FILE: rig.cloudsYaml } });
    session = new OpenStackSession({ cloud, timeoutMs: 120_000 });
    stop = await runController(server, session, {
      clusterId,
      subnets: { strategy: 'shared', shared: { subnetId: pods.subnet } },
      serviceSubnet: { cidr: '10.96.0.0/12' },
      router: { id: router.id },
      securityGroups: [sg.id],
      translations: { services: false, networkPolicies: false },
      nested: { mode: 'existing' },
      portPools: { enabled: true, sizing: 'static', min: 1, max: 3, batch: 1 },
      leaderElection: { enabled: false },
      ops: { port: 0 },
      resyncPeriodSeconds: 0,
      logLevel: 'info',
    });
  });

  after(async () => {
    await stop?.();
    await kube?.close();
    await server?.stop();
    if (vmBridge) await vsctl('--if-exists', 'del-br', vmBridge).catch(() => undefined);
    for (const d of devices) await vsctl('--if-exists', 'del-port', rig.ovs!.bridge, d).catch(() => undefined);
    // the responders: exactly the processes in this test's namespaces
    for (const ns of netns) {
      const { stdout } = await sh('ip', ['netns', 'pids', ns]).catch(() => ({ stdout: '' }));
      for (const pid of stdout.split(/\s+/).filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    }
    for (const ns of netns) await sh('ip', ['netns', 'del', ns]).catch(() => undefined);
    for (const d of devices) await sh('ip', ['link', 'del', d]).catch(() => undefined);
    await scratch?.release();
    // Raven's pool and pod ports, off the trunk now, before the subnet they are on
    if (session) {
      await purgeCluster(new NeutronClient(session), clusterId);
      await session.close();
    }
    await scratch?.deleteAll();
    assert.equal((await netnsNames(`${rig.netnsPrefix}${tag}`)).length, 0, 'no namespace of this test is left');
  });

  let first: { pod: Pod; vif: Vif; ns: string } | undefined;

  it("a pod on the VM node gets a subport of the VM's trunk; plugged at its VLAN, it and a bare pod reach each other", async () => {
    const { pod, vif } = await nestedPod('a');
    assert.equal(vif.nested!.trunkId, trunkId, 'a subport of the VM’s trunk');
    assert.equal((await trunkSubports()).get(vif.portId), vif.nested!.vlan, 'on the trunk at the VIF’s VLAN id');
    const ns = await plugNested('a', vif);
    const bareNs = `${rig.netnsPrefix}${tag}-bare`;
    await waitFor('nested a → bare ping', () => pings(ns, ip(bare), 2), PACKETS);
    assert.equal(await tcp(ns, ip(bare)), 'bare');
    await waitFor('bare → nested a TCP', async () => (await tcp(bareNs, vif.ips[0]!.address)) === 'a', PACKETS);
    first = { pod, vif, ns };
  });

  it('a second pod takes a warm subport of the pool, on another VLAN id: the two nested pods reach each other', async () => {
    assert.ok(first, 'the first nested pod is plugged');
    const onTrunk = await trunkSubports();
    const { vif } = await nestedPod('b');
    assert.notEqual(vif.nested!.vlan, first.vif.nested!.vlan);
    assert.equal(onTrunk.get(vif.portId), vif.nested!.vlan, 'a subport already on the trunk: the pool’s');
    const ns = await plugNested('b', vif);
    await waitFor('nested b → nested a TCP', async () => (await tcp(ns, first!.vif.ips[0]!.address)) === 'a', PACKETS);
    assert.equal(await tcp(first.ns, vif.ips[0]!.address), 'b');
  });

  it("a deleted pod's subport stays on the trunk at its VLAN id, a free port of the pool", async () => {
    assert.ok(first, 'the first nested pod is plugged');
    await kube!.delete(resources.pods, first.pod.metadata.name ?? '', 'default');
    // Raven's record of it changes nowhere in Neutron: it stays on the trunk, for the pool's next pod
    for (let i = 0; i < 6; i++) {
      assert.equal((await trunkSubports()).get(first.vif.portId), first.vif.nested!.vlan);
      await new Promise((r) => setTimeout(r, 500));
    }
    const { port } = await neutron<{ port: { tags: string[] } }>('GET', `ports/${first.vif.portId}`);
    assert.ok(port.tags.includes(`raven.cluster=${clusterId}`));
  });
});
