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
