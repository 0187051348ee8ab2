import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { Semaphore } from './interceptors.ts';

/** Lets pending promise continuations run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Semaphore (the per-service limit of OpenStack requests in flight)', () => {
  it('lets `size` holders in, queues the rest in order, and hands a released slot to the next', async () => {
    const sem = new Semaphore(2);
    const first = await sem.acquire();
    await sem.acquire();
    const order: number[] = [];
    const third = sem.acquire().then((release) => (order.push(3), release));
    const fourth = sem.acquire().then((release) => (order.push(4), release));
    await settle();
    assert.deepEqual([order, sem.waiting], [[], 2]);
    first();
    (await third)();
    await fourth;
    assert.deepEqual([order, sem.waiting], [[3, 4], 0]);
  });

  it("many waiters on one signal: one abort listener, gone with the last waiter; an abort rejects that signal's waiters only", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const sem = new Semaphore(1);
      const holder = await sem.acquire();
      const shared = new AbortController();
      const other = new AbortController();
      const queued = Array.from({ length: 30 }, () => sem.acquire(shared.signal));
      const kept = sem.acquire(other.signal);
      assert.equal(getEventListeners(shared.signal, 'abort').length, 1);
      shared.abort(new Error('stopping'));
      for (const p of queued) await assert.rejects(p, /stopping/);
      assert.equal(sem.waiting, 1);
      holder();
      (await kept)();
      assert.equal(getEventListeners(other.signal, 'abort').length, 0, 'the listener left with its last waiter');
      assert.equal(sem.waiting, 0);
      await settle();
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});
