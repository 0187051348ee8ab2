/**
 * Issue 28: warm pools sized by demand, with Raven's default pool settings. Raven (`composeInProcess`, as `raven run`
 * builds it) on the embedded API server and the OpenStack simulator with Neutron-like latency; two Nodes that already
 * run pods. A namespace's pools are filled when its network is made, before its first pod; a wave of pods created
 * then deleted leaves its ports in the pools (kept while the pools are in use), so a second wave is served from them
 * — every pod a port that existed before it — and no port is deleted across both waves (none made for nothing). What
 * is asserted is state: which ports pods got, and the ports in the simulator (its counter for the deletes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { POD_DEVICE_OWNER } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, inParallel, podBody, ravenSettings, startEnv, waitForPort, type Env } from './support.ts';

const CLUSTER = 'poolsadapt';
const NODES = ['node-1', 'node-2'];
/** Pods per wave: 10 per node, more than the default floor (2) and than the static default max (8) of main. */
const WAVE = 20;

describe('warm pools sized by demand (default settings)', { timeout: 300_000 }, () => {
  let env: Env;
  let raven: { composed: ComposedRaven; stop(): Promise<void> } | undefined;

  before(async () => {
    env = await startEnv(28_281);
    for (const name of NODES)
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'base' } });
    raven = await composeInProcess(
      env,
      loadRavenConfig({
        // No pool size given: Raven's defaults. Pools key no group set without the NetworkPolicy translation.
        env: { ...ravenSettings(CLUSTER, 'namespace'), RAVEN_TRANSLATE_NETWORK_POLICIES: 'false' },
        // No sweep while the waves run (its lists would be Neutron requests too); grace 0: a gone pod's port is free.
        flags: { gc: { intervalSeconds: 3600, graceSeconds: 0 } },
      }),
    );
    // The cluster's nodes run pods already: one each.
    for (const node of NODES)
      await env.client.create(resources.pods, podBody('base', `base-${node}`, node), { namespace: 'base' });
    for (const node of NODES) await waitForPort(env.client, 'base', `base-${node}`, 60_000);
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  /** A metric's samples, summed over those whose labels include `labels`. */
  const metric = async (name: string, labels: string): Promise<number> => {
    const text = await raven!.composed.metrics.registry.getSingleMetricAsString(name);
    return text
      .split('\n')
      .filter((l) => l.startsWith(name) && l.includes(labels))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };
  /** Raven's pod ports on the `wave` namespace's network (known once its first port is). */
  let network: string | undefined;
  const ports = () =>
    [...env.sim.sim.neutron.ports.values()].filter(
      (p) => p.device_owner === POD_DEVICE_OWNER && network !== undefined && p.network_id === network,
    );
  /**
   * The controllers settled: no pod, claim or pool key queued or in work, and every port on the network free in
   * Raven's pools (a freed port keeps its old pod's `device_id` until the next claim) — twice in a row, 200 ms apart,
   * with the same ports.
   */
  const settled = async () => {
    let last = '';
    await waitFor(
      'the controllers settled',
      async () => {
        let busy = 0;
        for (const c of ['pod', 'port-claim', 'port-pool'])
          busy +=
            (await metric('workqueue_depth', `name="${c}"`)) +
            (await metric('controller_runtime_active_workers', `controller="${c}"`));
        const now = ports();
        const state = now
          .map((p) => p.id)
          .sort()
          .join(',');
        const free = await metric('raven_port_pool_size', 'namespace="wave"');
        const quiet = busy === 0 && free === now.length && state === last;
        last = state;
        if (!quiet) await new Promise((r) => setTimeout(r, 200));
        return quiet;
      },
      { timeoutMs: 120_000 },
    );
  };
  /** A wave: WAVE pods (round-robin over the nodes) created, each wired; returns each pod's port. */
  const wave = async (prefix: string): Promise<string[]> => {
    const names = Array.from({ length: WAVE }, (_, i) => `${prefix}-${i}`);
    await inParallel(names, 8, async (name) => {
      const i = Number(name.split('-').at(-1));
      await env.client.create(resources.pods, podBody('wave', name, NODES[i % NODES.length]), {
        namespace: 'wave',
      });
    });
    const got: string[] = [];
    for (const name of names) got.push(await waitForPort(env.client, 'wave', name, 120_000));
    return got;
  };
  const deleteWave = async (prefix: string) => {
    await inParallel(
      Array.from({ length: WAVE }, (_, i) => `${prefix}-${i}`),
      8,
      (name) => env.client.delete(resources.pods, name, 'wave'),
    );
  };

  it("a namespace's pools are filled when its network is made, on the nodes that run pods", async () => {
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wave' } });
    network = await waitFor('the namespace network made', async () => {
      const ns = await env.client.get(resources.namespaces, 'wave');
      const uid = ns.metadata.uid!;
      return [...env.sim.sim.neutron.networks.values()].find((n) => n.tags.some((t) => t.endsWith(`=${uid}`)))?.id;
    });
    // Filled by one bulk create each: the floor (2), at least a batch (4).
    const byNode = await waitFor(
      'each node’s pool of the namespace filled, no pod of it yet',
      () => {
        const free = ports().filter((p) => p.device_id === '' && p.tags.includes(`raven.cluster=${CLUSTER}`));
        const counts = NODES.map((node) => free.filter((p) => p.host_id === node).length);
        return counts.every((n) => n >= 4) ? counts : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(byNode, [4, 4]);
  });

  it('a second wave is served from the ports the first gave back: no port created and deleted for nothing', async () => {
    env.sim.sim.faults.addRule({ path: '/network/', latency: { p50Ms: 100, p99Ms: 400 } });
    try {
      env.sim.sim.faults.resetCounters();
      await wave('one');
      await deleteWave('one');
      await settled();
      const before = new Set(ports().map((p) => p.id));

      const got = await wave('two');
      const cold = got.filter((id) => !before.has(id));
      assert.deepEqual(cold, [], 'every pod of the second wave got a port that was in its pool');
      await deleteWave('two');
      await settled();
      const after = ports();
      const counters = env.sim.sim.faults.counters();
      // A refill the second wave's takes asked for (its lead) may add ports: they stay, as every port of the first.
      assert.deepEqual(
        {
          deleted: counters['DELETE /network/v2.0/ports/{id}'] ?? 0,
          keptAll: [...before].every((id) => after.some((p) => p.id === id)),
          untagged: after.filter((p) => !p.tags.includes(`raven.cluster=${CLUSTER}`)).length,
        },
        { deleted: 0, keptAll: true, untagged: 0 },
        `ports before the second wave ${before.size}, after it ${after.length}`,
      );
    } finally {
      env.sim.sim.faults.clearRules();
    }
  });
});
