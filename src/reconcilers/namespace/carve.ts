import ipaddr from 'ipaddr.js';
import { ipv4Range, ipv4String } from '../common/ipv4.ts';

/**
 * The first `/prefixLength` block of `range` that overlaps none of `used` (IPv4), or undefined when the range is
 * full. This is how the `namespace` strategy carves per-namespace subnets out of a configured range
 * (`FLANNEL_NET`-style) when no Neutron subnet pool is configured.
 */
export function carveSubnet(range: string, prefixLength: number, used: readonly string[]): string | undefined {
  const bits = ipaddr.IPv4.parseCIDR(range)[1];
  if (prefixLength < bits || prefixLength > 30) return undefined;
  const { first: start } = ipv4Range(range);
  const size = 2 ** (32 - prefixLength);
  const blocks = 2 ** (prefixLength - bits);
  const taken = used
    .filter((c) => ipaddr.isValidCIDR(c) && ipaddr.parseCIDR(c)[0].kind() === 'ipv4')
    .map((c) => {
      const r = ipv4Range(c);
      return [r.first, r.first + r.size] as const;
    });
  for (let i = 0; i < blocks; i++) {
    const lo = start + i * size;
    const hi = lo + size;
    if (taken.some(([a, b]) => a < hi && lo < b)) continue;
    return `${ipv4String(lo)}/${prefixLength}`;
  }
  return undefined;
}
