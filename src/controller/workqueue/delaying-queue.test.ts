import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { DelayingQueue } from './delaying-queue.ts';

/** Every key the queue would hand out now, each marked done at once. */
async function drainNow(q: DelayingQueue): Promise<string[]> {
  const keys: string[] = [];
  while (q.len() > 0) {
    const r = await q.get();
    if (r.shutdown) break;
    keys.push(r.key);
    q.done(r.key);
  }
  return keys;
}

describe('DelayingQueue', () => {
  it('adds at once when the delay is zero or negative', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.deepEqual(await drainNow(q), ['a', 'b']);
    assert.equal(clock.pending, 0);
  });

  it('adds a key only when its delay has passed', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 100);
    assert.equal(q.len(), 0);
    assert.equal(q.waitingLen(), 1);
    clock.advance(99);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.deepEqual(await drainNow(q), ['a']);
    assert.equal(q.waitingLen(), 0);
  });

  it('keeps the earliest due time: a shorter addAfter brings a key forward', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    assert.equal(q.waitingLen(), 1);
    clock.advance(50);
    assert.deepEqual(await drainNow(q), ['a']);
    clock.advance(100);
    assert.deepEqual(await drainNow(q), [], 'the superseded 100 ms add is gone');
  });

  it('keeps the earliest due time: a longer addAfter does not delay a key', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 50);
    clock.advance(20);
    q.addAfter('a', 100); // due at 120: later than 50, ignored
    clock.advance(30);
    assert.deepEqual(await drainNow(q), ['a']);
    clock.advance(1000);
    assert.deepEqual(await drainNow(q), []);
  });

  it('adds keys in due order, ties first-in first-out, from a single timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('late', 300);
    q.addAfter('tie1', 200);
    q.addAfter('early', 100);
    q.addAfter('tie2', 200);
    for (let i = 0; i < 1000; i++) q.addAfter(`k${i}`, 1000 + (i % 7));
    assert.equal(clock.pending, 1, 'one timer for the earliest key, not one per key');
    clock.advance(250);
    assert.deepEqual(await drainNow(q), ['early', 'tie1', 'tie2']);
    clock.advance(50);
    assert.deepEqual(await drainNow(q), ['late']);
    clock.advance(1000);
    const rest = await drainNow(q);
    assert.equal(rest.length, 1000);
    assert.equal(clock.pending, 0);
  });

  it('hands a delayed key to a waiting worker when it falls due', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    const waiting = q.get();
    q.addAfter('a', 10);
    clock.advance(10);
    assert.deepEqual(await waiting, { key: 'a', shutdown: false });
  });

  it('a delayed add of a key in flight is parked like any add', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.add('a');
    await q.get();
    q.addAfter('a', 10);
    clock.advance(10);
    assert.equal(q.len(), 0, 'parked behind the worker');
    q.done('a');
    assert.deepEqual(await drainNow(q), ['a']);
  });

  it('on shutdown drops waiting keys, clears its timer and ignores addAfter', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 10);
    q.shutDown();
    assert.equal(clock.pending, 0);
    q.addAfter('b', 10);
    q.addAfter('c', 0);
    clock.advance(100);
    assert.deepEqual(await q.get(), { shutdown: true });

    const q2 = new DelayingQueue({ clock });
    q2.addAfter('a', 10);
    assert.equal(await q2.shutDownWithDrain(), true);
    assert.equal(clock.pending, 0);
  });

  it('counts every addAfter as a retry', () => {
    let retries = 0;
    const q = new DelayingQueue({ clock: new FakeClock(), metrics: { retries: () => retries++ } });
    q.addAfter('a', 0);
    q.addAfter('a', 10);
    q.addAfter('b', 10);
    assert.equal(retries, 3);
  });
});
