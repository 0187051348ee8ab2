import ipaddr from 'ipaddr.js';

/**
 * The first `/prefixLength` block of `range` that overlaps none of `used` (IPv4), or undefined when the range is
 * full. This is how the `namespace` strategy carves per-namespace subnets out of a configured range
 * (`FLANNEL_NET`-style) when no Neutron subnet pool is configured.
 */
export function carveSubnet(range: string, prefixLength: number, used: readonly string[]): string | undefined {
  const [, bits] = ipaddr.IPv4.parseCIDR(range);
  if (prefixLength < bits || prefixLength > 30) return undefined;
  const toInt = (a: ipaddr.IPv4) => a.toByteArray().reduce((n, b) => n * 256 + b, 0);
  const start = toInt(ipaddr.IPv4.networkAddressFromCIDR(range));
  const size = 2 ** (32 - prefixLength);
  const blocks = 2 ** (prefixLength - bits);
  const taken = used
    .filter((c) => ipaddr.isValidCIDR(c) && ipaddr.parseCIDR(c)[0].kind() === 'ipv4')
    .map((c) => {
      const first = toInt(ipaddr.IPv4.networkAddressFromCIDR(c));
      return [first, first + 2 ** (32 - ipaddr.parseCIDR(c)[1])] as const;
    });
  for (let i = 0; i < blocks; i++) {
    const lo = start + i * size;
    const hi = lo + size;
    if (taken.some(([a, b]) => a < hi && lo < b)) continue;
    const bytes = [24, 16, 8, 0].map((shift) => Math.floor(lo / 2 ** shift) % 256);
    return `${bytes.join('.')}/${prefixLength}`;
  }
  return undefined;
}
