import assert from 'node:assert/strict';
import { describe, it } from './node-test.ts';
import { waitFor } from './wait.ts';

describe('waitFor', () => {
  it('returns the first value that is not undefined or false', async () => {
    let n = 0;
    assert.equal(await waitFor('three polls', () => ++n === 3 && 'done', { intervalMs: 1 }), 'done');
  });

  it('without progress, fails after timeoutMs naming what it waited for', async () => {
    await assert.rejects(
      waitFor('nothing', () => false, { timeoutMs: 100, intervalMs: 10 }),
      /waiting for nothing$/,
    );
  });

  it('keeps waiting past timeoutMs while progress moves, and fails once it stops', async () => {
    const start = Date.now();
    let moving = true;
    const done = waitFor('a slow thing', () => Date.now() - start > 400 && 'arrived', {
      timeoutMs: 150,
      intervalMs: 10,
      progress: () => (moving ? Date.now() : 'still'),
    });
    assert.equal(await done, 'arrived', 'waited 400 ms with a 150 ms window');
    moving = false;
    await assert.rejects(
      waitFor('a stuck thing', () => false, { timeoutMs: 150, intervalMs: 10, progress: () => (moving ? 1 : 0) }),
      /with no progress for 150 ms waiting for a stuck thing$/,
    );
  });

  it('names what it saw instead when given explain, even when explain itself fails', async () => {
    await assert.rejects(
      waitFor('ACTIVE', () => false, { timeoutMs: 50, intervalMs: 10, explain: () => 'PENDING_UPDATE' }),
      /waiting for ACTIVE; instead: PENDING_UPDATE$/,
    );
    await assert.rejects(
      waitFor('ACTIVE', () => false, {
        timeoutMs: 50,
        intervalMs: 10,
        explain: () => Promise.reject(new Error('unreachable')),
      }),
      /waiting for ACTIVE; instead: unreachable$/,
    );
  });

  it('with progress, still fails at maxMs in all', async () => {
    await assert.rejects(
      waitFor('for ever', () => false, { timeoutMs: 100, maxMs: 300, intervalMs: 10, progress: () => Date.now() }),
      /its limit in all waiting for for ever$/,
    );
  });
});
