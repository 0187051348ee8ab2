/**
 * CIDR checks for subnet ranges, as Neutron would judge them: a canonical `network/prefix` (no host bits set, which
 * Neutron refuses with "… is recommended"), dotted-quad IPv4 or IPv6.
 */
import ipaddr from 'ipaddr.js';

const IPV4_RE = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A parsed CIDR. */
export interface Cidr {
  family: 'ipv4' | 'ipv6';
  address: ipaddr.IPv4 | ipaddr.IPv6;
  prefix: number;
}

/** The widest prefix that still leaves a subnet room for a gateway and an address or two. */
export const maxSubnetPrefix = { ipv4: 30, ipv6: 126 } as const;

/** Parses `a.b.c.d/n` or `x::/n`; undefined when it is not a CIDR. */
export function parseCidr(value: string): Cidr | undefined {
  const slash = value.indexOf('/');
  if (slash < 0) return undefined;
  const addr = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (IPV4_RE.test(addr)) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(addr) || prefix > 32) return undefined;
    return { family: 'ipv4', address: ipaddr.IPv4.parse(addr), prefix };
  }
  if (addr.includes(':') && !addr.includes('%') && ipaddr.IPv6.isValid(addr) && prefix <= 128) {
    return { family: 'ipv6', address: ipaddr.IPv6.parse(addr), prefix };
  }
  return undefined;
}

function networkOf(cidr: Cidr): string {
  const net =
    cidr.family === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${cidr.address.toString()}/${cidr.prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${cidr.address.toString()}/${cidr.prefix}`);
  return net.toString();
}

/**
 * Why `value` is not a usable subnet range, or undefined when it is. `subnet` also refuses ranges too small to hold a
 * gateway and an address (wider than /30, /126).
 */
export function cidrProblem(value: string, { subnet = false } = {}): string | undefined {
  const cidr = parseCidr(value);
  if (!cidr) return `${JSON.stringify(value)} is not a valid CIDR`;
  const network = networkOf(cidr);
  if (network !== cidr.address.toString()) {
    return `${JSON.stringify(value)} has host bits set; did you mean "${network}/${cidr.prefix}"?`;
  }
  if (subnet && cidr.prefix > maxSubnetPrefix[cidr.family]) {
    return `${JSON.stringify(value)} is too small for a subnet (at most /${maxSubnetPrefix.ipv4} for IPv4, /${maxSubnetPrefix.ipv6} for IPv6)`;
  }
  return undefined;
}

/** True when two valid CIDRs share any address (one contains the other's network). */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  if (!x || !y || x.family !== y.family) return false;
  const xa = x.address as ipaddr.IPv4;
  const ya = y.address as ipaddr.IPv4;
  return xa.match(ya, x.prefix) || ya.match(xa, y.prefix);
}

/**
 * Why a dual-stack list of ranges is not one: empty, more than two, or two of one family (each range's own problems
 * are reported by {@link cidrProblem}). Undefined when it is fine.
 */
export function cidrsProblem(values: readonly string[]): string | undefined {
  if (values.length === 0) return 'must hold one range, or two: one per IP family';
  if (values.length > 2) return `holds ${values.length} ranges: at most two, one IPv4 and one IPv6`;
  const [a, b] = values.map((v) => parseCidr(v));
  if (a && b && a.family === b.family) {
    const family = a.family === 'ipv4' ? 'IPv4' : 'IPv6';
    return `${JSON.stringify(values[0])} and ${JSON.stringify(values[1])} are both ${family}: give one range per IP family`;
  }
  return undefined;
}

/** A range's family as Kubernetes names it. */
export function familyOf(value: string): 'IPv4' | 'IPv6' | undefined {
  const c = parseCidr(value);
  return c ? (c.family === 'ipv4' ? 'IPv4' : 'IPv6') : undefined;
}
