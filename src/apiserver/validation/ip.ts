/**
 * IP and CIDR syntax as Kubernetes validation accepts it (netutils.ParseIPSloppy): dotted-quad IPv4 (leading zeros
 * tolerated, as in objects written before Go 1.17), IPv6 without a zone; an IPv4-mapped IPv6 address counts as IPv4.
 */
import ipaddr from 'ipaddr.js';

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The address family of a literal, or undefined when it is not an IP address. */
export function ipFamilyOf(value: string): 'IPv4' | 'IPv6' | undefined {
  const m = IPV4_RE.exec(value);
  if (m) return m.slice(1).every((part) => Number(part) <= 255) ? 'IPv4' : undefined;
  if (value.includes('%') || !ipaddr.IPv6.isValid(value)) return undefined;
  return ipaddr.IPv6.parse(value).isIPv4MappedAddress() ? 'IPv4' : 'IPv6';
}

/** True for `address/prefix` with a prefix length that fits the family. */
export function isValidCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const family = ipFamilyOf(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (family === undefined || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (value.slice(0, slash).includes(':') ? 128 : 32);
}

/** The bytes Go's net.IP methods look at: the IPv4 form whenever there is one (IPv4-mapped addresses included). */
function bytesOf(value: string, family: 'IPv4' | 'IPv6'): number[] {
  if (family === 'IPv6') return ipaddr.IPv6.parse(value).toByteArray();
  return value.includes(':') ? ipaddr.IPv6.parse(value).toIPv4Address().toByteArray() : value.split('.').map(Number);
}

/**
 * ValidateNonSpecialIP: why an address cannot be an endpoint (unspecified, loopback, link-local unicast or
 * link-local multicast), or `must be a valid IP address` when it is not one.
 */
export function specialIpProblems(value: string): string[] {
  const family = ipFamilyOf(value);
  if (family === undefined) return ['must be a valid IP address'];
  const bytes = bytesOf(value, family);
  const [a = 0, b = 0, c = 0] = bytes;
  const v4 = family === 'IPv4';
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
