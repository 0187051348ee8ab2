import ipaddr from 'ipaddr.js';

/**
 * IP and CIDR arithmetic on bigints, so IPv4 and IPv6 share one code path (a /64 has 2^64 addresses; numbers would
 * not do).
 */
export type IpVersion = 4 | 6;

export interface Ip {
  version: IpVersion;
  value: bigint;
}

export interface Cidr {
  version: IpVersion;
  /** The first address (host bits cleared). */
  network: bigint;
  prefixlen: number;
}

const v4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function bitsOf(version: IpVersion): number {
  return version === 4 ? 32 : 128;
}

/** Parses a dotted-quad IPv4 or an IPv6 address (no zone, no shorthand IPv4 like `10.1`). */
export function parseIp(text: string): Ip | undefined {
  if (v4.test(text))
    return { version: 4, value: text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n) };
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const bytes = ipaddr.IPv6.parse(text).toByteArray();
  return { version: 6, value: bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n) };
}

export function formatIp(version: IpVersion, value: bigint): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
  const bytes: number[] = [];
  for (let shift = 120n; shift >= 0n; shift -= 8n) bytes.push(Number((value >> shift) & 255n));
  return ipaddr.fromByteArray(bytes).toString();
}

export function sizeOf(cidr: Cidr): bigint {
  return 1n << BigInt(bitsOf(cidr.version) - cidr.prefixlen);
}

export function lastOf(cidr: Cidr): bigint {
  return cidr.network + sizeOf(cidr) - 1n;
}

/**
 * Parses `a.b.c.d/n`. Returns `{ cidr, hostBits }` where hostBits says the address was not the network address
 * (Neutron rejects such subnet CIDRs with a hint), or undefined when not a CIDR at all.
 */
export function parseCidr(text: string): { cidr: Cidr; hostBits: boolean } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(lenText)) return undefined;
  const prefixlen = Number(lenText);
  if (prefixlen > bitsOf(ip.version)) return undefined;
  const size = 1n << BigInt(bitsOf(ip.version) - prefixlen);
  const network = ip.value - (ip.value % size);
  return { cidr: { version: ip.version, network, prefixlen }, hostBits: network !== ip.value };
}

export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr.version, cidr.network)}/${cidr.prefixlen}`;
}

export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  return cidr.version === ip.version && ip.value >= cidr.network && ip.value <= lastOf(cidr);
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.version === b.version && a.network <= lastOf(b) && b.network <= lastOf(a);
}
