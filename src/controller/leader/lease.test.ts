import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { isHeldByOther, leaseSeconds, microTime, recordKey } from './lease.ts';

describe('lease expiry rules', () => {
  const spec = { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: microTime(0) };

  it('another holder holds until observedTime + its declared duration passes on the local clock', () => {
    assert.equal(isHeldByOther(spec, 'b', 1000, 1000), true);
    assert.equal(isHeldByOther(spec, 'b', 1000, 15_999), true);
    assert.equal(isHeldByOther(spec, 'b', 1000, 16_000), false);
  });

  it('ignores the remote renewTime: an ancient renewTime observed just now is still held', () => {
    assert.equal(isHeldByOther({ ...spec, renewTime: '2000-01-01T00:00:00.000000Z' }, 'b', 50_000, 50_001), true);
  });

  it('an empty holder (released) or our own record is never held by another', () => {
    assert.equal(isHeldByOther({ ...spec, holderIdentity: '' }, 'b', 0, 0), false);
    assert.equal(isHeldByOther({ ...spec, holderIdentity: null }, 'b', 0, 0), false);
    assert.equal(isHeldByOther(spec, 'a', 0, 0), false);
  });

  it('formats MicroTime and rounds durations up to whole seconds', () => {
    assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05.678000Z');
    assert.equal(leaseSeconds(15_000), 15);
    assert.equal(leaseSeconds(1500), 2);
    assert.equal(leaseSeconds(10), 1);
  });

  it('the record key changes with any record field', () => {
    assert.notEqual(recordKey(spec), recordKey({ ...spec, renewTime: microTime(1) }));
    assert.equal(recordKey(spec), recordKey({ ...spec }));
  });
});
