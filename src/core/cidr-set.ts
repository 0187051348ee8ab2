/**
 * Sets of addresses written as CIDR lists: union and intersection, exact (never wider than the sets), answered as the
 * fewest CIDRs. Each set is held as sorted, disjoint address ranges, so both operations are linear in the ranges
 * after one sort: a list of n CIDRs never costs more than n log n, however the CIDRs nest or touch.
 */
import { addressBits, cidrLast, type IpCidr, type IpVersion } from './ip.ts';

interface Range {
  version: IpVersion;
  lo: bigint;
  hi: bigint;
}

/** Sorted by version then address, overlapping and adjacent ranges merged. */
function rangesOf(cidrs: readonly IpCidr[]): Range[] {
  const sorted = cidrs
    .map((c) => ({ version: c.version, lo: c.network, hi: cidrLast(c) }))
    .sort((a, b) => a.version - b.version || (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && last.version === r.version && r.lo <= last.hi + 1n) {
      if (r.hi > last.hi) last.hi = r.hi;
    } else out.push({ ...r });
  }
  return out;
}

/** The fewest CIDRs covering exactly the range: at most 2 × the address width of them. */
function cidrsOfRange({ version, lo, hi }: Range): IpCidr[] {
  const bits = addressBits(version);
  const out: IpCidr[] = [];
  let start = lo;
  while (start <= hi) {
    // The largest block aligned at `start` that ends within the range.
    let size = 0;
    while (
      size < bits &&
      (start & ((1n << BigInt(size + 1)) - 1n)) === 0n &&
      start + (1n << BigInt(size + 1)) - 1n <= hi
    )
      size++;
    out.push({ version, network: start, prefixLength: bits - size });
    start += 1n << BigInt(size);
  }
  return out;
}

const toCidrs = (ranges: readonly Range[]): IpCidr[] => ranges.flatMap(cidrsOfRange);

/**
 * The addresses of every CIDR, as the fewest CIDRs (sorted: IPv4 first, then by address). Contained and adjacent
 * blocks merge: `10.0.0.0/25` and `10.0.0.128/25` are `10.0.0.0/24`.
 * @example
 * cidrUnion([cidr('10.0.0.1/32'), cidr('10.0.0.0/32')]).map(formatCidr); // ['10.0.0.0/31']
 */
export function cidrUnion(cidrs: readonly IpCidr[]): IpCidr[] {
  return toCidrs(rangesOf(cidrs));
}

/**
 * The addresses in both lists, as the fewest CIDRs (sorted as {@link cidrUnion}); never across versions.
 * @example
 * cidrIntersect([cidr('10.0.0.0/24')], [cidr('10.0.0.128/25'), cidr('10.1.0.0/16')]).map(formatCidr); // ['10.0.0.128/25']
 */
export function cidrIntersect(a: readonly IpCidr[], b: readonly IpCidr[]): IpCidr[] {
  const [x, y] = [rangesOf(a), rangesOf(b)];
  const out: Range[] = [];
  const before = (p: Range, q: Range) => p.version < q.version || (p.version === q.version && p.hi < q.hi);
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    const [p, q] = [x[i]!, y[j]!];
    if (p.version === q.version) {
      const lo = p.lo > q.lo ? p.lo : q.lo;
      const hi = p.hi < q.hi ? p.hi : q.hi;
      if (lo <= hi) out.push({ version: p.version, lo, hi });
    }
    if (before(p, q)) i++;
    else j++;
  }
  return toCidrs(out);
}
