import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from '../../../test/support/node-test.ts';
import { Semaphore } from './interceptors.ts';

/** Lets pending promise continuations run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Semaphore (the per-service limit of OpenStack requests in flight)', () => {
  it('serves a critical request queued behind many background ones first, then normal ones, then the rest in order', async () => {
    const sem = new Semaphore(2);
    const held = [await sem.acquire(undefined, 'background'), await sem.acquire(undefined, 'background')];
    const order: string[] = [];
    const releases: (() => void)[] = [];
    let passOn = false;
    const queue = (name: string, priority: 'critical' | 'normal' | 'background') =>
      sem.acquire(undefined, priority).then((release) => {
        order.push(name);
        if (passOn) release();
        else releases.push(release);
      });
    const waiting = [
      ...Array.from({ length: 5 }, (_, i) => queue(`bg${i}`, 'background')),
      queue('normal', 'normal'),
      queue('claim', 'critical'),
    ];
    await settle();
    assert.deepEqual([order, sem.waiting], [[], 7]);
    held[0]!();
    await settle();
    assert.deepEqual(order, ['claim'], 'the claim took the first slot freed, ahead of the 5 background requests');
    // From now on each holder releases at once: the rest go one at a time through one slot, in their order.
    passOn = true;
    releases.shift()!();
    held[1]!();
    await Promise.all(waiting);
    assert.deepEqual(order, ['claim', 'normal', 'bg0', 'bg1', 'bg2', 'bg3', 'bg4']);
    assert.equal(sem.waiting, 0);
  });

  it('keeps `reserved` slots for critical requests: background work never fills them', async () => {
    const sem = new Semaphore(4, 1);
    const background = await Promise.all([0, 1, 2].map(() => sem.acquire(undefined, 'background')));
    let fourth = false;
    const queued = sem.acquire(undefined, 'normal').then((release) => ((fourth = true), release));
    await settle();
    assert.deepEqual([fourth, sem.waiting], [false, 1], 'a non-critical request waits with 3 of 4 slots held');
    const claim = await sem.acquire(undefined, 'critical');
    assert.equal(sem.waiting, 1, 'the critical one took the reserved slot at once');
    claim();
    await settle();
    assert.equal(fourth, false, 'the reserved slot freed is not handed to a non-critical waiter');
    background[0]!();
    (await queued)();
    for (const release of background.slice(1)) release();
    assert.equal(sem.waiting, 0);
    // All free again: 3 shared slots and the reserved one.
    const again = await Promise.all([0, 1, 2].map(() => sem.acquire()));
    await sem.acquire(undefined, 'critical');
    assert.equal(again.length, 3);
  });

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
