import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, silentLogger, type Logger } from '../../core/index.ts';
import { KubeClient, resources } from '../../kube/client/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../../test/support/server.ts';
import type { Event } from '../../kube/api/index.ts';
import { EventRecorder } from './index.ts';
import { eventName } from './recorder.ts';
import { openWatch } from '../../../test/support/watch.ts';

function capturingLogger(lines: { level: string; obj: object; msg?: string }[]): Logger {
  const make = (): Logger => ({
    debug: (obj, msg) => void lines.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
    child: () => make(),
  });
  return make();
}

describe('EventRecorder against the API server', { timeout: 60_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const recorders: EventRecorder[] = [];

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({
      connection: testConnection(server),
    });
  });
  after(async () => {
    for (const r of recorders) await r.close(AbortSignal.timeout(5000));
    await client.close();
    await server.stop();
  });

  function recorder(extra: Partial<ConstructorParameters<typeof EventRecorder>[0]> = {}) {
    const r = new EventRecorder({
      client,
      component: 'raven-test',
      instance: 'replica-0',
      logger: silentLogger,
      ...extra,
    });
    recorders.push(r);
    return r;
  }
  async function eventsFor(name: string): Promise<Event[]> {
    const list = await client.list(resources.events, {
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items;
  }

  it('writes one Event with the right fields', async () => {
    const r = recorder();
    r.record(
      { kind: 'Service', apiVersion: 'v1', name: 'web', namespace: 'default', uid: 'uid-web', resourceVersion: '7' },
      'Warning',
      'LoadBalancerFailed',
      'octavia said no',
    );
    await r.flush(AbortSignal.timeout(5000));
    const [ev, ...rest] = await eventsFor('web');
    assert.equal(rest.length, 0);
    assert.match(ev!.metadata.name!, /^web\.[0-9a-f]{16}$/);
    assert.deepEqual(ev!.involvedObject, {
      kind: 'Service',
      apiVersion: 'v1',
      name: 'web',
      namespace: 'default',
      uid: 'uid-web',
      resourceVersion: '7',
    });
    assert.equal(ev!.type, 'Warning');
    assert.equal(ev!.reason, 'LoadBalancerFailed');
    assert.equal(ev!.message, 'octavia said no');
    assert.equal(ev!.count, 1);
    assert.equal(ev!.source.component, 'raven-test');
    assert.equal(ev!.reportingComponent, 'raven-test');
    assert.equal(ev!.reportingInstance, 'replica-0');
    assert.equal(ev!.firstTimestamp, ev!.lastTimestamp);
    assert.match(ev!.firstTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("keeps each object's latest Event: a repeat keeps when it was first said, a Normal one replaces a Warning", () => {
    const clock = new FakeClock(1_000);
    const r = recorder({ clock });
    const svc = { kind: 'Service', apiVersion: 'v1', name: 'api', namespace: 'shop' };
    assert.equal(r.latest('Service', 'shop', 'api'), undefined);
    r.record(svc, 'Warning', 'LoadBalancerStuck', 'pending since …');
    clock.advance(5_000);
    r.record(svc, 'Warning', 'LoadBalancerStuck', 'pending since …', { once: true });
    assert.deepEqual(r.latest('Service', 'shop', 'api'), {
      type: 'Warning',
      reason: 'LoadBalancerStuck',
      message: 'pending since …',
      at: 1_000,
    });
    r.record(svc, 'Normal', 'EnsuredLoadBalancer', 'ACTIVE');
    assert.equal(r.latest('Service', 'shop', 'api')?.type, 'Normal');
    // Another object's Event is its own.
    assert.equal(r.latest('Service', 'shop', 'web'), undefined);
  });

  it('5 identical events become one Event with count 5; different reasons are separate Events', async () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const r = recorder({ clock });
    const obj = { kind: 'Pod', apiVersion: 'v1', name: 'agg', namespace: 'default', uid: 'uid-agg' };
    for (let i = 0; i < 5; i++) {
      r.record(obj, 'Normal', 'PortBound', 'port bound');
      clock.advance(1000);
    }
    r.record(obj, 'Normal', 'PortUnbound', 'port unbound');
    await r.flush(AbortSignal.timeout(5000));
    const events = await eventsFor('agg');
    assert.equal(events.length, 2);
    const bound = events.find((e) => e.reason === 'PortBound')!;
    assert.equal(bound.count, 5);
    assert.equal(bound.firstTimestamp, '2030-01-01T00:00:00Z');
    assert.equal(bound.lastTimestamp, '2030-01-01T00:00:04Z');
    assert.equal(events.find((e) => e.reason === 'PortUnbound')!.count, 1);
  });

  it('the spam filter drops events beyond the burst for one object', async () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const r = recorder({ clock });
    const obj = { kind: 'Pod', name: 'spam', namespace: 'default' };
    for (let i = 0; i < 30; i++) r.record(obj, 'Normal', `R${i}`, 'm');
    await r.flush(AbortSignal.timeout(5000));
    assert.equal((await eventsFor('spam')).length, 25);
    clock.advance(300_000);
    r.record(obj, 'Normal', 'after-refill', 'm');
    await r.flush(AbortSignal.timeout(5000));
    assert.equal((await eventsFor('spam')).length, 26);
  });

  it('repeats within coalesceMs reach the API as one patch with the accumulated count', async () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const r = recorder({ clock, coalesceMs: 10_000 });
    const obj = { kind: 'Pod', apiVersion: 'v1', name: 'coalesced', namespace: 'default', uid: 'uid-c' };
    const watch = await openWatch(
      server,
      '/api/v1/namespaces/default/events?watch=true&fieldSelector=involvedObject.name%3Dcoalesced',
    );
    try {
      // The first occurrence is written at once.
      r.record(obj, 'Warning', 'QuotaExceeded', 'port quota exceeded');
      const [added] = await watch.take(1);
      assert.equal(added!.type, 'ADDED');
      assert.equal((added!.object as unknown as Event).count, 1);
      // 99 more over 9.9 s: nothing is written until 10 s after the first repeat, then one patch carries them all.
      for (let i = 0; i < 99; i++) {
        clock.advance(100);
        r.record(obj, 'Warning', 'QuotaExceeded', 'port quota exceeded');
      }
      clock.advance(199);
      assert.deepEqual(await watch.drain(300), [], 'a repeat was written before its coalescing interval');
      clock.advance(1);
      const [modified, ...more] = await watch.take(1);
      assert.equal(modified!.type, 'MODIFIED');
      const event = modified!.object as unknown as Event;
      assert.equal(event.count, 100);
      assert.equal(event.firstTimestamp, '2030-01-01T00:00:00Z');
      assert.equal(event.lastTimestamp, '2030-01-01T00:00:09Z');
      assert.deepEqual([...more, ...(await watch.drain(300))], []);
      // close() writes what is still waiting.
      r.record(obj, 'Warning', 'QuotaExceeded', 'port quota exceeded');
      await r.close(AbortSignal.timeout(5000));
      const [last] = await watch.take(1);
      assert.equal((last!.object as unknown as Event).count, 101);
    } finally {
      watch.close();
    }
  });

  it("an object name of 253 characters: the Event's name is cut to fit, the same cut for each of its Events", async () => {
    const r = recorder();
    // A DNS subdomain whose cut would end in '-': the name must not.
    const long = `${'a'.repeat(235)}-${'b'.repeat(17)}`;
    assert.equal(long.length, 253);
    const obj = { kind: 'Pod', apiVersion: 'v1', name: long, namespace: 'default', uid: 'uid-long' };
    r.record(obj, 'Warning', 'PortNameTooLong', 'x');
    r.record(obj, 'Normal', 'Other', 'y');
    await r.flush(AbortSignal.timeout(5000));
    const events = await eventsFor(long);
    assert.equal(events.length, 2);
    for (const e of events) {
      assert.match(e.metadata.name!, /^a{235}\.[0-9a-f]{16}$/);
      assert.equal(e.involvedObject.name, long);
    }
    assert.equal(eventName('web', 255n), 'web.00000000000000ff');
  });

  it('a write the spam filter dropped is counted: the next one that passes carries the true count', async () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const r = recorder({ clock, spamBurst: 1, spamQps: 1 / 60, coalesceMs: 1000 });
    const obj = { kind: 'Pod', apiVersion: 'v1', name: 'spammed', namespace: 'default', uid: 'uid-s' };
    assert.equal(r.record(obj, 'Warning', 'R', 'm'), true);
    r.record(obj, 'Warning', 'R', 'm');
    clock.advance(1000); // the patch is due, and dropped: the bucket is empty
    await r.flush(AbortSignal.timeout(5000));
    assert.deepEqual(
      (await eventsFor('spammed')).map((e) => e.count),
      [1],
    );
    clock.advance(59_000);
    r.record(obj, 'Warning', 'R', 'm');
    await r.flush(AbortSignal.timeout(5000));
    assert.deepEqual(
      (await eventsFor('spammed')).map((e) => e.count),
      [3],
    );
  });

  it('an API failure is logged with context and never thrown at the caller', async () => {
    const lines: { level: string; obj: object; msg?: string }[] = [];
    const r = recorder({ logger: capturingLogger(lines), maxAttempts: 2, retryDelayMs: 10 });
    const res = await server.request('/_raven/faults/rules', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/api/v1/namespaces/default/events', method: 'POST', count: 2, status: 500 }),
    });
    assert.ok(res.ok, await res.text());
    // record() returns at once (a throw would fail the test here); the write is queued, then fails twice.
    r.record({ kind: 'Pod', name: 'broken', namespace: 'default' }, 'Warning', 'Boom', 'x');
    assert.equal(r.pending, 1);
    await r.flush(AbortSignal.timeout(5000));
    assert.equal(r.pending, 0, 'the failed write is still queued');
    const warnings = lines.filter((l) => l.level === 'warn' && l.msg === 'failed to write an event');
    const attempts = warnings.map((w) => w.obj as { attempt: number; retry: boolean });
    assert.deepEqual(
      attempts.map(({ attempt, retry }) => ({ attempt, retry })),
      [
        { attempt: 1, retry: true },
        { attempt: 2, retry: false },
      ],
    );
    assert.equal((warnings[0]!.obj as { reason: string }).reason, 'Boom');
    assert.match((warnings[0]!.obj as { event: string }).event, /^default\/broken\./);
    assert.deepEqual(await eventsFor('broken'), []);
    // The recorder keeps working after the failure: the next occurrence is written, and it carries the true count.
    r.record({ kind: 'Pod', name: 'broken', namespace: 'default' }, 'Warning', 'Boom', 'y');
    await r.flush(AbortSignal.timeout(5000));
    const events = await eventsFor('broken');
    assert.deepEqual(
      events.map((e) => ({ type: e.type, reason: e.reason, message: e.message, count: e.count })),
      [{ type: 'Warning', reason: 'Boom', message: '(combined from similar events): y', count: 2 }],
    );
  });

  it('cluster-scoped objects get their events in default; close() drops later records', async () => {
    const r = recorder();
    r.record({ kind: 'Node', apiVersion: 'v1', name: 'node-1' }, 'Normal', 'Seen', 'hello');
    await r.close(AbortSignal.timeout(5000));
    r.record({ kind: 'Node', apiVersion: 'v1', name: 'node-1' }, 'Normal', 'Late', 'dropped');
    await r.flush(AbortSignal.timeout(5000));
    const events = await eventsFor('node-1');
    assert.deepEqual(
      events.map((e) => e.reason),
      ['Seen'],
    );
    assert.equal(events[0]!.metadata.namespace, 'default');
  });
});
