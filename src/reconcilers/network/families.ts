/**
 * IP families of the cluster's networks: the ranges a configuration names (one per family, the primary first), the
 * Neutron attributes of a subnet Raven makes on one, and the subnets of a (dual-stack) {@link SubnetInfo}.
 */
import { cidrContains, formatCidr, parseCidr, parseIp } from '../../core/index.ts';
import type { FamilySubnet, SubnetInfo, SubnetRanges } from './types.ts';

export type IpFamily = 'IPv4' | 'IPv6';

/** The ranges a configured choice names: `cidrs`, else `[cidr]`, else none (an existing subnet). */
export function rangesOf(choice: SubnetRanges): readonly string[] {
  return choice.cidrs ?? (choice.cidr !== undefined ? [choice.cidr] : []);
}

/** A CIDR's or an address's family, as Kubernetes names it; undefined when it is neither. */
export function familyOf(text: string): IpFamily | undefined {
  const version = text.includes('/') ? parseCidr(text)?.cidr.version : parseIp(text)?.version;
  return version === 4 ? 'IPv4' : version === 6 ? 'IPv6' : undefined;
}

/** A CIDR in Neutron's canonical spelling (`fd00:10:0::/64` → `fd00:10::/64`), or as given when it is none. */
export function canonicalCidr(text: string): string {
  const parsed = parseCidr(text);
  return parsed ? formatCidr(parsed.cidr) : text;
}

/**
 * The IP version and, for IPv6, the address mode of a subnet Raven creates on `cidr`. IPv6 subnets are
 * `dhcpv6-stateful` for both the router advertisements and the addresses: Neutron then hands each port an address
 * from the pool, for any prefix length (SLAAC needs a /64, and Neutron adds a SLAAC address to every port of the
 * network, whatever its `fixed_ips` ask for).
 */
export function subnetFamilyAttrs(
  cidr: string,
): { ip_version: 4 } | { ip_version: 6; ipv6_ra_mode: 'dhcpv6-stateful'; ipv6_address_mode: 'dhcpv6-stateful' } {
  return familyOf(cidr) === 'IPv6'
    ? { ip_version: 6, ipv6_ra_mode: 'dhcpv6-stateful', ipv6_address_mode: 'dhcpv6-stateful' }
    : { ip_version: 4 };
}

/** The subnets of a pod or service network: the primary family's, then (dual-stack) the other's. */
export function familySubnets(info: SubnetInfo): FamilySubnet[] {
  const primary = { subnetId: info.subnetId, cidr: info.cidr, gatewayIp: info.gatewayIp };
  return info.secondary ? [primary, info.secondary] : [primary];
}

/** The families of a network, the primary first. */
export function familiesOf(info: SubnetInfo): IpFamily[] {
  return familySubnets(info).flatMap((s) => familyOf(s.cidr) ?? []);
}

/** The subnet of `info` holding `address`, or undefined. */
export function subnetHolding(info: SubnetInfo, address: string): FamilySubnet | undefined {
  const ip = parseIp(address);
  return familySubnets(info).find((s) => {
    const c = parseCidr(s.cidr)?.cidr;
    return ip && c && cidrContains(c, ip);
  });
}
