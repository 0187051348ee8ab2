import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from '../../test/support/node-test.ts';
import { FakeClock, silentLogger } from '../core/index.ts';
import type { Pod } from '../kube/api/index.ts';
import { KubeClient, resources } from '../kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../openstack/index.ts';
import {
  NETWORK_ANNOTATION,
  ownerOf,
  parseVif,
  POD_DEVICE_OWNER,
  VIF_ANNOTATION,
  type SubnetStrategyName,
} from '../reconcilers/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../test/support/server.ts';
import { waitFor } from '../../test/support/wait.ts';
import { composeRaven, type ComposedRaven } from './compose.ts';
import { loadRavenConfig, type RavenConfig } from './config/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../test/support/openstack-sim.ts';
/**
 * Raven as `raven run` composes it, namespaces and pods only, against a real API server and the OpenStack simulator:
 * one replica, ops on a free port, the garbage collector's loop once an hour (tests run rounds themselves).
 */
function ravenConfig(clusterId: string, strategy: SubnetStrategyName, cidr: string): RavenConfig {
  return loadRavenConfig({
    // Without warm pools: these tests are about the cold path (every pod its own new port, deleted with it).
    flags: {
      translations: { services: false },
      gc: { intervalSeconds: 3600, graceSeconds: 0 },
      portPools: { enabled: false },
    },
    env: {
      RAVEN_CLUSTER_ID: clusterId,
      RAVEN_SUBNET_STRATEGY: strategy,
      ...(strategy === 'shared'
        ? { RAVEN_POD_SUBNET_CIDR: cidr }
        : { RAVEN_NAMESPACE_CIDR: cidr, RAVEN_NAMESPACE_PREFIX_LENGTH: '24' }),
      RAVEN_LEADER_ELECT: 'false',
      RAVEN_OPS_PORT: '0',
      RAVEN_RESYNC_PERIOD_SECONDS: '0',
      RAVEN_WORKERS_NAMESPACES: '2',
      RAVEN_WORKERS_PODS: '4',
    },
  });
}

const pod = (ns: string, name: string, nodeName = 'node-1'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
});

