/**
 * Issue 15's warm port pools, end to end: Raven (`composeRaven`, as `raven run` builds it) on the embedded API server
 * and the OpenStack simulator, with Nodes, pods pre-scheduled to them, and the simulator's per-route counters and
 * fault rules as the witnesses of what reached Neutron.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { formatVif, parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { subresourceWriter } from '@raven/cluster-sim/subresource.ts';
import { testConnection } from '../../support/server.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, podBody, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'pools';

const nodeBody = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

describe('warm port pools', { timeout: 240_000 }, () => {
  let env: Env;
  let raven: { composed: ComposedRaven; stop(): Promise<void> } | undefined;

  before(async () => {
    env = await startEnv(15_150);
    for (const node of ['node-1', 'node-2']) await env.client.create(resources.nodes, nodeBody(node));
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'warm' } });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  const startRaven = () =>
    composeInProcess(
      env,
      loadRavenConfig({
        env: {
          ...ravenSettings(CLUSTER, 'namespace'),
          RAVEN_PORT_POOL_MIN: '3',
          RAVEN_PORT_POOL_MAX: '5',
          RAVEN_PORT_POOL_BATCH: '2',
        },
        // No sweep while the suite runs: its lists would count among the Neutron requests of a pod. Grace 0: a port
        // whose pod is gone is free at once (not after the grace age), so a namespace's drain takes it.
        flags: { gc: { intervalSeconds: 3600, graceSeconds: 0 } },
      }),
    );

  const counters = () => env.sim.sim.faults.counters();
  /** Neutron requests since the counters were reset, by route (Keystone's left out). */
  const neutronCalls = () =>
    Object.fromEntries(Object.entries(counters()).filter(([route]) => route.includes(' /network/')));
  /** The free ports of the pool of `node` (name `raven/<cluster>/pool/<node>/<namespace>` or a deleted pod's), from the simulator. */
  const portsOf = (predicate: (p: { device_id: string; name: string; host_id: string }) => boolean) =>
    [...env.sim.sim.neutron.ports.values()].filter((p) => p.device_owner === POD_DEVICE_OWNER && predicate(p));
  const unclaimed = (node: string) =>
    portsOf((p) => p.host_id === node && p.name.startsWith(`raven/${CLUSTER}/pool/${node}/`));
  const wired = (name: string) =>
    waitFor(`${name} wired`, async () => {
      const pod = await env.client.get(resources.pods, name, 'warm');
      const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
      return vif && vif.podUid === pod.metadata.uid ? { pod, vif } : undefined;
    });
  /** The Events Raven wrote about a pod of `warm` (the recorder flushed first). */
  const events = async (name: string) => {
    await raven!.composed.recorder.flush();
    const list = await env.client.list(resources.events, {
      namespace: 'warm',
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items as { reason?: string; message?: string }[];
  };
  const reasons = async (name: string) => (await events(name)).map((e) => e.reason);
  /** The free ports of node-1's pool, as Raven exports them (labelled for a person: node, namespace, groups). */
  const poolSize = async () => {
    const text = await raven!.composed.metrics.registry.getSingleMetricAsString('raven_port_pool_size');
    return Number(/\{node="node-1",namespace="warm",groups="[^"]*"} (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  const claimed = (portId: string, uid: string) =>
    waitFor(`port ${portId} claimed for ${uid}`, () => env.sim.sim.neutron.ports.get(portId)?.device_id === uid);

  it('a pod takes a pool port with Neutron unreachable: its VIF needs no Neutron request; the claim follows', async () => {
    raven = await startRaven();
    // The first pod of the node and namespace takes the cold path; its pool is then filled to min.
    await env.client.create(resources.pods, podBody('warm', 'seed', 'node-1'), { namespace: 'warm' });
    await wired('seed');
    // Filled in Neutron and in Raven's pool (Neutron has the ports before Raven has its answer).
    const pool = await waitFor('the pool of node-1 filled to min', async () => {
      const free = unclaimed('node-1');
      return free.length >= 3 && (await poolSize()) === free.length ? free : undefined;
    });
    for (const port of pool) assert.deepEqual([...port.tags].sort(), [`raven.cluster=${CLUSTER}`, 'raven.kind=pod']);
    // Every Neutron request now fails: a pod still gets its VIF, from the pool.
    env.sim.sim.faults.addRule({ path: '/network/', status: 503 });
    try {
      await env.client.create(resources.pods, podBody('warm', 'w1', 'node-1'), { namespace: 'warm' });
      const { pod, vif } = await wired('w1');
      assert.ok(
        pool.some((p) => p.id === vif.portId),
        'the VIF names a pool port',
      );
      assert.equal(env.sim.sim.neutron.ports.get(vif.portId)?.device_id, '', 'claimed before Neutron answered?');
      env.sim.sim.faults.clearRules();
      await claimed(vif.portId, pod.metadata.uid!);
      assert.equal(env.sim.sim.neutron.ports.get(vif.portId)?.name, `raven/${CLUSTER}/warm/w1`);
    } finally {
      env.sim.sim.faults.clearRules();
    }
    await waitFor('the pool back at min', () => unclaimed('node-1').length >= 3);
  });

  it("a deleted pod's port goes back to its pool at no cost; the next pod gets a port for one Neutron request", async () => {
    const { vif: w1 } = await wired('w1');
    // Settled (the refill after w1 took its port is over), and with room for one more below max (5).
    const settled = await waitFor('the pool settled', async () => {
      const [a, b] = [await poolSize(), unclaimed('node-1').length];
      return a === b && a >= 3 && a < 5 ? a : undefined;
    });
    env.sim.sim.faults.resetCounters();
    await env.client.delete(resources.pods, 'w1', 'warm');
    await waitFor('the pool of node-1 holds it', async () => (await poolSize()) === settled + 1);
    assert.ok(env.sim.sim.neutron.ports.has(w1.portId), 'the port was deleted, not pooled');
    assert.deepEqual(neutronCalls(), {}, 'a pod delete made Neutron requests');
    await env.client.create(resources.pods, podBody('warm', 'w2', 'node-1'), { namespace: 'warm' });
    const { pod, vif } = await wired('w2');
    await claimed(vif.portId, pod.metadata.uid!);
    assert.equal(await poolSize(), settled);
    assert.deepEqual(neutronCalls(), { 'PUT /network/v2.0/ports/{id}': 1 }, 'one update: the claim');
    // One Kubernetes write for a warm hit: its VIF, no Event. The cold path says why it created a port.
    assert.deepEqual(await reasons('w2'), []);
    const [created] = await events('seed');
    assert.equal(created?.reason, 'PortCreated');
    assert.match(created.message ?? '', /the warm pool of node node-1 had no free port/);
  });

  it('a forged VIF naming a free pool port is rewritten, and the port stays free', async () => {
    const { pod, vif } = await wired('w2');
    const [free] = unclaimed('node-1');
    assert.ok(free);
    const forged = formatVif({ ...vif, portId: free.id, mac: free.mac_address });
    await env.client.patch(
      resources.pods,
      'w2',
      'warm',
      { metadata: { annotations: { [VIF_ANNOTATION]: forged } } },
      'merge',
    );
    await waitFor('rewritten', async () => {
      const now = parseVif((await env.client.get(resources.pods, 'w2', 'warm')).metadata.annotations?.[VIF_ANNOTATION]);
      return now?.portId === vif.portId;
    });
    assert.equal(env.sim.sim.neutron.ports.get(free.id)?.device_id, '', 'the forged pool port was claimed');
    assert.equal(env.sim.sim.neutron.ports.get(vif.portId)?.device_id, pod.metadata.uid);
  });

  it('a restart rebuilds pools and assignments from paginated lists only; nothing is re-made', async () => {
    await raven!.stop();
    const before = new Map(portsOf(() => true).map((p) => [p.id, p.device_id]));
    env.sim.sim.faults.resetCounters();
    raven = await startRaven();
    await waitFor('pool sizes known again', async () =>
      (await raven!.composed.metrics.registry.getSingleMetricAsString('raven_port_pool_size')).includes('node-1'),
    );
    const { vif } = await wired('w2');
    assert.ok(before.has(vif.portId));
    const writes = Object.entries(neutronCalls()).filter(([route]) => !route.startsWith('GET '));
    assert.deepEqual(writes, [], 'a restart wrote to Neutron');
    assert.deepEqual(new Map(portsOf(() => true).map((p) => [p.id, p.device_id])), before);
  });

  it('a Node deleted: its pools are emptied; a namespace deleted: its pools, then its network, go', async () => {
    await env.client.create(resources.pods, podBody('warm', 'n2', 'node-2'), { namespace: 'warm' });
    await wired('n2');
    await waitFor('a pool on node-2', () => unclaimed('node-2').length >= 3);
    await env.client.delete(resources.pods, 'n2', 'warm');
    await env.client.delete(resources.nodes, 'node-2');
    await waitFor('node-2 pool emptied', () => portsOf((p) => p.host_id === 'node-2').length === 0);

    const network = (await env.client.get(resources.namespaces, 'warm')).metadata.annotations?.[
      'raven.openstack.org/network'
    ];
    const { networkId } = JSON.parse(network!) as { networkId: string };
    await env.client.delete(resources.namespaces, 'warm');
    await waitFor('the namespace network torn down', () => !env.sim.sim.neutron.networks.has(networkId), {
      timeoutMs: 30_000,
    });
    assert.deepEqual(
      portsOf(() => true).map((p) => p.name),
      [],
      'pod or pool ports left',
    );
  });
});

describe('warm port pools of a namespace that went before Raven saw it terminate', { timeout: 120_000 }, () => {
  it('its pools drain and its network goes, without the garbage collector', async () => {
    const env = await startEnv(15_151);
    const writer = subresourceWriter({ connection: testConnection(env.server) });
    let raven: { stop(): Promise<void> } | undefined;
    try {
      await env.client.create(resources.nodes, nodeBody('node-1'));
      await env.client.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'fast' },
      });
      raven = await composeInProcess(
        env,
        loadRavenConfig({
          env: { ...ravenSettings('fast', 'namespace'), RAVEN_PORT_POOL_MIN: '3', RAVEN_PORT_POOL_BATCH: '3' },
          // The collector would tear the network down in the end: here it never runs.
          flags: { gc: { intervalSeconds: 3600, graceSeconds: 3600 } },
        }),
      );
      await env.client.create(resources.pods, podBody('fast', 'p', 'node-1'), { namespace: 'fast' });
      const ns = await waitFor('the namespace network', async () => {
        const got = await env.client.get(resources.namespaces, 'fast');
        return got.metadata.annotations?.['raven.openstack.org/network'] ? got : undefined;
      });
      const { networkId } = JSON.parse(ns.metadata.annotations!['raven.openstack.org/network']!) as {
        networkId: string;
      };
      const onNetwork = () => [...env.sim.sim.neutron.ports.values()].filter((p) => p.network_id === networkId);
      await waitFor('a full pool beside the pod', () => onNetwork().filter((p) => p.device_id === '').length >= 3);
      await env.client.delete(resources.pods, 'p', 'fast');

      // Raven's namespace reconcile finds the namespace gone from its cache, never having seen it Terminating: a
      // namespace without finalizers goes at once (here), as one finalized while Raven's queue was busy does.
      await env.client.delete(resources.namespaces, 'fast');
      const left = (await env.client.list(resources.namespaces)).items.find((n) => n.metadata.name === 'fast');
      if (left) await writer.replace(resources.namespaces, 'fast', undefined, 'finalize', { ...left, spec: {} });

      await waitFor('the pool drained and the network torn down', () => !env.sim.sim.neutron.networks.has(networkId), {
        timeoutMs: 30_000,
      });
      assert.deepEqual(onNetwork(), []);
    } finally {
      await raven?.stop();
      await writer.close();
      await env.stop();
    }
  });
});
