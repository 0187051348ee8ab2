/**
 * IP addresses and CIDRs as integers, over ipaddr.js. Values are bigints for both families, so IPv4 and IPv6 share
 * one code path (a /64 has 2^64 addresses; numbers would not do).
 *
 * Parsing is strict by default: dotted-quad IPv4 without leading zeros (no `10.1`, `0x0a.0.0.1` or octal `010.0.0.1`,
 * which ipaddr.js would read), IPv6 without a zone (`fe80::1%eth0`). Kubernetes reads IPv4 the way Go did before 1.17
 * (leading zeros allowed, as decimal): `{ leadingZeros: true }` does the same.
 */
import ipaddr from 'ipaddr.js';

/** The IP version, as Neutron's `ip_version` and Python's `ipaddress` spell it. */
export type IpVersion = 4 | 6;

/** An address as an integer. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) stays IPv6 (see {@link unmapIPv4}). */
export interface IpAddress {
  readonly version: IpVersion;
  readonly value: bigint;
}

/** A CIDR block: its first address (host bits cleared) and prefix length. */
export interface IpCidr {
  readonly version: IpVersion;
  readonly network: bigint;
  readonly prefixLength: number;
}

/** How to read IPv4 literals. */
export interface IpParseOptions {
  /** Accept leading zeros in IPv4 octets and read them as decimal (`010.1.1.1` is 10.1.1.1), as Kubernetes does. */
  leadingZeros?: boolean;
}

/** Address width in bits: 32 or 128. */
export function addressBits(version: IpVersion): 32 | 128 {
  return version === 4 ? 32 : 128;
}

/** The longest address text: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`. */
const MAX_IP_TEXT = 45;
const SLOPPY_IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function toValue(bytes: readonly number[]): bigint {
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

/** The address's bytes in network order (4 or 16), for checks that read octets. */
export function ipBytes(ip: IpAddress): number[] {
  const bytes: number[] = [];
  for (let shift = BigInt(addressBits(ip.version) - 8); shift >= 0n; shift -= 8n) {
    bytes.push(Number((ip.value >> shift) & 0xffn));
  }
  return bytes;
}

/**
 * Parses an IPv4 or IPv6 address; undefined when `text` is not one.
 * @example
 * parseIp('10.0.0.1');  // { version: 4, value: 167772161n }
 * parseIp('010.0.0.1'); // undefined; with { leadingZeros: true }: 10.0.0.1
 */
export function parseIp(text: string, options: IpParseOptions = {}): IpAddress | undefined {
  // A longer text (often a user's) is never handed to ipaddr.js's regular expressions.
  if (text.length > MAX_IP_TEXT) return undefined;
  if (options.leadingZeros) {
    const m = SLOPPY_IPV4.exec(text);
    if (m) {
      const octets = m.slice(1).map(Number);
      return octets.every((o) => o <= 255) ? { version: 4, value: toValue(octets) } : undefined;
    }
  } else if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    return { version: 4, value: toValue(ipaddr.IPv4.parse(text).toByteArray()) };
  }
  // ipaddr.js accepts zones; an address with one is not a plain address.
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  return { version: 6, value: toValue(ipaddr.IPv6.parse(text).toByteArray()) };
}

/** True for an IPv4-mapped IPv6 address (`::ffff:0:0/96`). */
export function isIPv4Mapped(ip: IpAddress): boolean {
  return ip.version === 6 && ip.value >> 32n === 0xffffn;
}

/**
 * The IPv4 address an IPv4-mapped IPv6 address stands for; any other address unchanged. Kubernetes (Go's `To4`)
 * counts `::ffff:1.2.3.4` as IPv4.
 */
export function unmapIPv4(ip: IpAddress): IpAddress {
  return isIPv4Mapped(ip) ? { version: 4, value: ip.value & 0xffffffffn } : ip;
}

/**
 * The text form: dotted quad, or RFC 5952 IPv6 (`fd00::1`). Only the low 32 or 128 bits of `value` count.
 * @example
 * formatIp(4, 167772161n); // '10.0.0.1'
 */
