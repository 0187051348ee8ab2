import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { Backoff } from './backoff.ts';

describe('Backoff', () => {
  it('doubles from 0.8 s to a 30 s cap, and resets after 2 minutes without a failure', () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, { jitter: 0 });
    const waits = Array.from({ length: 8 }, () => b.next());
    assert.deepEqual(waits, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    clock.advance(119_999);
    assert.equal(b.next(), 30000);
    clock.advance(120_000);
    assert.equal(b.next(), 800);
  });

  it('stretches each wait by up to the jitter fraction, never beyond the cap', () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, {}, () => 0.5);
    assert.equal(b.next(), 1200);
    const capped = new Backoff(clock, { initialMs: 20_000 }, () => 0.99);
    assert.equal(capped.next(), 30000);
  });

  it('waits on the injected clock and stops when aborted', async () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, { jitter: 0 });
    let done = false;
    const p = b.wait(new AbortController().signal).then(() => (done = true));
    clock.advance(799);
    await Promise.resolve();
    assert.equal(done, false);
    clock.advance(1);
    await p;
    const ac = new AbortController();
    const q = b.wait(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(q, /stop/);
  });
});
