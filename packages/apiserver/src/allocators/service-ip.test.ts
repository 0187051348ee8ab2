import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { ServiceIpAllocator } from './service-ip.ts';
import { failure } from '../../../../test/support/allocators.ts';

describe('ServiceIpAllocator (IPv4)', () => {
  it('describes a /12 without materialising it', () => {
    const ips = new ServiceIpAllocator('10.96.0.0/12');
    assert.equal(ips.cidr, '10.96.0.0/12');
    assert.equal(ips.family, 'IPv4');
    assert.equal(ips.size(), 2 ** 20 - 2);
    assert.equal(ips.used(), 0);
    assert.equal(ips.reservedFirst(), '10.96.0.1');
  });

  it('allocates dynamically above the 256-address static band, never the reserved first address', () => {
    const ips = new ServiceIpAllocator('10.96.0.0/12');
    assert.equal(ips.allocateNext(), '10.96.1.1');
    assert.equal(ips.allocateNext(), '10.96.1.2');
    ips.allocate(ips.reservedFirst());
    ips.allocate('10.96.0.10');
    assert.equal(ips.used(), 4);
    assert.ok(ips.has('10.96.0.1') && ips.has('10.96.0.10') && ips.has('10.96.1.1'));
    assert.ok(!ips.has('10.96.1.3'));
  });

  it('accepts the whole usable range and nothing else', () => {
    const ips = new ServiceIpAllocator('10.96.0.0/12');
    ips.allocate('10.111.255.254');
    const outside = {
      code: 'IP_OUT_OF_RANGE',
      message: 'provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12',
    };
    for (const ip of [
      '10.96.0.0',
      '10.111.255.255',
      '10.112.0.0',
      '10.95.255.255',
      'fd00::1',
      'not-an-ip',
      '10.96.0.256',
      '',
    ]) {
      assert.deepEqual(
        failure(() => ips.allocate(ip)),
        outside,
        ip,
      );
      assert.equal(ips.has(ip), false);
      assert.equal(ips.release(ip), false);
    }
  });

  it('refuses an address twice and gives it back on release', () => {
    const ips = new ServiceIpAllocator('10.96.0.0/12');
    ips.allocate('10.96.5.5');
    assert.deepEqual(
      failure(() => ips.allocate('10.96.5.5')),
      { code: 'IP_ALLOCATED', message: 'provided IP is already allocated' },
    );
    assert.equal(ips.release('10.96.5.5'), true);
    assert.equal(ips.release('10.96.5.5'), false);
    ips.allocate('10.96.5.5');
    assert.equal(ips.used(), 1);
  });

  it('treats an IPv4-mapped IPv6 literal as its IPv4 address', () => {
    const ips = new ServiceIpAllocator('10.96.0.0/12');
    ips.allocate('::ffff:10.96.0.7');
    assert.ok(ips.has('10.96.0.7'));
  });

  it('clears host bits in the range it is given', () => {
    assert.equal(new ServiceIpAllocator('10.96.7.9/12').cidr, '10.96.0.0/12');
  });

  it('fills a small range, then reports it full, and reuses released addresses', () => {
    const ips = new ServiceIpAllocator('10.0.0.0/29');
    const got = [1, 2, 3, 4, 5].map(() => ips.allocateNext());
    assert.deepEqual(got, ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    assert.deepEqual(
      failure(() => ips.allocateNext()),
      { code: 'IP_RANGE_FULL', message: 'range is full' },
    );
    ips.allocate('10.0.0.1');
    ips.release('10.0.0.4');
    assert.equal(ips.allocateNext(), '10.0.0.4');
  });

  it('keeps recently released addresses out of circulation', () => {
    const ips = new ServiceIpAllocator('10.0.0.0/29');
    assert.equal(ips.allocateNext(), '10.0.0.2');
    assert.equal(ips.allocateNext(), '10.0.0.3');
    ips.release('10.0.0.2');
    assert.equal(ips.allocateNext(), '10.0.0.4');
  });

  it('uses the static band only once the dynamic part is full', () => {
    const ips = new ServiceIpAllocator('10.0.0.0/27'); // 30 usable, static band 16
    const dynamic = Array.from({ length: 14 }, () => ips.allocateNext());
    assert.equal(dynamic[0], '10.0.0.17');
    assert.equal(dynamic[13], '10.0.0.30');
    assert.equal(ips.allocateNext(), '10.0.0.2');
  });

  it('hands out every address of a /16 exactly once', () => {
    const ips = new ServiceIpAllocator('172.20.0.0/16');
    const seen = new Set<string>();
    for (let i = 0; i < 65533; i++) seen.add(ips.allocateNext());
    assert.equal(seen.size, 65533);
    assert.ok(!seen.has('172.20.0.1') && !seen.has('172.20.0.0') && !seen.has('172.20.255.255'));
    assert.equal(failure(() => ips.allocateNext()).code, 'IP_RANGE_FULL');
    assert.equal(ips.used(), 65533);
  });
});

describe('ServiceIpAllocator (IPv6)', () => {
  it('serves a /112 with no broadcast exclusion', () => {
    const ips = new ServiceIpAllocator('fd00:10:96::/112');
    assert.equal(ips.family, 'IPv6');
    assert.equal(ips.size(), 65535);
    assert.equal(ips.reservedFirst(), 'fd00:10:96::1');
    assert.equal(ips.allocateNext(), 'fd00:10:96::101');
    ips.allocate('fd00:10:96::ffff');
    assert.equal(failure(() => ips.allocate('fd00:10:96::')).code, 'IP_OUT_OF_RANGE');
    assert.equal(
      failure(() => ips.allocate('fd00:10:97::1')).message,
      'provided IP is not in the valid range. The range of valid IPs is fd00:10:96::/112',
    );
  });

  it('caps huge ranges at 2^16 addresses', () => {
    const ips = new ServiceIpAllocator('fd00:0:0:0::/64');
    assert.equal(ips.cidr, 'fd00::/64');
    assert.equal(ips.size(), 65535);
    ips.allocate('fd00::ffff');
    assert.equal(failure(() => ips.allocate('fd00::1:0')).code, 'IP_OUT_OF_RANGE');
    assert.equal(new ServiceIpAllocator('::/0').size(), 65535);
  });

  it('compares addresses, not spellings', () => {
    const ips = new ServiceIpAllocator('fd00:10:96::/112');
    ips.allocate('FD00:0010:0096:0000:0000:0000:0000:0005');
    assert.ok(ips.has('fd00:10:96::5'));
    assert.equal(failure(() => ips.allocate('fd00:10:96:0::5')).code, 'IP_ALLOCATED');
    assert.equal(ips.has('fd00:10:96::5%eth0'), false);
  });

  it('serves a tiny /126', () => {
    const ips = new ServiceIpAllocator('fd00::/126');
    assert.equal(ips.size(), 3);
    assert.deepEqual([ips.allocateNext(), ips.allocateNext()], ['fd00::2', 'fd00::3']);
    assert.equal(failure(() => ips.allocateNext()).code, 'IP_RANGE_FULL');
  });
});

describe('ServiceIpAllocator CIDR errors', () => {
  const cases: [string, string][] = [
    ['', 'service CIDR "" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['10.96.0.0', 'service CIDR "10.96.0.0" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['10.96.0.0/33', 'service CIDR "10.96.0.0/33" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['10.96.0.0/x', 'service CIDR "10.96.0.0/x" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['300.0.0.0/24', 'service CIDR "300.0.0.0/24" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['fd00::/129', 'service CIDR "fd00::/129" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    ['fd00::%eth0/64', 'service CIDR "fd00::%eth0/64" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)'],
    [
      '::ffff:10.0.0.0/104',
      'service CIDR "::ffff:10.0.0.0/104" is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)',
    ],
    ['10.0.0.0/8', 'service CIDR "10.0.0.0/8" is too large; for 32-bit addresses, the mask must be >= 12'],
    ['10.0.0.0/31', 'service CIDR "10.0.0.0/31" has no usable addresses'],
    ['fd00::/128', 'service CIDR "fd00::/128" has no usable addresses'],
  ];
  for (const [cidr, message] of cases) {
    it(JSON.stringify(cidr), () => {
      assert.deepEqual(
        failure(() => new ServiceIpAllocator(cidr)),
        { code: 'CIDR_INVALID', message },
      );
    });
  }
});
