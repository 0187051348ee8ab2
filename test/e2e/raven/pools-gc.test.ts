/**
 * Issue 28: warm pools on an operator's pod subnet (`subnets.shared.subnetIds`) and the garbage collector. The
 * network and subnet are the test's, without Raven's tags; Raven (`composeInProcess`, as `raven run` builds it) sweeps
 * every second with no grace age. The pool must keep its ports across the sweeps, the collector deleting none of them
 * and no delete finding its port already gone (the simulator counts error answers by route and status); and, with
 * Neutron-like latency, a wave of pods must refill and then trim that pool with nothing left untagged. (A refill cut by
 * its reconcile's timeout, and a trim longer than one: `src/reconcilers/pod/pool-reconciler.test.ts`.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { POD_DEVICE_OWNER } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, podBody, ravenSettings, startEnv, waitForPort, type Env } from './support.ts';

const CLUSTER = 'poolsgc';

describe("warm pools on an operator's subnet and the garbage collector", { timeout: 180_000 }, () => {
  let env: Env;
  let raven: { composed: ComposedRaven; stop(): Promise<void> } | undefined;

  before(async () => {
    env = await startEnv(28_028);
    const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } };
    await env.client.create(resources.nodes, node);
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'op' } });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  /** A metric's value for the sample whose labels include `labels` (0 when there is none). */
  const metric = async (name: string, labels: string): Promise<number> => {
    const text = await raven!.composed.metrics.registry.getSingleMetricAsString(name);
    const line = text.split('\n').find((l) => l.startsWith(name) && l.includes(labels));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const poolPorts = () =>
    [...env.sim.sim.neutron.ports.values()].filter(
      (p) => p.device_owner === POD_DEVICE_OWNER && p.name === `raven/${CLUSTER}/pool/node-1/shared`,
    );

  it('keeps its pool across sweeps: no pool port deleted by the collector, no DELETE 404', async () => {
    // The operator's network and subnet: none of Raven's tags.
    const network = await env.neutron.networks.create({ name: 'operators-pods' });
    const subnet = await env.neutron.subnets.create({ network_id: network.id, cidr: '10.250.0.0/16', ip_version: 4 });
    const { RAVEN_POD_SUBNET_CIDR: _, ...settings } = ravenSettings(CLUSTER, 'shared');
    raven = await composeInProcess(
      env,
      loadRavenConfig({
        env: {
          ...settings,
          RAVEN_POD_SUBNET_ID: subnet.id,
          RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
          RAVEN_PORT_POOL_MIN: '3',
          RAVEN_PORT_POOL_MAX: '5',
          RAVEN_PORT_POOL_BATCH: '3',
        },
        flags: { gc: { intervalSeconds: 1, graceSeconds: 0 } },
      }),
    );
    // The node's first pod takes the cold path; its pool is then filled to min.
    await env.client.create(resources.pods, podBody('op', 'seed', 'node-1'), { namespace: 'op' });
    await waitForPort(env.client, 'op', 'seed');
    const pool = await waitFor('the pool of node-1 filled to min', () => {
      const free = poolPorts();
      return free.length >= 3 ? free.map((p) => p.id) : undefined;
    });
    for (const id of pool) assert.equal(env.sim.sim.neutron.ports.get(id)?.network_id, network.id);
    env.sim.sim.faults.resetCounters();
    const runs = await metric('raven_gc_runs_total', 'result="success"');
    await waitFor(
      'four more sweeps',
      async () => (await metric('raven_gc_runs_total', 'result="success"')) >= runs + 4,
      {
        timeoutMs: 60_000,
      },
    );

    const deletedByGc = await metric('raven_gc_deleted_total', 'resource="port"');
    const left = pool.filter((id) => env.sim.sim.neutron.ports.has(id));
    const errors = env.sim.sim.faults.errors();
    assert.deepEqual(
      { deletedByGc, poolPortsLeft: left.length, deleteNotFound: errors['DELETE /network/v2.0/ports/{id} 404'] ?? 0 },
      { deletedByGc: 0, poolPortsLeft: pool.length, deleteNotFound: 0 },
      `errors: ${JSON.stringify(errors)}`,
    );
  });

  it('under a slow Neutron, a wave of pods refills and then trims the pool: nothing left untagged or above max', async () => {
    const seed = (await env.client.get(resources.pods, 'seed', 'op')).metadata.uid;
    const names = Array.from({ length: 8 }, (_, i) => `wave-${i}`);
    env.sim.sim.faults.resetCounters();
    env.sim.sim.faults.addRule({ path: '/network/', latency: { p50Ms: 100, p99Ms: 400 } });
    try {
      for (const name of names)
        await env.client.create(resources.pods, podBody('op', name, 'node-1'), { namespace: 'op' });
      for (const name of names) await waitForPort(env.client, 'op', name, 60_000);
      for (const name of names) await env.client.delete(resources.pods, name, 'op');
      // Every port of the wave is free again: the pool is trimmed back to max (5).
      const mine = () =>
        [...env.sim.sim.neutron.ports.values()].filter(
          (p) => p.device_owner === POD_DEVICE_OWNER && p.network_id === subnetNetwork,
        );
      const subnetNetwork = env.sim.sim.neutron.ports.get(await waitForPort(env.client, 'op', 'seed'))!.network_id;
      await waitFor(
        'the pool trimmed to max',
        () => {
          const free = mine().filter((p) => p.device_id !== seed);
          return free.length >= 3 && free.length <= 5;
        },
        { timeoutMs: 60_000 },
      );
      const untagged = mine().filter((p) => !p.tags.includes(`raven.cluster=${CLUSTER}`));
      const errors = env.sim.sim.faults.errors();
      assert.deepEqual(
        {
          untagged: untagged.length,
          deletedByGc: await metric('raven_gc_deleted_total', 'resource="port"'),
          deleteNotFound: errors['DELETE /network/v2.0/ports/{id} 404'] ?? 0,
        },
        { untagged: 0, deletedByGc: 0, deleteNotFound: 0 },
        `errors: ${JSON.stringify(errors)}`,
      );
    } finally {
      env.sim.sim.faults.clearRules();
    }
  });
});
