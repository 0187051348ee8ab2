import ipaddr from 'ipaddr.js';

/** An IPv4 CIDR as its first address and size, as plain numbers (for carving and picking addresses). */
export function ipv4Range(cidr: string): { first: number; size: number } {
  const [address, bits] = ipaddr.IPv4.parseCIDR(cidr);
  const size = 2 ** (32 - bits);
  const value = address.toByteArray().reduce((n, b) => n * 256 + b, 0);
  return { first: value - (value % size), size };
}

/** The dotted form of a number from {@link ipv4Range}. */
export function ipv4String(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}
