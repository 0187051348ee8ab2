import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { cidrIntersect, cidrUnion } from './cidr-set.ts';
import { cidrContains, formatCidr, parseCidr, parseIp, type IpCidr } from './ip.ts';

const cidrs = (...texts: string[]): IpCidr[] => texts.map((t) => parseCidr(t)!.cidr);
const text = (list: IpCidr[]) => list.map(formatCidr);

describe('cidrUnion', () => {
  it('merges adjacent, contained and repeated blocks into the fewest CIDRs', () => {
    assert.deepEqual(text(cidrUnion(cidrs('10.0.0.1/32', '10.0.0.0/32'))), ['10.0.0.0/31']);
    assert.deepEqual(text(cidrUnion(cidrs('10.0.0.128/25', '10.0.0.0/25', '10.0.0.7/32'))), ['10.0.0.0/24']);
    assert.deepEqual(text(cidrUnion(cidrs('10.0.0.1/32', '10.0.0.2/32'))), ['10.0.0.1/32', '10.0.0.2/32']);
    assert.deepEqual(text(cidrUnion(cidrs('10.0.0.1/32', '10.0.0.2/32', '10.0.0.3/32'))), [
      '10.0.0.1/32',
      '10.0.0.2/31',
    ]);
  });

  it('keeps families apart, IPv4 first', () => {
    assert.deepEqual(text(cidrUnion(cidrs('fd00::/64', '10.0.0.0/8', 'fd00:0:0:1::/64'))), ['10.0.0.0/8', 'fd00::/63']);
  });

  it('answers 256 consecutive host addresses as one /24, and nothing as nothing', () => {
    const hosts = Array.from({ length: 256 }, (_, n) => `192.0.2.${n}/32`);
    assert.deepEqual(text(cidrUnion(cidrs(...hosts))), ['192.0.2.0/24']);
    assert.deepEqual(cidrUnion([]), []);
  });
});

describe('cidrIntersect', () => {
  it('keeps only the addresses in both lists', () => {
    assert.deepEqual(text(cidrIntersect(cidrs('10.0.0.0/24'), cidrs('10.0.0.128/25', '10.1.0.0/16'))), [
      '10.0.0.128/25',
    ]);
    assert.deepEqual(text(cidrIntersect(cidrs('0.0.0.0/0'), cidrs('10.0.0.5/32', '10.0.0.9/32'))), [
      '10.0.0.5/32',
      '10.0.0.9/32',
    ]);
    assert.deepEqual(text(cidrIntersect(cidrs('10.0.0.0/25'), cidrs('10.0.0.128/25'))), []);
  });

  it('cuts a range to the CIDRs that cover exactly the overlap', () => {
    // 10.0.0.0/24 ∩ 10.0.0.3 .. 10.0.1.255 (as the fewest CIDRs) → those of 10.0.0.3 .. 10.0.0.255.
    const tail = ['10.0.0.3/32', '10.0.0.4/30', '10.0.0.8/29', '10.0.0.16/28', '10.0.0.32/27', '10.0.0.64/26'];
    const got = cidrIntersect(cidrs('10.0.0.0/24'), cidrs(...tail, '10.0.0.128/25', '10.0.1.0/24'));
    assert.deepEqual(text(got), [...tail, '10.0.0.128/25']);
  });

  it('never matches across families', () => {
    assert.deepEqual(cidrIntersect(cidrs('0.0.0.0/0'), cidrs('::/0')), []);
    assert.deepEqual(text(cidrIntersect(cidrs('::/0', '10.0.0.0/8'), cidrs('fd00::1/128'))), ['fd00::1/128']);
  });

  it('agrees with address-by-address membership on random sets', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 200; round++) {
      const make = () =>
        Array.from({ length: 1 + rand(5) }, () => {
          const len = 26 + rand(7);
          return parseCidr(`10.0.0.${rand(64)}/${len}`)!.cidr;
        });
      const [a, b] = [make(), make()];
      const both = cidrIntersect(a, b);
      for (let n = 0; n < 64; n++) {
        const ip = parseIp(`10.0.0.${n}`)!;
        const want = a.some((c) => cidrContains(c, ip)) && b.some((c) => cidrContains(c, ip));
        assert.equal(
          both.some((c) => cidrContains(c, ip)),
          want,
          `10.0.0.${n} in ${text(a).join(',')} ∩ ${text(b).join(',')}`,
        );
      }
    }
  });
});
