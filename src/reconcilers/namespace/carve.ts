import { cidrContains, cidrsOverlap, formatCidr, parseCidr, RavenError, type IpCidr } from '../../core/index.ts';

/**
 * The first `/prefixLength` block of `range` that overlaps none of `used` (IPv4), or undefined when the range is
 * full. This is how the `namespace` strategy carves per-namespace subnets out of a configured range
 * (`FLANNEL_NET`-style) when no Neutron subnet pool is configured. `preferred` — the block a namespace had before
 * its subnet was lost, so its pods can keep their addresses — is taken when it is such a block and free.
 * @throws RavenError `CIDR_INVALID` when `range` is not an IPv4 CIDR (the configuration check keeps that out).
 */
export function carveSubnet(
  range: string,
  prefixLength: number,
  used: readonly string[],
  preferred?: string,
): string | undefined {
  const outer = parseCidr(range)?.cidr;
  if (outer?.version !== 4) throw new RavenError('CIDR_INVALID', `${JSON.stringify(range)} is not an IPv4 CIDR`);
  if (prefixLength < outer.prefixLength || prefixLength > 30) return undefined;
  const taken = used.map((c) => parseCidr(c)?.cidr).filter((c): c is IpCidr => c?.version === 4);
  const wish = preferred === undefined ? undefined : parseCidr(preferred)?.cidr;
  if (
    wish?.version === 4 &&
    wish.prefixLength === prefixLength &&
    formatCidr(wish) === preferred &&
    cidrContains(outer, { version: 4, value: wish.network }) &&
    !taken.some((t) => cidrsOverlap(t, wish))
  )
    return preferred;
  const size = 1n << BigInt(32 - prefixLength);
  const blocks = 1n << BigInt(prefixLength - outer.prefixLength);
  for (let i = 0n; i < blocks; i++) {
    const block: IpCidr = { version: 4, network: outer.network + i * size, prefixLength };
    if (!taken.some((t) => cidrsOverlap(t, block))) return formatCidr(block);
  }
  return undefined;
}
