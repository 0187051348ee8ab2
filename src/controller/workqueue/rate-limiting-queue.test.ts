import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { RateLimitingQueue } from './rate-limiting-queue.ts';
import { ItemExponentialFailureRateLimiter } from './rate-limiters.ts';

describe('RateLimitingQueue', () => {
  it('re-adds a failing key after 5, 10, 20 ms by default, and from 5 ms again after forget', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    const dueTimes: number[] = [];
    q.add('a');
    for (let attempt = 0; attempt < 4; attempt++) {
      // Fail the key, then step the clock 1 ms at a time until it comes back.
      const r = await q.get();
      assert.equal(r.shutdown, false);
      q.addRateLimited('a');
      q.done('a');
      const from = clock.now();
      while (q.len() === 0) clock.advance(1);
      dueTimes.push(clock.now() - from);
    }
    assert.deepEqual(dueTimes, [5, 10, 20, 40]);
    assert.equal(q.numRequeues('a'), 4);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    assert.equal(q.len(), 1, 'forget does not touch the queue');
    await q.get();
    q.addRateLimited('a');
    q.done('a');
    clock.advance(4);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
  });

  it('uses the given limiter and counts retries', () => {
    const clock = new FakeClock();
    let retries = 0;
    const q = new RateLimitingQueue({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(100, 150),
      metrics: { retries: () => retries++ },
    });
    q.addRateLimited('a');
    q.addRateLimited('a'); // 150 ms, later than the pending 100 ms: the earlier due time stays
    clock.advance(99);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(q.numRequeues('a'), 2);
    assert.equal(retries, 2);
  });

  it('ignores addRateLimited after shutdown', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    q.shutDown();
    q.addRateLimited('a');
    clock.advance(1000);
    assert.deepEqual(await q.get(), { shutdown: true });
  });
});
