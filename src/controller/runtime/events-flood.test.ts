/**
 * Issue 13's Event test at the controller: 20 pods waiting on quota for 60 s (a reconciler that throws what the pod
 * reconciler throws on Neutron's OverQuota: a `QuotaExceeded` RetryableError whose cause carries a new request id at
 * every attempt), on a FakeClock, against the embedded API server. Before: one Event object per attempt.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, RavenError, silentLogger, type Logger } from '../../core/index.ts';
import type { Event, Pod } from '../../kube/api/index.ts';
import { SharedInformer } from '../../kube/cache/index.ts';
import { KubeClient, resources } from '../../kube/client/index.ts';
import { pod } from '../../../test/support/api.ts';
import { startTestServer, type TestServer, testConnection } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { openWatch } from '../../../test/support/watch.ts';
import { EventRecorder } from '../events/index.ts';
import { Controller } from './controller.ts';
import { RetryableError, type Reconciler } from './result.ts';

const PODS = 20;
const SECONDS = 60;
const NS = 'quota';

describe('Events of 20 pods waiting on quota for 60 s', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: KubeClient;

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({ connection: testConnection(server), qps: 5_000, burst: 5_000 });
  });
  after(async () => {
    await client.close();
    await server.stop();
  });

  it('one Event object per pod whose count grows; no request id in it, each in the log; few writes', async () => {
    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const watch = await openWatch(server, `/api/v1/namespaces/${NS}/events?watch=true`, { maxMs: 100_000 });
    for (let i = 0; i < PODS; i++) await client.create(resources.pods, pod(`waiting-${i}`), { namespace: NS });
    const informer = new SharedInformer<Pod>({ client, resource: resources.pods, namespace: NS });
    const stop = new AbortController();
    const informerDone = informer.run(stop.signal);
    assert.ok(await informer.waitForSync(AbortSignal.timeout(10_000)));

    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const recorder = new EventRecorder({ client, component: 'raven-test', clock });
    const logged: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (obj) => void logged.push(String((obj as { err?: unknown }).err)),
      child: () => logger,
    };
    const attempts = new Map<string, number>();
    const reconcile: Reconciler = (key) => {
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
      // What OpenStackError is to the controller: a message, and the request id beside it.
      const cause = new RavenError(
        'OPENSTACK_CONFLICT',
        "network POST /v2.0/ports: 409 OverQuota: Quota exceeded for resources: ['port'].",
        {
          requestId: `req-${randomUUID()}`,
        },
      );
      throw new RetryableError(
        'QuotaExceeded',
        `Neutron port quota exceeded creating the port of pod ${key}: ${cause.message}`,
        {
          cause,
          maxRetryDelayMs: 30_000,
        },
      );
    };
    const controller = new Controller({ name: 'pods', for: informer, reconcile, clock, recorder, workers: 4, logger });
    const done = controller.start(stop.signal);
    try {
      await waitFor('every pod tried once', () => attempts.size === PODS);
      for (let s = 0; s < SECONDS; s++) {
        clock.advance(1000);
        // The retries that fell due run (the reconciler throws at once), before time moves on.
        await waitFor('the due retries run', () => controller.queueLength() === 0);
        await new Promise((r) => setImmediate(r));
      }
      await recorder.flush(AbortSignal.timeout(10_000));
      const total = [...attempts.values()].reduce((a, b) => a + b, 0);

      const events = (await client.listAll<Event>(resources.events, { namespace: NS })).items;
      assert.ok(events.length <= PODS * 2, `${events.length} Event objects`);
      for (let i = 0; i < PODS; i++) {
        const key = `${NS}/waiting-${i}`;
        const mine = events.filter((e) => e.involvedObject.name === `waiting-${i}`);
        // The message is the same at every attempt, so one Event carries them all.
        assert.equal(mine.length, 1, `${key}: ${mine.length} Event objects`);
        const [event] = mine;
        assert.equal(event!.reason, 'QuotaExceeded');
        assert.equal(event!.count, attempts.get(key), `${key}: the Event's count is its attempts`);
        assert.ok(event!.count >= 10, `${key}: count ${event!.count}`);
        assert.doesNotMatch(event!.message, /req-/);
        assert.match(
          event!.message,
          /^Neutron port quota exceeded creating the port of pod quota\/waiting-\d+: network/,
        );
      }
      // The ids stay in the log, one per attempt.
      assert.equal(logged.filter((l) => /\(request req-[0-9a-f-]{36}\)$/.test(l)).length, total);

      // Writes: one create per pod, then at most one patch per pod per 10 s (and the final flush).
      const writes = await watch.drain(500);
      const added = writes.filter((w) => w.type === 'ADDED').length;
      const modified = writes.filter((w) => w.type === 'MODIFIED').length;
      assert.equal(added, PODS);
      assert.ok(modified <= PODS * (SECONDS / 10 + 1), `${modified} patches`);
      process.stdout.write(
        `# ${PODS} pods × ${SECONDS} s on quota: ${total} failed attempts → ${events.length} Event objects, ${added} creates + ${modified} patches\n`,
      );
    } finally {
      watch.close();
      stop.abort();
      await done;
      await informerDone;
      await recorder.close();
    }
  });
});
