/**
 * Issue 13 "Events a person can read", end to end: Raven in process against the embedded API server and the OpenStack
 * simulator, whose port quota leaves no room for 20 new pods. Every attempt gets Neutron's `OverQuota` with a new
 * request id; the pods' `QuotaExceeded` Events must not carry it (it goes to the log), so each pod has one Event whose
 * count grows. Before: an Event object per attempt (204 for 17 pods in 15 s). The 60 s version on a FakeClock is
 * `src/controller/runtime/events-flood.test.ts`; this one watches the real wiring for 25 s.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { Logger } from '../../../src/core/index.ts';
import type { Event } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { runRaven } from '../../../src/daemon/run-raven.ts';
import { waitFor } from '../../support/wait.ts';
import {
  assertConverged,
  createNamespaces,
  createPods,
  newKubeClient,
  newSession,
  podPorts,
  ravenSettings,
  startEnv,
  type Env,
} from './support.ts';

const CLUSTER = 'events';
const PODS = 20;
const WATCH_MS = 25_000;

/** A logger that keeps the `err` of each warning (where the controller logs a failed reconcile). */
function warningsInto(lines: string[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    error() {},
    warn: (obj) => void lines.push(String((obj as { err?: unknown }).err)),
    child: () => logger,
  };
  return logger;
}

describe('Raven: pods waiting on the port quota get one readable Event each', { timeout: 120_000 }, () => {
  let env: Env;
  let project = '';
  const abort = new AbortController();
  let run: Promise<void> | undefined;

  before(async () => {
    env = await startEnv(7_013_013);
  });
  after(async () => {
    abort.abort();
    await run?.catch(() => undefined);
    if (project) await env.neutron.quotas.reset(project).catch(() => undefined);
    await env.stop();
  });

  it(`${PODS} pods on quota for ${WATCH_MS / 1000} s: at most 2 Events each, counts grow, no request ids`, async () => {
    await createNamespaces(env.client, ['seed', 'waiting']);
    const warnings: string[] = [];
    const client = newKubeClient(env.server);
    const session = newSession(env.cloudsYaml);
    const config = loadRavenConfig({ env: ravenSettings(CLUSTER, 'shared') });
    run = runRaven({ config, logger: warningsInto(warnings), client, session }, abort.signal).finally(async () => {
      await session.close();
      await client.close();
    });
    await createPods(env.client, ['seed'], 1, 'seed');
    await assertConverged(env, CLUSTER, ['seed']);
    const [port] = await podPorts(env.neutron, CLUSTER);
    project = port!.project_id!;
    await env.neutron.quotas.update(project, { port: (await env.neutron.quotas.details(project)).port!.used });
    await createPods(env.client, ['waiting'], PODS, 'waiting');

    const quotaEvents = async () =>
      (await env.client.listAll<Event>(resources.events, { namespace: 'waiting' })).items.filter(
        (e) => e.reason === 'QuotaExceeded',
      );
    const early = await waitFor(
      'a QuotaExceeded Event on every pod',
      async () => {
        const events = await quotaEvents();
        return new Set(events.map((e) => e.involvedObject.name)).size === PODS ? events : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await sleep(WATCH_MS);
    abort.abort(); // Raven stops, and its recorder writes what it has counted
    await run;
    const late = await quotaEvents();

    assert.ok(late.length <= PODS * 2, `${late.length} QuotaExceeded Event objects for ${PODS} pods`);
    for (let i = 0; i < PODS; i++) {
      const name = `waiting-${i}`;
      const mine = late.filter((e) => e.involvedObject.name === name);
      assert.ok(mine.length >= 1 && mine.length <= 2, `${name}: ${mine.length} Events`);
      const before = early.filter((e) => e.involvedObject.name === name).reduce((n, e) => n + e.count, 0);
      const after = mine.reduce((n, e) => n + e.count, 0);
      assert.ok(after > before, `${name}: the count did not grow (${before} → ${after})`);
      for (const e of mine) {
        assert.match(e.message, /^Neutron port quota exceeded creating the port of pod waiting\/waiting-\d+: /);
        assert.doesNotMatch(e.message, /req-/, 'a request id in an Event');
      }
    }
    // The request ids went to the log instead.
    const quotaLines = warnings.filter((l) => l.includes('Neutron port quota exceeded'));
    assert.ok(quotaLines.length > 0);
    assert.ok(
      quotaLines.every((l) => / \(request req-[0-9a-f-]+\)$/.test(l)),
      quotaLines.find((l) => !/\(request req-/.test(l)),
    );
    const total = late.reduce((n, e) => n + e.count, 0);
    process.stdout.write(
      `# ${PODS} pods on quota for ${WATCH_MS / 1000} s: ${total} failed attempts (${quotaLines.length} logged) → ${late.length} Event objects\n`,
    );
  });
});
