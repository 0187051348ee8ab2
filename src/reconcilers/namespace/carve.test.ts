import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { carveSubnet } from './carve.ts';

describe('carveSubnet', () => {
  it('hands out consecutive free blocks of the range, skipping any overlap', () => {
    assert.equal(carveSubnet('172.16.0.0/16', 24, []), '172.16.0.0/24');
    assert.equal(carveSubnet('172.16.0.0/16', 24, ['172.16.0.0/24', '172.16.1.0/24']), '172.16.2.0/24');
    // A used /23 covers two blocks; a used subnet outside the range does not matter.
    assert.equal(carveSubnet('172.16.0.0/16', 24, ['172.16.0.0/23', '10.0.0.0/8']), '172.16.2.0/24');
    assert.equal(carveSubnet('172.16.0.0/16', 24, ['172.16.0.128/25']), '172.16.1.0/24');
  });
  it('is undefined when the range is full or the prefix cannot fit', () => {
    assert.equal(carveSubnet('10.0.0.0/30', 30, ['10.0.0.0/30']), undefined);
    assert.equal(carveSubnet('10.0.0.0/24', 16, []), undefined);
    assert.equal(carveSubnet('10.1.0.0/23', 24, ['10.1.0.0/24']), '10.1.1.0/24');
  });
});

describe('carveSubnet for IPv6', () => {
  it('carves /64s out of a /48, stepping over used blocks of any size, ignoring IPv4 ones', () => {
    assert.equal(carveSubnet('fd00:10::/48', 64, []), 'fd00:10::/64');
    assert.equal(carveSubnet('fd00:10::/48', 64, ['fd00:10::/64', '10.0.0.0/8']), 'fd00:10:0:1::/64');
    assert.equal(carveSubnet('fd00:10::/48', 64, ['fd00:10::/56']), 'fd00:10:0:100::/64');
    assert.equal(carveSubnet('fd00:10::/48', 64, ['fd00:10::/64'], 'fd00:10:0:7::/64'), 'fd00:10:0:7::/64');
  });
  it('is undefined when the range is full or the prefix cannot fit', () => {
    assert.equal(carveSubnet('fd00:10::/64', 64, ['fd00:10::/64']), undefined);
    assert.equal(carveSubnet('fd00:10::/64', 127, []), undefined);
    assert.equal(carveSubnet('fd00:10::/8', 64, ['fd00::/8']), undefined);
  });
});
