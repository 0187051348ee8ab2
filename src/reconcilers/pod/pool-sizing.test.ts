import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { poolTarget } from './pool-sizing.ts';

/** Bounds 2–20, a 60 s rate window, trimmed after 120 s without a take. */
const SIZING = { min: 2, max: 20, demandWindowSeconds: 60, trimIdleSeconds: 120 };

describe('poolTarget (adaptive sizing)', () => {
  it('an unused pool wants its floor', () => {
    assert.deepEqual(poolTarget({ rate: 0, lastTake: 0, held: 0, peak: 0 }, SIZING, 1, 0), {
      target: 2,
      idle: false,
      lead: 0,
      keep: 0,
    });
  });

  it('covers the takes expected over one refill: rate × refill time, rounded up', () => {
    const demand = { rate: 3, lastTake: 10_000, held: 40, peak: 40 };
    assert.equal(poolTarget(demand, SIZING, 2.5, 10_000).target, 8);
    // The rate decays with the window: a minute later it is e⁻¹ of it (1.1/s × 2.5 s → 3).
    assert.equal(poolTarget(demand, SIZING, 2.5, 70_000).lead, 3);
  });

  it('keeps, while the pool is in use, the ports its pods held at most and gave back', () => {
    const after = { rate: 0.5, lastTake: 0, held: 3, peak: 15 };
    assert.deepEqual(poolTarget(after, SIZING, 1, 60_000), { target: 12, idle: false, lead: 1, keep: 12 });
    // No take for trimIdleSeconds: the peak no longer counts, and the surplus may go.
    assert.deepEqual(poolTarget(after, SIZING, 1, 120_000), { target: 2, idle: true, lead: 1, keep: 0 });
  });

  it('bounded by max, whatever the demand', () => {
    assert.equal(poolTarget({ rate: 100, lastTake: 0, held: 0, peak: 500 }, SIZING, 10, 0).target, 20);
  });
});
