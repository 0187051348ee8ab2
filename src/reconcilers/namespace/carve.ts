import {
  addressBits,
  cidrContains,
  cidrLast,
  cidrsOverlap,
  formatCidr,
  parseCidr,
  RavenError,
  type IpCidr,
} from '../../core/index.ts';

/** The widest prefix a carved subnet may have: room for a gateway and an address or two. */
const MAX_PREFIX = { 4: 30, 6: 126 } as const;

/**
 * The first `/prefixLength` block of `range` that overlaps none of `used` (of the range's family), or undefined when
 * the range is full. This is how the `namespace` strategy carves per-namespace subnets out of a configured range
 * (`FLANNEL_NET`-style, one range per IP family) when no Neutron subnet pool is configured. `preferred` — the block a
 * namespace had before its subnet was lost, so its pods can keep their addresses — is taken when it is such a block
 * and free. A used block is stepped over whole, so a /48 of /64s costs what its used subnets number, not 2^16 tries.
 * @throws RavenError `CIDR_INVALID` when `range` is not a CIDR (the configuration check keeps that out).
 */
export function carveSubnet(
  range: string,
  prefixLength: number,
  used: readonly string[],
  preferred?: string,
): string | undefined {
  const outer = parseCidr(range)?.cidr;
  if (!outer) throw new RavenError('CIDR_INVALID', `${JSON.stringify(range)} is not a CIDR`);
  const { version } = outer;
  if (prefixLength < outer.prefixLength || prefixLength > MAX_PREFIX[version]) return undefined;
  const taken = used.map((c) => parseCidr(c)?.cidr).filter((c): c is IpCidr => c?.version === version);
  const wish = preferred === undefined ? undefined : parseCidr(preferred)?.cidr;
  if (
    wish?.version === version &&
    wish.prefixLength === prefixLength &&
    formatCidr(wish) === preferred &&
    cidrContains(outer, { version, value: wish.network }) &&
    !taken.some((t) => cidrsOverlap(t, wish))
  )
    return preferred;
  const size = 1n << BigInt(addressBits(version) - prefixLength);
  const end = cidrLast(outer);
  for (let network = outer.network; network <= end;) {
    const block: IpCidr = { version, network, prefixLength };
    const clash = taken.find((t) => cidrsOverlap(t, block));
    if (!clash) return formatCidr(block);
    // Past the clashing subnet, at the next block boundary.
    const after = cidrLast(clash) + 1n;
    network = after <= network ? network + size : ((after + size - 1n) / size) * size;
  }
  return undefined;
}
