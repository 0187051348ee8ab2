/**
 * Issue 5 "Faults": the Kubernetes side breaks during a burst — history compacted (watches and relists get 410),
 * watch connections cut (aborted or ended cleanly), pod lists and watches failing with 500 — through the embedded API
 * server's fault API. Raven (in process, strategy `shared`) must end converged: one port per pod, none for pods
 * deleted during the chaos, no duplicates; and clean once everything is deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertConverged,
  createNamespaces,
  createPods,
  deleteAllAndAssertClean,
  deletePods,
  ravenSettings,
  seeded,
  startEnv,
  startRavenInProcess,
  type Env,
} from './support.ts';

const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 4_100_410);
const CLUSTER = 'watch';
const NAMESPACES = ['watch-a', 'watch-b', 'watch-c'];

describe(`Raven under forced 410s and dropped watches (seed ${SEED})`, { timeout: 120_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  const random = seeded(SEED);

  before(async () => {
    env = await startEnv(SEED);
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  async function fault(path: string, body?: unknown): Promise<void> {
    const res = await env.server.request(`/_raven/faults/${path}`, {
      method: 'POST',
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `fault ${path}: ${res.status} ${text}`);
  }

  /** Until stopped: every 100–400 ms (seeded) one of the faults; returns how many of each were injected. */
  function chaos(stop: AbortSignal): Promise<Record<string, number>> {
    const done: Record<string, number> = {};
    const kinds: [string, () => Promise<void>][] = [
      ['compact', () => fault('compact')],
      ['drop-watches abort', () => fault('drop-watches', { mode: 'abort' })],
      ['drop-watches clean', () => fault('drop-watches', { mode: 'clean' })],
      ['pods GET 500 ×2', () => fault('rules', { path: '/api/v1/pods', method: 'GET', count: 2, status: 500 })],
      [
        'compact + drop',
        async () => {
          await fault('compact');
          await fault('drop-watches', { mode: 'abort' });
        },
      ],
    ];
    return (async () => {
      while (!stop.aborted) {
        const [name, inject] = kinds[Math.floor(random() * kinds.length)]!;
        await inject();
        done[name] = (done[name] ?? 0) + 1;
        await sleep(100 + 300 * random(), undefined, { signal: stop }).catch(() => undefined);
      }
      return done;
    })();
  }

  it('converges with one port per pod and none left for deleted pods; then cleans up', async () => {
    await createNamespaces(env.client, NAMESPACES);
    raven = startRavenInProcess(env, ravenSettings(CLUSTER, 'shared'));
    const stop = new AbortController();
    const injected = chaos(stop.signal);
    await createPods(env.client, NAMESPACES, 60, 'one');
    await sleep(300);
    await createPods(env.client, NAMESPACES, 60, 'two');
    // Some pods go during the chaos: some before Raven saw them, some after their ports were made.
    const doomed = ['one', 'two'].flatMap((prefix) =>
      Array.from({ length: 15 }, (_, i) => ({
        namespace: NAMESPACES[(2 * i + 1) % 3]!,
        name: `${prefix}-${2 * i + 1}`,
      })),
    );
    await deletePods(env.client, doomed);
    await createPods(env.client, NAMESPACES, 30, 'three');
    await sleep(1_500);
    stop.abort();
    const faults = await injected;
    const cleared = await env.server.request('/_raven/faults/rules', { method: 'DELETE' });
    assert.equal(cleared.status, 200);

    const counts = await assertConverged(env, CLUSTER, NAMESPACES);
    assert.deepEqual(counts, { pods: 120, ports: 120 });
    process.stdout.write(`# faults injected: ${JSON.stringify(faults)}; converged at ${JSON.stringify(counts)}\n`);
    await deleteAllAndAssertClean(env, CLUSTER, NAMESPACES);
  });
});
