import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { RavenError, isOutage } from './errors.ts';

class Down extends RavenError {
  override get outage(): boolean {
    return true;
  }
}

describe('isOutage', () => {
  it('is true for an error that reports an outage, directly or anywhere in its cause chain', () => {
    const down = new Down('X_UNREACHABLE', 'connection refused');
    assert.equal(isOutage(down), true);
    assert.equal(isOutage(new RavenError('WRAPPED', 'reconcile failed', { cause: down })), true);
    assert.equal(isOutage(new Error('plain', { cause: new Error('again', { cause: down }) })), true);
  });

  it('is false for anything else', () => {
    assert.equal(isOutage(new RavenError('X_CONFLICT', 'stale')), false);
    assert.equal(isOutage(new Error('boom')), false);
    assert.equal(isOutage('down'), false);
    assert.equal(isOutage(undefined), false);
  });
});
