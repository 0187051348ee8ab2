import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import {
  cidrContains,
  cidrExclude,
  cidrLast,
  cidrSize,
  cidrsOverlap,
  formatCidr,
  formatIp,
  ipBytes,
  isIPv4Mapped,
  parseCidr,
  parseIp,
  unmapIPv4,
  type IpCidr,
} from './ip.ts';

const cidr = (text: string): IpCidr => {
  const parsed = parseCidr(text);
  assert.ok(parsed, text);
  return parsed.cidr;
};

describe('parseIp / formatIp', () => {
  it('reads dotted-quad IPv4 as a 32-bit value and writes it back', () => {
    assert.deepEqual(parseIp('10.0.0.1'), { version: 4, value: 0x0a000001n });
    assert.deepEqual(parseIp('0.0.0.0'), { version: 4, value: 0n });
    assert.deepEqual(parseIp('255.255.255.255'), { version: 4, value: 0xffffffffn });
    assert.equal(formatIp(4, 0x0a000001n), '10.0.0.1');
    assert.equal(formatIp(4, 0xffffffffn), '255.255.255.255');
  });

  it('reads IPv6 as a 128-bit value and writes it in RFC 5952 form', () => {
    assert.deepEqual(parseIp('fd00::1'), { version: 6, value: (0xfd00n << 112n) | 1n });
    assert.deepEqual(parseIp('::'), { version: 6, value: 0n });
    const all = parseIp('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
    assert.equal(all?.value, (1n << 128n) - 1n);
    assert.equal(formatIp(6, (0xfd00n << 112n) | 1n), 'fd00::1');
    assert.equal(formatIp(6, parseIp('FD00:0:0:0:0:0:0:A')!.value), 'fd00::a');
  });

  it('refuses what ipaddr.js alone would read: short, hex, octal and zoned forms', () => {
    for (const text of [
      '',
      'not-an-ip',
      '10.1',
      '167772161',
      '0x0a.0.0.1',
      '010.0.0.1',
      '10.0.0.256',
      '10.0.0.1 ',
      'fe80::1%eth0',
      '1:2:3:4:5:6:7:8:9',
      '10.0.0.1/32',
    ]) {
      assert.equal(parseIp(text), undefined, text);
    }
  });

  it('reads leading zeros as decimal only when asked (Kubernetes)', () => {
    assert.deepEqual(parseIp('010.001.0.09', { leadingZeros: true }), parseIp('10.1.0.9'));
    assert.equal(parseIp('0256.0.0.1', { leadingZeros: true }), undefined);
    assert.equal(parseIp('300.0.0.1', { leadingZeros: true }), undefined);
    assert.equal(parseIp('fe80::1%eth0', { leadingZeros: true }), undefined);
    assert.deepEqual(parseIp('fd00::1', { leadingZeros: true }), parseIp('fd00::1'));
  });

  it('keeps IPv4-mapped IPv6 as IPv6 until unmapped', () => {
    const mapped = parseIp('::ffff:10.0.0.1')!;
    assert.deepEqual(mapped, { version: 6, value: (0xffffn << 32n) | 0x0a000001n });
    assert.ok(isIPv4Mapped(mapped));
    assert.deepEqual(unmapIPv4(mapped), parseIp('10.0.0.1'));
    const plain = parseIp('fd00::1')!;
    assert.ok(!isIPv4Mapped(plain) && !isIPv4Mapped(parseIp('10.0.0.1')!));
    assert.equal(unmapIPv4(plain), plain);
  });

  it('gives the bytes in network order', () => {
    assert.deepEqual(ipBytes(parseIp('169.254.0.1')!), [169, 254, 0, 1]);
    assert.deepEqual(ipBytes(parseIp('fe80::1')!), [0xfe, 0x80, ...Array<number>(13).fill(0), 1]);
  });
});

describe('CIDRs', () => {
  it('parses a CIDR, clearing host bits but keeping the address it was written with', () => {
    assert.deepEqual(parseCidr('10.0.0.5/24'), {
      cidr: { version: 4, network: 0x0a000000n, prefixLength: 24 },
      address: { version: 4, value: 0x0a000005n },
    });
    assert.equal(formatCidr(cidr('10.96.7.9/12')), '10.96.0.0/12');
    assert.equal(formatCidr(cidr('fd00:10:96::ff/112')), 'fd00:10:96::/112');
  });

  it('refuses bad addresses, missing, oversized or non-decimal prefix lengths', () => {
    for (const text of [
      '10.0.0.0',
      '10.0.0.0/',
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.0/0x8',
      '10.0.0.0/-1',
      '10.0.0.0/0008',
      '10.0.0.0/8/8',
      '10.1/16',
      '/8',
      'fd00::%eth0/64',
    ]) {
      assert.equal(parseCidr(text), undefined, text);
    }
    assert.equal(parseCidr('010.0.0.0/8'), undefined);
    assert.equal(formatCidr(parseCidr('010.0.0.0/8', { leadingZeros: true })!.cidr), '10.0.0.0/8');
  });

  it('sizes /32, /0 and IPv6 blocks exactly', () => {
    const host = cidr('10.0.0.7/32');
    assert.equal(cidrSize(host), 1n);
    assert.equal(cidrLast(host), host.network);
    const all = cidr('0.0.0.0/0');
    assert.equal(cidrSize(all), 1n << 32n);
    assert.equal(formatIp(4, cidrLast(all)), '255.255.255.255');
    const v6 = cidr('fd00::/64');
    assert.equal(cidrSize(v6), 1n << 64n);
    assert.equal(formatIp(6, cidrLast(v6)), 'fd00::ffff:ffff:ffff:ffff');
    assert.equal(cidrSize(cidr('::/0')), 1n << 128n);
    assert.equal(formatIp(4, cidrLast(cidr('10.96.0.0/12'))), '10.111.255.255');
  });

  it('counts an IPv4-mapped address in a CIDR as IPv6, its prefix length as written', () => {
    const parsed = parseCidr('::ffff:10.0.0.0/104')!;
    assert.equal(parsed.cidr.version, 6);
    assert.ok(isIPv4Mapped(parsed.address));
    assert.equal(parseCidr('::ffff:10.0.0.0/120')!.cidr.prefixLength, 120);
  });

  it('tells containment and overlap, never across versions', () => {
    const net = cidr('10.0.0.0/24');
    assert.ok(cidrContains(net, parseIp('10.0.0.0')!));
    assert.ok(cidrContains(net, parseIp('10.0.0.255')!));
    assert.ok(!cidrContains(net, parseIp('10.0.1.0')!));
    assert.ok(!cidrContains(net, parseIp('9.255.255.255')!));
    assert.ok(!cidrContains(cidr('::/0'), parseIp('10.0.0.1')!));
    assert.ok(!cidrContains(cidr('0.0.0.0/0'), parseIp('::ffff:10.0.0.1')!));
    assert.ok(cidrContains(cidr('fd00::/64'), parseIp('fd00::ffff')!));

    assert.ok(cidrsOverlap(net, cidr('10.0.0.128/25')));
    assert.ok(cidrsOverlap(cidr('10.0.0.128/25'), net));
    assert.ok(cidrsOverlap(cidr('0.0.0.0/0'), net));
    assert.ok(!cidrsOverlap(net, cidr('10.0.1.0/24')));
    assert.ok(!cidrsOverlap(cidr('0.0.0.0/0'), cidr('::/0')));
  });

  it('excludes CIDRs from a block as the fewest CIDRs: an ipBlock with except, as allow-lists', () => {
    const exclude = (block: string, ...excepts: string[]) =>
      cidrExclude(cidr(block), excepts.map(cidr)).map(formatCidr);
    assert.deepEqual(exclude('10.0.0.0/24'), ['10.0.0.0/24']);
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.0/25'), ['10.0.0.128/25']);
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.7/32'), [
      '10.0.0.128/25',
      '10.0.0.64/26',
      '10.0.0.32/27',
      '10.0.0.16/28',
      '10.0.0.8/29',
      '10.0.0.0/30',
      '10.0.0.4/31',
      '10.0.0.6/32',
    ]);
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.0/16'), [], 'an except covering the block leaves nothing');
    assert.deepEqual(
      exclude('10.0.0.0/24', '10.0.1.0/24', '::/0'),
      ['10.0.0.0/24'],
      'disjoint and other-family excepts',
    );
    // 10/8 and 192.168/16 part at the first bit: 7 + 15 halves beside their paths.
    assert.equal(exclude('0.0.0.0/0', '10.0.0.0/8', '192.168.0.0/16').length, 7 + 15);
    assert.deepEqual(exclude('fd00::/64', 'fd00::/65'), ['fd00::8000:0:0:0/65']);
    // Every address of the block is in exactly one of: the result, an except.
    const block = cidr('10.1.0.0/26');
    const excepts = ['10.1.0.5/32', '10.1.0.16/29', '10.1.0.40/30'].map(cidr);
    const parts = cidrExclude(block, excepts);
    for (let v = block.network; v <= cidrLast(block); v++) {
      const ip = { version: 4 as const, value: v };
      const inParts = parts.filter((p) => cidrContains(p, ip)).length;
      const inExcepts = excepts.some((e) => cidrContains(e, ip));
      assert.equal(inParts, inExcepts ? 0 : 1, formatIp(4, v));
    }
  });
});