describe(
  'Raven: namespaces and pods → Neutron (embedded API server + OpenStack simulator)',
  { timeout: 120_000 },
  () => {
    let server: TestServer;
    let sim: RunningOpenStackSim;
    let client: KubeClient;
    let session: OpenStackSession;
    let neutron: NeutronClient;
    const stops: AbortController[] = [];
    const runs: Promise<void>[] = [];

    before(async () => {
      server = await startTestServer();
      const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-rec-')), 'clouds.yaml');
      sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut });
      client = new KubeClient({
        connection: testConnection(server),
      });
      session = new OpenStackSession({
        cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
      });
      neutron = new NeutronClient(session);
    });
    // Every Raven watches every namespace: a Raven left running would wire the next test's pods under its cluster id,
    // and pods left behind would be wired again by the next test's Raven.
    afterEach(async () => {
      for (const s of stops.splice(0)) s.abort();
      await Promise.allSettled(runs.splice(0));
      for (const p of (await client.list(resources.pods)).items)
        await client.delete(resources.pods, p.metadata.name!, p.metadata.namespace);
    });
    after(async () => {
      await session.close();
      await client.close();
      await sim.close();
      await server.stop();
    });

    async function start(config: RavenConfig, clock?: FakeClock): Promise<ComposedRaven> {
      const raven = await composeRaven({
        config,
        logger: silentLogger,
        connections: { client, eventsClient: client, session },
        closeConnections: false,
        ...(clock ? { clock } : {}),
      });
      const stop = new AbortController();
      stops.push(stop);
      runs.push(raven.manager.start(stop.signal));
      return raven;
    }

    const podEvents = async (ns: string, name: string) =>
      (await client.list(resources.events, { namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items
        .map((e) => `${e.type} ${e.reason}${e.count > 1 ? ` x${e.count}` : ''}`)
        .sort();
    const vifOf = async (ns: string, name: string) =>
      parseVif((await client.get(resources.pods, name, ns)).metadata.annotations?.[VIF_ANNOTATION]);

    const podPorts = async (ns: string, clusterId = 'test') =>
      (await neutron.ports.list({ device_owner: POD_DEVICE_OWNER })).filter((p) =>
        p.name.startsWith(`raven/${clusterId}/${ns}/`),
      );

    it('shared strategy: each scheduled pod gets one tagged port on the pod subnet and a VIF annotation; deleting the pod deletes it', async () => {
      const raven = await start(ravenConfig('test', 'shared', '10.244.0.0/16'));
      await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
      const created = await Promise.all(
        ['a', 'b', 'c'].map((n) => client.create(resources.pods, pod('shop', n), { namespace: 'shop' })),
      );
      await client.create(
        resources.pods,
        {
          ...pod('shop', 'host'),
          spec: { nodeName: 'node-1', hostNetwork: true, containers: [{ name: 'c', image: 'x' }] },
        },
        { namespace: 'shop' },
      );
      await client.create(
        resources.pods,
        { ...pod('shop', 'pending'), spec: { containers: [{ name: 'c', image: 'x' }] } },
        { namespace: 'shop' },
      );
      const annotated = await waitFor('VIF annotations on the three pods', async () => {
        const pods = await Promise.all(created.map((p) => client.get(resources.pods, p.metadata.name!, 'shop')));
        const vifs = pods.map((p) => parseVif(p.metadata.annotations?.[VIF_ANNOTATION]));
        return vifs.every(Boolean) ? vifs.map((v) => v!) : undefined;
      });
      const ports = await podPorts('shop');
      assert.equal(ports.length, 3, 'exactly one port per scheduled, non-hostNetwork pod');
      for (const [i, vif] of annotated.entries()) {
        const port = ports.find((p) => p.id === vif.portId)!;
        assert.ok(port, 'the annotation names the port');
        assert.equal(port.device_id, created[i]!.metadata.uid);
        assert.equal(port['binding:host_id'], 'node-1');
        assert.deepEqual([...port.tags].sort(), ['raven.cluster=test', 'raven.kind=pod']);
        assert.equal(vif.subnetId, raven.cluster.current()?.podSubnet?.subnetId);
        assert.equal(vif.ips[0]?.address, port.fixed_ips[0]?.ip_address);
        assert.equal(vif.ips[0]?.prefixLength, 16);
        assert.equal(vif.ips[0]?.gateway, '10.244.0.1');
        assert.equal(vif.mac, port.mac_address);
      }
      assert.equal(new Set(ports.map((p) => p.fixed_ips[0]?.ip_address)).size, 3);
      // Other writes to the pods queue them again: each is still counted once as network-ready.
      for (const p of created)
        await client.patch(
          resources.pods,
          p.metadata.name!,
          'shop',
          { metadata: { labels: { seen: 'yes' } } },
          'merge',
        );
      const ready = await raven.metrics.registry.getSingleMetricAsString('raven_pod_network_ready_seconds');
      assert.match(ready, /^raven_pod_network_ready_seconds_count 3$/m);
      await client.delete(resources.pods, 'b', 'shop');
      await waitFor("the deleted pod's port gone", async () => (await podPorts('shop')).length === 2);
    });

    it('namespace strategy: a namespace gets its own network and subnet (annotated); its pods get ports there', async () => {
      await start(ravenConfig('nsc', 'namespace', '172.16.0.0/16'));
      for (const name of ['team-a', 'team-b'])
        await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      const infos = await waitFor('network annotations on both namespaces', async () => {
        const all = await Promise.all(['team-a', 'team-b'].map((n) => client.get(resources.namespaces, n)));
        const values = all.map((ns) => ns.metadata.annotations?.[NETWORK_ANNOTATION]);
        return values.every(Boolean)
          ? values.map((v) => JSON.parse(v!) as { networkId: string; subnetId: string; cidr: string })
          : undefined;
      });
      // Every namespace (default, kube-system … too) gets its own /24 carved from the range, never the same one twice.
      assert.notEqual(infos[0]!.cidr, infos[1]!.cidr);
      for (const info of infos) assert.match(info.cidr, /^172\.16\.\d+\.0\/24$/);
      const all = (await neutron.subnets.list({ tags: ['raven.cluster=nsc'] })).map((s) => s.cidr);
      assert.equal(new Set(all).size, all.length, 'two namespaces share a CIDR');
      assert.ok(all.length >= 6, `subnets: ${all.join(', ')}`);
      const p = await client.create(resources.pods, pod('team-b', 'web'), { namespace: 'team-b' });
      const vif = await waitFor('the pod VIF', async () =>
        parseVif((await client.get(resources.pods, 'web', 'team-b')).metadata.annotations?.[VIF_ANNOTATION]),
      );
      assert.equal(vif.podUid, p.metadata.uid);
      assert.equal(vif.subnetId, infos[1]!.subnetId);
      assert.ok(vif.ips[0]!.address.startsWith(infos[1]!.cidr.split('.').slice(0, 3).join('.') + '.'));
      const network = await neutron.networks.get(infos[1]!.networkId);
      assert.equal(ownerOf(network.tags)?.kind, 'namespace');
    });

    it("the garbage collector deletes this cluster's orphans only", async () => {
      const raven = await start(ravenConfig('gcc', 'shared', '10.250.0.0/16'));
      const cluster = await waitFor('cluster network', () => raven.cluster.current());
      // The loop's first round (at once, then hourly) is over before the orphans exist.
      await waitFor('the first garbage-collection round', async () =>
        (await raven.metrics.registry.getSingleMetricAsString('raven_gc_runs_total')).includes(
          'raven_gc_runs_total{result="success"} 1',
        ),
      );
      const net = cluster.podSubnet!.networkId;
      const routerId = cluster.routerId;
      const gone = '00000000-dead-4000-8000-000000000000';
      const orphan = await neutron.ports.create({
        network_id: net,
        name: 'raven/gcc/x/gone',
        device_owner: POD_DEVICE_OWNER,
        device_id: gone,
        tags: ['raven.cluster=gcc', 'raven.kind=pod', `raven.uid=${gone}`],
      });
      // Named and owned like this cluster's, but untagged: never touched (only reported).
      const lookalike = await neutron.ports.create({
        network_id: net,
        name: 'raven/gcc/x/lookalike',
        device_owner: POD_DEVICE_OWNER,
        device_id: '00000000-dead-4000-8000-000000000002',
      });
      const foreign = await neutron.ports.create({
        network_id: net,
        name: 'raven/other/x/gone',
        device_owner: POD_DEVICE_OWNER,
        device_id: '00000000-dead-4000-8000-000000000001',
        tags: ['raven.cluster=other', 'raven.kind=pod', 'raven.uid=00000000-dead-4000-8000-000000000001'],
      });
      const untagged = await neutron.ports.create({
        network_id: net,
        name: 'someone-elses',
        device_id: 'vm-1',
        device_owner: 'compute:nova',
      });
      const dry = await raven.collector.collect({ routerId, dryRun: true });
      assert.deepEqual(
        dry.orphans.map((o) => o.id),
        [orphan.id],
      );
      assert.deepEqual(dry.untagged, [{ id: lookalike.id, name: lookalike.name }]);
      assert.equal((await neutron.ports.list({ id: orphan.id })).length, 1, 'a dry run deleted something');
      const report = await raven.collector.collect({ routerId });
      assert.equal(report.deleted, 1);
      const left = new Set((await neutron.ports.list({ network_id: net })).map((p) => p.id));
      assert.ok(!left.has(orphan.id));
      assert.ok(
        left.has(foreign.id) && left.has(untagged.id) && left.has(lookalike.id),
        "GC touched a port that is not this cluster's",
      );
    });

    it("a port deleted behind Raven's back: the verification sweep finds it, a new port with the same address is annotated, with Events", async () => {
      const raven = await start(ravenConfig('verify', 'shared', '10.251.0.0/16'));
      await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drift' } });
      await Promise.all(
        ['kept', 'lost'].map((n) => client.create(resources.pods, pod('drift', n), { namespace: 'drift' })),
      );
      const before = await waitFor('both pods annotated', async () => {
        const [kept, lost] = await Promise.all([vifOf('drift', 'kept'), vifOf('drift', 'lost')]);
        return kept && lost ? { kept, lost } : undefined;
      });
      assert.deepEqual((await raven.gc.round())?.findings, [], 'nothing is missing yet');
      await neutron.ports.delete(before.lost.portId);
      assert.deepEqual((await raven.gc.round())?.findings, ['drift/lost']);
      const replaced = await waitFor('a new port in the annotation', async () => {
        const vif = await vifOf('drift', 'lost');
        return vif && vif.portId !== before.lost.portId ? vif : undefined;
      });
      const port = (await neutron.ports.list({ id: replaced.portId }))[0]!;
      assert.equal(port.device_id, replaced.podUid);
      assert.equal(replaced.ips[0]?.address, before.lost.ips[0]?.address, 'the new port has the address the pod had');
      assert.equal((await vifOf('drift', 'kept'))!.portId, before.kept.portId, 'the intact pod kept its port');
      assert.equal((await podPorts('drift', 'verify')).length, 2);
      await raven.recorder.flush();
      assert.deepEqual(
        await podEvents('drift', 'lost'),
        ['Normal PortCreated x2', 'Warning PortMissing'],
        'both ports counted on one PortCreated Event',
      );
      assert.deepEqual(await podEvents('drift', 'kept'), ['Normal PortCreated']);
    });

    it('pods waiting on the port quota are queued again as soon as a port is freed (not after their back-off)', async () => {
      // A fake clock that never moves: no back-off retry can fire, so only the wake-up can give the waiting pod a port.
      const clock = new FakeClock(Date.now());
      const raven = await start(ravenConfig('room', 'shared', '10.252.0.0/16'), clock);
      await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'room' } });
      await client.create(resources.pods, pod('room', 'first'), { namespace: 'room' });
      await waitFor('first annotated', () => vifOf('room', 'first'));
      // A pod was wired, so the record of pod ports holds its first full list.
      const loading = await raven.metrics.registry.getSingleMetricAsString('raven_record_loading');
      assert.match(loading, /^raven_record_loading{record="pod-ports"} 0$/m);
      const project = (await podPorts('room', 'room'))[0]!.project_id;
      const used = (await neutron.quotas.details(project)).port!.used;
      await neutron.quotas.update(project, { port: used });
      try {
        await client.create(resources.pods, pod('room', 'second'), { namespace: 'room' });
        await waitFor('the QuotaExceeded Warning', async () => {
          await raven.recorder.flush();
          return (await podEvents('room', 'second')).includes('Warning QuotaExceeded');
        });
        assert.equal(await vifOf('room', 'second'), undefined);
        const waiting = () => raven.metrics.registry.getSingleMetricAsString('raven_pods_waiting');
        assert.match(await waiting(), /^raven_pods_waiting{reason="QuotaExceeded"} 1$/m);
        await client.delete(resources.pods, 'first', 'room');
        const vif = await waitFor("second annotated once first's port is gone", () => vifOf('room', 'second'));
        await waitFor(
          'a wired pod no longer counted as waiting',
          async () => !/reason="QuotaExceeded"/.test(await waiting()),
        );
        assert.equal((await podPorts('room', 'room')).map((p) => p.id).join(), vif.portId);
      } finally {
        await neutron.quotas.reset(project);
      }
    });
  },
);
