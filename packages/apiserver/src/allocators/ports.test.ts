import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { PortAllocator } from './ports.ts';
import { failure } from '../../../../test/support/allocators.ts';

describe('PortAllocator', () => {
  it('parses the default node-port range', () => {
    const ports = new PortAllocator('30000-32767');
    assert.equal(ports.range, '30000-32767');
    assert.equal(ports.base, 30000);
    assert.equal(ports.size(), 2768);
    assert.equal(ports.used(), 0);
    assert.equal(new PortAllocator(' 8080 ').range, '8080-8080');
  });

  it('allocates dynamically above the static band (86 ports for the default range)', () => {
    const ports = new PortAllocator('30000-32767');
    assert.equal(ports.allocateNext(), 30086);
    assert.equal(ports.allocateNext(), 30087);
    ports.allocate(30000);
    ports.allocate(32767);
    assert.equal(ports.used(), 4);
    assert.ok(ports.has(30000) && ports.has(30086) && !ports.has(30001));
  });

  it('reports taken and out-of-range ports with upstream messages', () => {
    const ports = new PortAllocator('30000-32767');
    ports.allocate(30080);
    assert.deepEqual(
      failure(() => ports.allocate(30080)),
      { code: 'PORT_ALLOCATED', message: 'provided port is already allocated' },
    );
    const outside = {
      code: 'PORT_OUT_OF_RANGE',
      message: 'provided port is not in the valid range. The range of valid ports is 30000-32767',
    };
    for (const port of [29999, 32768, 80, 30000.5, NaN, -1]) {
      assert.deepEqual(
        failure(() => ports.allocate(port)),
        outside,
        String(port),
      );
      assert.equal(ports.has(port), false);
      assert.equal(ports.release(port), false);
    }
  });

  it('releases ports for reuse', () => {
    const ports = new PortAllocator('30000-30009');
    const got = Array.from({ length: 10 }, () => ports.allocateNext());
    assert.deepEqual(got, [30000, 30001, 30002, 30003, 30004, 30005, 30006, 30007, 30008, 30009]);
    assert.deepEqual(
      failure(() => ports.allocateNext()),
      { code: 'PORT_RANGE_FULL', message: 'range is full' },
    );
    assert.equal(ports.release(30004), true);
    assert.equal(ports.release(30004), false);
    assert.equal(ports.allocateNext(), 30004);
  });

  it('moves on from the last pick rather than reusing the newest hole', () => {
    const ports = new PortAllocator('30000-30009');
    assert.equal(ports.allocateNext(), 30000);
    assert.equal(ports.allocateNext(), 30001);
    ports.release(30000);
    assert.equal(ports.allocateNext(), 30002);
  });

  it('hands out every port of the default range exactly once', () => {
    const ports = new PortAllocator('30000-32767');
    const seen = new Set<number>();
    for (let i = 0; i < 2768; i++) seen.add(ports.allocateNext());
    assert.equal(seen.size, 2768);
    assert.equal(Math.min(...seen), 30000);
    assert.equal(Math.max(...seen), 32767);
    assert.equal(failure(() => ports.allocateNext()).code, 'PORT_RANGE_FULL');
  });

  it('rejects malformed ranges', () => {
    const cases: [string, string][] = [
      ['', 'invalid port range "": expected "<first>-<last>" with ports in 1-65535'],
      ['abc', 'invalid port range "abc": expected "<first>-<last>" with ports in 1-65535'],
      ['30000-', 'invalid port range "30000-": expected "<first>-<last>" with ports in 1-65535'],
      ['0-100', 'invalid port range "0-100": expected "<first>-<last>" with ports in 1-65535'],
      ['30000-70000', 'invalid port range "30000-70000": expected "<first>-<last>" with ports in 1-65535'],
      ['32767-30000', 'invalid port range "32767-30000": end port cannot be less than start port'],
    ];
    for (const [range, message] of cases) {
      assert.deepEqual(
        failure(() => new PortAllocator(range)),
        { code: 'PORT_RANGE_INVALID', message },
        range,
      );
    }
  });
});