export function formatIp(version: IpVersion, value: bigint): string {
  return ipaddr.fromByteArray(ipBytes({ version, value })).toString();
}

/** A CIDR and the address it was written with (the two differ when host bits are set: `10.0.0.5/24`). */
export interface ParsedCidr {
  cidr: IpCidr;
  address: IpAddress;
}

/**
 * Parses `address/prefixLength` (prefix length in decimal, at most the address width), clearing host bits; undefined
 * when `text` is not a CIDR. The prefix length counts the bits of the address as written, so an IPv4-mapped IPv6
 * address is an IPv6 network here.
 * @example
 * parseCidr('10.0.0.5/24'); // { cidr: { version: 4, network: 10.0.0.0, prefixLength: 24 }, address: 10.0.0.5 }
 */
export function parseCidr(text: string, options: IpParseOptions = {}): ParsedCidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIp(text.slice(0, slash), options);
  const lengthText = text.slice(slash + 1);
  if (!address || !/^\d{1,3}$/.test(lengthText)) return undefined;
  const prefixLength = Number(lengthText);
  const hostBits = addressBits(address.version) - prefixLength;
  if (hostBits < 0) return undefined;
  const network = (address.value >> BigInt(hostBits)) << BigInt(hostBits);
  return { cidr: { version: address.version, network, prefixLength }, address };
}

/** `network/prefixLength`, e.g. `10.0.0.0/24`. */
export function formatCidr(cidr: IpCidr): string {
  return `${formatIp(cidr.version, cidr.network)}/${cidr.prefixLength}`;
}

/** How many addresses the CIDR holds (2^32 for `0.0.0.0/0`). */
export function cidrSize(cidr: IpCidr): bigint {
  return 1n << BigInt(addressBits(cidr.version) - cidr.prefixLength);
}

/** The CIDR's last address (the IPv4 broadcast address). */
export function cidrLast(cidr: IpCidr): bigint {
  return cidr.network + cidrSize(cidr) - 1n;
}

/** True when `ip` lies in `cidr`; never across versions. */
export function cidrContains(cidr: IpCidr, ip: IpAddress): boolean {
  return cidr.version === ip.version && ip.value >= cidr.network && ip.value <= cidrLast(cidr);
}

/** True when two CIDRs share any address; never across versions. */
export function cidrsOverlap(a: IpCidr, b: IpCidr): boolean {
  return a.version === b.version && a.network <= cidrLast(b) && b.network <= cidrLast(a);
}

/**
 * `block` without the addresses of `excepts`, as the fewest CIDRs (largest first, then by address): what an ipBlock
 * with `except` becomes where only allow-lists exist (Neutron's security group rules). An except of another version
 * is ignored; one that covers `block` leaves nothing.
 * @example
 * cidrExclude(parseCidr('10.0.0.0/24')!.cidr, [parseCidr('10.0.0.0/25')!.cidr]).map(formatCidr); // ['10.0.0.128/25']
 */
export function cidrExclude(block: IpCidr, excepts: readonly IpCidr[]): IpCidr[] {
  const cuts = excepts.filter((e) => cidrsOverlap(block, e));
  const out: IpCidr[] = [];
  // Halve what a cut overlaps without covering; keep what no cut touches. At most bits × cuts halvings.
  const split = (cidr: IpCidr): void => {
    const touching = cuts.filter((e) => cidrsOverlap(cidr, e));
    if (touching.length === 0) return void out.push(cidr);
    if (touching.some((e) => e.prefixLength <= cidr.prefixLength)) return;
    const half = BigInt(addressBits(cidr.version) - cidr.prefixLength - 1);
    const prefixLength = cidr.prefixLength + 1;
    split({ version: cidr.version, network: cidr.network, prefixLength });
    split({ version: cidr.version, network: cidr.network + (1n << half), prefixLength });
  };
  split(block);
  return out.sort((a, b) => a.prefixLength - b.prefixLength || (a.network < b.network ? -1 : 1));
}
