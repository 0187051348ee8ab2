import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { pickVlan, VLAN_MAX } from './vlan.ts';

describe('pickVlan', () => {
  it('takes the lowest id neither on the trunk nor in flight', () => {
    assert.equal(pickVlan([]), 1);
    assert.equal(pickVlan([1, 2, 4]), 3);
    assert.equal(pickVlan([1, 2, 4], [3]), 5);
    assert.equal(pickVlan([2], [1]), 3);
  });

  it('none when all 4094 are used', () => {
    const all = Array.from({ length: VLAN_MAX }, (_, i) => i + 1);
    assert.equal(pickVlan(all), undefined);
    assert.equal(pickVlan(all.slice(1), [1]), undefined);
  });
});
