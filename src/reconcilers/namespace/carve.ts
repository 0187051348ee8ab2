import { cidrsOverlap, formatCidr, parseCidr, RavenError, type IpCidr } from '../../core/index.ts';

/**
 * The first `/prefixLength` block of `range` that overlaps none of `used` (IPv4), or undefined when the range is
 * full. This is how the `namespace` strategy carves per-namespace subnets out of a configured range
 * (`FLANNEL_NET`-style) when no Neutron subnet pool is configured.
 * @throws RavenError `CIDR_INVALID` when `range` is not an IPv4 CIDR (the configuration check keeps that out).
 */
export function carveSubnet(range: string, prefixLength: number, used: readonly string[]): string | undefined {
  const outer = parseCidr(range)?.cidr;
  if (outer?.version !== 4) throw new RavenError('CIDR_INVALID', `${JSON.stringify(range)} is not an IPv4 CIDR`);
  if (prefixLength < outer.prefixLength || prefixLength > 30) return undefined;
  const taken = used.map((c) => parseCidr(c)?.cidr).filter((c): c is IpCidr => c?.version === 4);
  const size = 1n << BigInt(32 - prefixLength);
  const blocks = 1n << BigInt(prefixLength - outer.prefixLength);
  for (let i = 0n; i < blocks; i++) {
    const block: IpCidr = { version: 4, network: outer.network + i * size, prefixLength };
    if (!taken.some((t) => cidrsOverlap(t, block))) return formatCidr(block);
  }
  return undefined;
}
