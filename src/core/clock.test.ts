import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { FakeClock } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

describe('FakeClock', () => {
  it('fires timers in due order as time advances, with now() at each due time', () => {
    const clock = new FakeClock(1000);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(['b', clock.now()]), 20);
    clock.setTimeout(() => fired.push(['a', clock.now()]), 10);
    const c = clock.setTimeout(() => fired.push(['c', clock.now()]), 15);
    clock.clearTimeout(c);
    clock.advance(5);
    assert.deepEqual(fired, []);
    clock.advance(20);
    assert.deepEqual(fired, [
      ['a', 1010],
      ['b', 1020],
    ]);
    assert.equal(clock.now(), 1025);
    assert.equal(clock.pending, 0);
  });

  it('fires a timer set by a timer within the same advance', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => clock.setTimeout(() => fired.push(clock.now()), 5), 5);
    clock.advance(10);
    assert.deepEqual(fired, [10]);
  });

  it('sleeps until advanced, and rejects when aborted', async () => {
    const clock = new FakeClock();
    let done = false;
    const slept = clock.sleep(100).then(() => (done = true));
    clock.advance(99);
    await Promise.resolve();
    assert.equal(done, false);
    clock.advance(1);
    await slept;
    assert.equal(done, true);
    const aborter = new AbortController();
    const aborted = clock.sleep(100, aborter.signal);
    aborter.abort(new Error('stop'));
    await assert.rejects(aborted, /stop/);
    assert.equal(clock.pending, 0);
  });
});

describe('TokenBucket', () => {
  it('allows a burst, then qps tokens a second', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 3, clock });
    assert.deepEqual(
      [bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()],
      [true, true, true, false],
    );
    clock.advance(100);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false);
  });

  it('reserves future tokens with the wait each needs', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 100, 200]);
    clock.advance(1000);
    assert.equal(bucket.reserve(), 0, 'refilled up to the burst');
  });
});
