import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { WorkQueue } from './queue.ts';

/** Resolves whether `p` has settled, after letting pending microtasks run. */
async function settled<T>(p: Promise<T>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

async function getKey(q: WorkQueue): Promise<string> {
  const r = await q.get();
  assert.equal(r.shutdown, false);
  return (r as { key: string }).key;
}

describe('WorkQueue', () => {
  it('hands keys out first-in first-out and dedups keys already waiting', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('c');
    q.add('b');
    assert.equal(q.len(), 3);
    assert.deepEqual([await getKey(q), await getKey(q), await getKey(q)], ['a', 'b', 'c']);
    assert.equal(q.len(), 0);
  });

  it('never hands a key being processed to a second worker; an add meanwhile is parked until done', async () => {
    const q = new WorkQueue();
    q.add('a');
    assert.equal(await getKey(q), 'a');
    q.add('a'); // parked: 'a' is processing
    q.add('a'); // still one
    assert.equal(q.len(), 0);
    const second = q.get();
    assert.equal(await settled(second), false, 'a second worker must not get the key in flight');
    q.done('a');
    assert.deepEqual(await second, { key: 'a', shutdown: false });
    q.done('a');
    assert.equal(q.len(), 0, 'parked once, re-queued once');
  });

  it('does not re-queue on done when nothing was added during processing', async () => {
    const q = new WorkQueue();
    q.add('a');
    await getKey(q);
    q.done('a');
    assert.equal(q.len(), 0);
    assert.equal(await settled(q.get()), false);
  });

  it('queues a parked key behind keys added before its done', async () => {
    const q = new WorkQueue();
    q.add('a');
    await getKey(q);
    q.add('a');
    q.add('b');
    q.done('a');
    assert.deepEqual([await getKey(q), await getKey(q)], ['b', 'a']);
  });

  it('serves waiting workers in the order they asked', async () => {
    const q = new WorkQueue();
    const first = q.get();
    const second = q.get();
    q.add('x');
    q.add('y');
    assert.deepEqual(await first, { key: 'x', shutdown: false });
    assert.deepEqual(await second, { key: 'y', shutdown: false });
  });

  it('rejects get when its signal aborts, without taking a key', async () => {
    const q = new WorkQueue();
    const ac = new AbortController();
    const waiting = q.get(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    q.add('a');
    assert.equal(q.len(), 1, 'the aborted waiter took nothing');
    await assert.rejects(q.get(AbortSignal.abort(new Error('already'))), /already/);
    assert.equal(await getKey(q), 'a');
  });

  it('ignores done for a key that is not processing (no duplicate in the queue)', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.done('a');
    assert.equal(q.len(), 1);
    await getKey(q);
    q.done('a');
    q.done('a');
    assert.equal(q.len(), 0);
  });

  describe('shutDown', () => {
    it('resolves waiting workers with shutdown and ignores later adds', async () => {
      const q = new WorkQueue();
      const waiters = [q.get(), q.get()];
      q.shutDown();
      assert.equal(q.shuttingDown(), true);
      assert.deepEqual(await Promise.all(waiters), [{ shutdown: true }, { shutdown: true }]);
      q.add('late');
      assert.equal(q.len(), 0);
      assert.deepEqual(await q.get(), { shutdown: true });
    });

    it('still hands out what was queued before, then shutdown', async () => {
      const q = new WorkQueue();
      q.add('a');
      q.add('b');
      q.shutDown();
      assert.deepEqual([await getKey(q), await getKey(q)], ['a', 'b']);
      assert.deepEqual(await q.get(), { shutdown: true });
    });

    it('re-queues a key parked before shutdown when its worker is done', async () => {
      const q = new WorkQueue();
      q.add('a');
      await getKey(q);
      q.add('a');
      q.shutDown();
      q.done('a');
      assert.equal(await getKey(q), 'a');
      q.done('a');
      assert.deepEqual(await q.get(), { shutdown: true });
    });
  });

  describe('shutDownWithDrain', () => {
    it('resolves true at once when nothing is in flight', async () => {
      const q = new WorkQueue({ clock: new FakeClock() });
      assert.equal(await q.shutDownWithDrain(), true);
      assert.equal(q.shuttingDown(), true);
    });

    it('waits for every in-flight key to be done', async () => {
      const q = new WorkQueue({ clock: new FakeClock() });
      q.add('a');
      q.add('b');
      await getKey(q);
      await getKey(q);
      const drained = q.shutDownWithDrain({ timeoutMs: 10_000 });
      q.add('c');
      assert.equal(q.len(), 0, 'adds are ignored while draining');
      q.done('a');
      assert.equal(await settled(drained), false, "'b' is still in flight");
      q.done('b');
      assert.equal(await drained, true);
    });

    it('gives up at its deadline on the injected clock', async () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.add('a');
      await getKey(q);
      const drained = q.shutDownWithDrain({ timeoutMs: 5000 });
      clock.advance(4999);
      assert.equal(await settled(drained), false);
      clock.advance(1);
      assert.equal(await drained, false);
      assert.equal(clock.pending, 0);
    });

    it('gives up when its signal aborts, or when shutDown cuts it short', async () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.add('a');
      await getKey(q);
      const ac = new AbortController();
      const first = q.shutDownWithDrain({ signal: ac.signal });
      ac.abort();
      assert.equal(await first, false);
      const second = q.shutDownWithDrain({ timeoutMs: 1000 });
      q.shutDown();
      assert.equal(await second, false);
      assert.equal(clock.pending, 0, 'the deadline timer is cleared');
    });
  });

  it('reports depth, adds, latency, work duration and in-flight time on the injected clock', async () => {
    const clock = new FakeClock();
    const seen: Record<string, number[]> = {};
    const rec = (name: string) => (n?: number) => (seen[name] ??= []).push(n ?? 1);
    const q = new WorkQueue({
      clock,
      metrics: { depth: rec('depth'), adds: rec('adds'), latency: rec('latency'), workDuration: rec('work') },
    });
    q.add('a');
    q.add('a'); // deduped: no metric
    q.add('b');
    clock.advance(30);
    await getKey(q); // a waited 30
    clock.advance(10);
    await getKey(q); // b waited 40
    clock.advance(5);
    q.done('a'); // held 15
    assert.deepEqual(seen, { depth: [1, 2, 1, 0], adds: [1, 1], latency: [30, 40], work: [15] });

    const inflight: number[] = [];
    const q2 = new WorkQueue({
      clock,
      metrics: { unfinishedWork: (ms) => inflight.push(ms), longestRunning: (ms) => inflight.push(ms) },
    });
    q2.add('x');
    q2.add('y');
    await getKey(q2);
    clock.advance(100);
    await getKey(q2);
    clock.advance(20);
    q2.updateUnfinishedWork();
    assert.deepEqual(inflight, [140, 120]);
  });
});
