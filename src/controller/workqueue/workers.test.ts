import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { RateLimitingQueue } from './rate-limiting-queue.ts';
import { WorkQueue } from './queue.ts';

/** A small seeded PRNG (mulberry32), so a failing interleaving can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

async function yields(rand: () => number, max: number): Promise<void> {
  const n = Math.floor(rand() * (max + 1));
  for (let i = 0; i < n; i++) {
    if (rand() < 0.5) await Promise.resolve();
    else await tick();
  }
}

interface Tally {
  seq: number;
  inFlight: Set<string>;
  lastAdd: Map<string, number>;
  lastStart: Map<string, number>;
  processed: number;
  overlaps: string[];
}

function newTally(): Tally {
  return { seq: 0, inFlight: new Set(), lastAdd: new Map(), lastStart: new Map(), processed: 0, overlaps: [] };
}

/** A worker: get, check nobody else holds the key, "reconcile" for a while, done. */
async function worker(q: WorkQueue, t: Tally, rand: () => number, onKey?: (key: string) => void): Promise<void> {
  for (;;) {
    const r = await q.get();
    if (r.shutdown) return;
    if (t.inFlight.has(r.key)) t.overlaps.push(r.key);
    t.inFlight.add(r.key);
    t.lastStart.set(r.key, ++t.seq);
    t.processed++;
    try {
      await yields(rand, 3);
      onKey?.(r.key);
    } finally {
      t.inFlight.delete(r.key);
      q.done(r.key);
    }
  }
}

function checkTally(t: Tally, keys: string[]): void {
  assert.deepEqual(t.overlaps, [], 'a key was handed to two workers at once');
  for (const key of keys) {
    const added = t.lastAdd.get(key)!;
    const started = t.lastStart.get(key);
    assert.ok(started !== undefined && started > added, `the last add of ${key} (#${added}) was never processed`);
  }
}

describe('WorkQueue under concurrent workers', () => {
  it('processes every key, never on two workers at once, and sees every final add', async () => {
    const rand = prng(42);
    const q = new WorkQueue();
    const t = newTally();
    const keys = Array.from({ length: 1000 }, (_, i) => `ns/k${i}`);
    const workers = Array.from({ length: 16 }, () => worker(q, t, rand));

    let adds = 0;
    for (let round = 0; round < 20; round++) {
      for (const key of keys) {
        if (rand() < 0.5) continue;
        q.add(key);
        t.lastAdd.set(key, ++t.seq);
        adds++;
        if (rand() < 0.05) await yields(rand, 2);
      }
    }
    for (const key of keys) {
      q.add(key);
      t.lastAdd.set(key, ++t.seq);
      adds++;
    }
    assert.equal(await q.shutDownWithDrain(), true);
    await Promise.all(workers);

    checkTally(t, keys);
    assert.ok(t.processed >= keys.length && t.processed <= adds, `processed ${t.processed} for ${adds} adds`);
    assert.ok(t.processed < adds, 'dedup merged some adds');
    assert.equal(q.len(), 0);
  });

  it('holds with rate-limited retries and delayed adds on a fake clock', async () => {
    const rand = prng(7);
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    const t = newTally();
    const keys = Array.from({ length: 1000 }, (_, i) => `ns/k${i}`);
    // A reconcile that fails a third of the time re-adds its key rate-limited (that add also counts as "last").
    let failing = true;
    const failOrForget = (key: string) => {
      if (failing && rand() < 0.33) {
        q.addRateLimited(key);
        t.lastAdd.set(key, ++t.seq);
      } else q.forget(key);
    };
    const workers = Array.from({ length: 8 }, () => worker(q, t, rand, failOrForget));

    for (let round = 0; round < 10; round++) {
      for (const key of keys) {
        const r = rand();
        if (r < 0.3) q.add(key);
        else if (r < 0.5) q.addAfter(key, Math.floor(rand() * 50));
        else continue;
        t.lastAdd.set(key, ++t.seq);
      }
      clock.advance(10);
      await yields(rand, 3);
    }
    // Let retries play out for a while, then stop failing and run the clock until nothing is left to do.
    for (let i = 0; i < 20; i++) {
      clock.advance(50);
      await yields(rand, 3);
    }
    failing = false;
    let idle = 0;
    for (let i = 0; i < 10_000 && idle < 3; i++) {
      clock.advance(1000);
      await tick();
      idle = q.len() === 0 && q.waitingLen() === 0 && t.inFlight.size === 0 ? idle + 1 : 0;
    }
    assert.equal(idle, 3, 'the queue settled');
    assert.equal(await q.shutDownWithDrain(), true);
    await Promise.all(workers);
    checkTally(
      t,
      keys.filter((k) => t.lastAdd.has(k)),
    );
    assert.ok(t.processed > 1000);
  });
});
