/**
 * IP and CIDR syntax as Kubernetes validation accepts it (netutils.ParseIPSloppy): dotted-quad IPv4 (leading zeros
 * tolerated, as in objects written before Go 1.17), IPv6 without a zone; an IPv4-mapped IPv6 address counts as IPv4.
 */
import { ipBytes, parseCidr, parseIp, unmapIPv4, type IpAddress } from '../../../../src/core/index.ts';

/** An address as Kubernetes reads it (ParseIPSloppy), IPv4-mapped IPv6 as its IPv4 address; undefined when not one. */
export function parseIpSloppy(value: string): IpAddress | undefined {
  const ip = parseIp(value, { leadingZeros: true });
  return ip && unmapIPv4(ip);
}

/** The address family of a literal, or undefined when it is not an IP address. */
export function ipFamilyOf(value: string): 'IPv4' | 'IPv6' | undefined {
  const ip = parseIpSloppy(value);
  return ip && (ip.version === 4 ? 'IPv4' : 'IPv6');
}

/** True for `address/prefix` with a prefix length that fits the family (as written: 128 bits for `::ffff:a.b.c.d`). */
export function isValidCidr(value: string): boolean {
  return parseCidr(value, { leadingZeros: true }) !== undefined;
}

/**
 * ValidateNonSpecialIP: why an address cannot be an endpoint (unspecified, loopback, link-local unicast or
 * link-local multicast), or `must be a valid IP address` when it is not one. Go's net.IP methods look at the IPv4
 * form whenever there is one (IPv4-mapped addresses included), as {@link parseIpSloppy} gives it.
 */
export function specialIpProblems(value: string): string[] {
  const ip = parseIpSloppy(value);
  if (ip === undefined) return ['must be a valid IP address'];
  const bytes = ipBytes(ip);
  const [a = 0, b = 0, c = 0] = bytes;
  const v4 = ip.version === 4;
  const problems: string[] = [];
  if (bytes.every((x) => x === 0)) problems.push(`may not be unspecified (${value})`);
  if (v4 ? a === 127 : bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1) {
    problems.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  }
  if (v4 ? a === 169 && b === 254 : a === 0xfe && (b & 0xc0) === 0x80) {
    problems.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  }
  if (v4 ? a === 224 && b === 0 && c === 0 : a === 0xff && (b & 0x0f) === 0x02) {
    problems.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  }
  return problems;
}
