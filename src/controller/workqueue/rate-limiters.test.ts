import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, TokenBucket } from '../../core/index.ts';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from './rate-limiters.ts';

function whens(rl: RateLimiter, key: string, n: number): number[] {
  return Array.from({ length: n }, () => rl.when(key));
}

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles per failure from the base, per key, and resets on forget', () => {
    const rl = new ItemExponentialFailureRateLimiter(5, 1000_000);
    assert.deepEqual(whens(rl, 'a', 5), [5, 10, 20, 40, 80]);
    assert.equal(rl.numRequeues('a'), 5);
    assert.deepEqual(whens(rl, 'b', 2), [5, 10], 'keys back off independently');
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    assert.deepEqual(whens(rl, 'a', 2), [5, 10]);
    assert.equal(rl.numRequeues('b'), 2);
  });

  it('caps at the maximum, even after very many failures', () => {
    const rl = new ItemExponentialFailureRateLimiter(1, 1000);
    const ds = whens(rl, 'a', 2000);
    assert.deepEqual(ds.slice(9, 12), [512, 1000, 1000]);
    assert.equal(ds.at(-1), 1000);
  });

  it("defaults to client-go's 5 ms and 1000 s", () => {
    const rl = new ItemExponentialFailureRateLimiter();
    const ds = whens(rl, 'a', 30);
    assert.equal(ds[0], 5);
    assert.equal(ds[17], 5 * 2 ** 17); // 655,360 ms
    assert.equal(ds[18], 1000_000);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('is fast for the first attempts, then slow, until forgotten', () => {
    const rl = new ItemFastSlowRateLimiter(5, 10_000, 3);
    assert.deepEqual(whens(rl, 'a', 5), [5, 5, 5, 10_000, 10_000]);
    assert.equal(rl.numRequeues('a'), 5);
    rl.forget('a');
    assert.equal(rl.when('a'), 5);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spreads the rest at qps', () => {
    const clock = new FakeClock();
    const rl = new BucketRateLimiter(new TokenBucket({ qps: 10, burst: 100, clock }));
    const ds = Array.from({ length: 103 }, (_, i) => rl.when(`k${i}`));
    assert.ok(ds.slice(0, 100).every((d) => d === 0));
    assert.deepEqual(ds.slice(100), [100, 200, 300]);
    clock.advance(1000); // ten tokens back: three owed, seven free
    assert.deepEqual(whens(rl, 'x', 8), [0, 0, 0, 0, 0, 0, 0, 100]);
    assert.equal(rl.numRequeues('k0'), 0);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the longest delay, asks every limiter, and forgets in all', () => {
    const exp = new ItemExponentialFailureRateLimiter(1, 1000);
    const fastSlow = new ItemFastSlowRateLimiter(3, 50, 2);
    const rl = new MaxOfRateLimiter(exp, fastSlow);
    assert.deepEqual(whens(rl, 'a', 8), [3, 3, 50, 50, 50, 50, 64, 128]);
    assert.equal(exp.numRequeues('a'), 8);
    assert.equal(fastSlow.numRequeues('a'), 8);
    assert.equal(rl.numRequeues('a'), 8);
    rl.forget('a');
    assert.equal(exp.numRequeues('a'), 0);
    assert.equal(fastSlow.numRequeues('a'), 0);
    assert.equal(rl.when('a'), 3);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is per-key exponential from 5 ms, and the 10 qps bucket once 100 failures come at once', () => {
    const clock = new FakeClock();
    const rl = defaultControllerRateLimiter(clock);
    assert.deepEqual(whens(rl, 'a', 3), [5, 10, 20]);
    const burst = Array.from({ length: 100 }, (_, i) => rl.when(`k${i}`));
    assert.deepEqual(burst.slice(0, 97), new Array<number>(97).fill(5));
    assert.deepEqual(burst.slice(97), [100, 200, 300], 'bucket owed after 100 tokens');
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    clock.advance(60_000);
    assert.equal(rl.when('a'), 5);
  });

  it('caps a single key at 1000 s', () => {
    const rl = defaultControllerRateLimiter(new FakeClock());
    const ds = whens(rl, 'a', 40);
    assert.equal(Math.max(...ds), 1000_000);
  });
});
