import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { OffsetBitmap, staticBandSize } from './bitmap.ts';

describe('staticBandSize', () => {
  it('follows min(max(lo, size/step), hi), 0 for tiny ranges', () => {
    // Service IPs: lo 16, hi 256, step 16.
    assert.equal(staticBandSize(16, 16, 256, 16), 0);
    assert.equal(staticBandSize(32, 16, 256, 16), 16);
    assert.equal(staticBandSize(1024, 16, 256, 16), 64);
    assert.equal(staticBandSize(2 ** 20, 16, 256, 16), 256);
    // Node ports: lo 16, hi 128, step 32.
    assert.equal(staticBandSize(2768, 16, 128, 32), 86);
    assert.equal(staticBandSize(17, 16, 128, 32), 16);
    assert.equal(staticBandSize(65535, 16, 128, 32), 128);
  });
});

describe('OffsetBitmap', () => {
  it('adds, checks and deletes offsets', () => {
    const bits = new OffsetBitmap(70);
    assert.equal(bits.add(0), true);
    assert.equal(bits.add(31), true);
    assert.equal(bits.add(32), true);
    assert.equal(bits.add(69), true);
    assert.equal(bits.add(31), false);
    assert.equal(bits.count, 4);
    assert.deepEqual(
      [0, 1, 31, 32, 33, 69].map((o) => bits.has(o)),
      [true, false, true, true, false, true],
    );
    assert.equal(bits.delete(31), true);
    assert.equal(bits.delete(31), false);
    assert.equal(bits.has(31), false);
    assert.equal(bits.count, 3);
  });

  it('hands out the dynamic band first, then the static band, skipping reserved offsets', () => {
    const bits = new OffsetBitmap(6, 3, [0]);
    assert.deepEqual(
      [bits.next(), bits.next(), bits.next(), bits.next(), bits.next(), bits.next()],
      [3, 4, 5, 1, 2, undefined],
    );
    assert.equal(bits.count, 5);
    assert.equal(bits.add(0), true);
  });

  it('moves on from the last pick instead of reusing a fresh hole', () => {
    const bits = new OffsetBitmap(8);
    assert.deepEqual([bits.next(), bits.next(), bits.next()], [0, 1, 2]);
    bits.delete(1);
    assert.equal(bits.next(), 3);
    for (let i = 4; i < 8; i++) assert.equal(bits.next(), i);
    assert.equal(bits.next(), 1, 'wraps around to the hole');
    assert.equal(bits.next(), undefined);
  });

  it('skips full words correctly across word boundaries', () => {
    const bits = new OffsetBitmap(100);
    for (let i = 0; i < 64; i++) bits.add(i);
    bits.add(65);
    assert.equal(bits.next(), 64);
    assert.equal(bits.next(), 66);
  });
});
