/**
 * Cluster IPs from the service CIDR, as pkg/registry/core/service/ipallocator hands them out: never the network
 * address (nor, for IPv4, the broadcast address); the first address kept for the `kubernetes` Service; dynamic
 * picks from the upper part of the range first, leaving a low static band for addresses users ask for.
 */
import {
  addressBits,
  formatCidr,
  formatIp,
  isIPv4Mapped,
  parseCidr,
  RavenError,
  type IpVersion,
} from '../../../../src/core/index.ts';
import { parseIpSloppy } from '../validation/ip.ts';
import { OffsetBitmap, staticBandSize } from './bitmap.ts';

/**
 * Upstream caps an IPv6 range at 2^16 addresses (its bitmap would not fit otherwise): a /64 serves only its first
 * 65,535 addresses after the network address.
 */
export const IPV6_RANGE_CAP = 65536;
/** kube-apiserver rejects IPv4 service ranges larger than 2^20 addresses (`the mask must be >= 12`). */
const IPV4_MIN_PREFIX = 12;

type Family = 'IPv4' | 'IPv6';

/**
 * Allocates service cluster IPs from one CIDR (IPv4 or IPv6) in O(1) memory per address bit.
 * @example
 * const ips = new ServiceIpAllocator('10.96.0.0/12');
 * ips.allocate(ips.reservedFirst()); // the `kubernetes` Service
 * ips.allocateNext();                // '10.96.1.1': above the static band
 */
export class ServiceIpAllocator {
  /** The range in canonical form (host bits cleared), as upstream prints it in errors. */
  readonly cidr: string;
  /** The range's address family; addresses of the other family are never in range. */
  readonly family: Family;
  #version: IpVersion;
  #base: bigint;
  #bits: OffsetBitmap;

  /** @throws RavenError `CIDR_INVALID` for a malformed, too large (IPv4 wider than /12) or address-less range. */
  constructor(cidr: string) {
    const bad = (why: string): RavenError => new RavenError('CIDR_INVALID', `service CIDR "${cidr}" ${why}`);
    const parsed = parseCidr(cidr, { leadingZeros: true });
    // An IPv4-mapped IPv6 network ("::ffff:10.0.0.0/104") has no sensible IPv4 reading: refuse it.
    if (!parsed || isIPv4Mapped(parsed.address)) {
      throw bad('is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)');
    }
    const { version, network, prefixLength: prefix } = parsed.cidr;
    const hostBits = addressBits(version) - prefix;
    if (version === 4 && prefix < IPV4_MIN_PREFIX) {
      throw bad(`is too large; for 32-bit addresses, the mask must be >= ${IPV4_MIN_PREFIX}`);
    }
    this.family = version === 4 ? 'IPv4' : 'IPv6';
    this.#version = version;
    this.#base = network;
    this.cidr = formatCidr(parsed.cidr);
    // Full size as upstream's netutils.RangeSize sees it (saturating), then minus network (and IPv4 broadcast).
    const rangeSize = hostBits >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits;
    const usable = version === 4 ? rangeSize - 2 : Math.min(rangeSize, IPV6_RANGE_CAP) - 1;
    if (usable <= 0) throw bad('has no usable addresses');
    // Offset 0 is the first address after the network one: the `kubernetes` Service's, never handed out by
    // allocateNext.
    this.#bits = new OffsetBitmap(usable, staticBandSize(rangeSize, 16, 256, 16), [0]);
  }

  /** How many addresses can be allocated, the reserved first one included. */
  size(): number {
    return this.#bits.size;
  }

  /** How many addresses are allocated. */
  used(): number {
    return this.#bits.count;
  }

  /** The first usable address (`.1`), which the `kubernetes` Service takes with `allocate`. */
  reservedFirst(): string {
    return formatIp(this.#version, this.#base + 1n);
  }

  /** The offset of an address in the usable range, or undefined when it is outside it (or not an address). */
  #offsetOf(ip: string): number | undefined {
    const parsed = parseIpSloppy(ip);
    if (parsed?.version !== this.#version) return undefined;
    const offset = parsed.value - this.#base - 1n;
    return offset >= 0n && offset < BigInt(this.#bits.size) ? Number(offset) : undefined;
  }

  /** True when `ip` is allocated. */
  has(ip: string): boolean {
    const offset = this.#offsetOf(ip);
    return offset !== undefined && this.#bits.has(offset);
  }

  /**
   * Takes a specific address.
   * @throws RavenError `IP_OUT_OF_RANGE` (also for a non-address) or `IP_ALLOCATED`.
   */
  allocate(ip: string): void {
    const offset = this.#offsetOf(ip);
    if (offset === undefined) {
      throw new RavenError(
        'IP_OUT_OF_RANGE',
        `provided IP is not in the valid range. The range of valid IPs is ${this.cidr}`,
      );
    }
    if (!this.#bits.add(offset)) throw new RavenError('IP_ALLOCATED', 'provided IP is already allocated');
  }

  /**
   * Takes a free address: the upper part of the range first, never the reserved first address.
   * @throws RavenError `IP_RANGE_FULL`.
   */
  allocateNext(): string {
    const offset = this.#bits.next();
    if (offset === undefined) throw new RavenError('IP_RANGE_FULL', 'range is full');
    return formatIp(this.#version, this.#base + 1n + BigInt(offset));
  }

  /** Gives an address back; false (and nothing happens) when it was not allocated or is not in the range. */
  release(ip: string): boolean {
    const offset = this.#offsetOf(ip);
    return offset !== undefined && this.#bits.delete(offset);
  }
}

/**
 * The cluster's service ranges (kube-apiserver `--service-cluster-ip-range=<cidr>[,<cidr>]`): one allocator per IP
 * family, the first range's family the cluster's default (primary) one. Two ranges make the cluster dual-stack.
 * @example
 * const ranges = new ServiceIpFamilies('10.96.0.0/12,fd00:10:96::/112');
 * ranges.dualStack;          // true
 * ranges.of('IPv6')?.cidr;   // 'fd00:10:96::/112'
 */
export class ServiceIpFamilies {
  /** The first range's allocator: the default family's, and the `kubernetes` Service's. */
  readonly primary: ServiceIpAllocator;
  readonly #byFamily = new Map<Family, ServiceIpAllocator>();

  /**
   * @throws RavenError `CIDR_INVALID` for a bad range (see {@link ServiceIpAllocator}), more than two, or two of one
   *   family — kube-apiserver's own rules.
   */
  constructor(cidrs: string | readonly string[]) {
    const list = typeof cidrs === 'string' ? cidrs.split(',').map((c) => c.trim()) : cidrs;
    if (list.length === 0 || list.length > 2)
      throw new RavenError(
        'CIDR_INVALID',
        `service CIDRs "${list.join(',')}": give one range, or two of different IP families (dual-stack)`,
      );
    for (const cidr of list) {
      const allocator = new ServiceIpAllocator(cidr);
      if (this.#byFamily.has(allocator.family))
        throw new RavenError(
          'CIDR_INVALID',
          `service CIDRs "${list.join(',')}": in dual-stack mode the ranges must be of different IP families`,
        );
      this.#byFamily.set(allocator.family, allocator);
    }
    this.primary = this.#byFamily.values().next().value!;
  }

  /** Whether both families are configured. */
  get dualStack(): boolean {
    return this.#byFamily.size === 2;
  }

  /** The default family (the first range's). */
  get defaultFamily(): Family {
    return this.primary.family;
  }

  /** The allocator of a family, or undefined when that family is not configured. */
  of(family: string): ServiceIpAllocator | undefined {
    return this.#byFamily.get(family as Family);
  }

  /** The allocator whose family `ip` is of (its range may still not hold it), or undefined. */
  forIp(ip: string): ServiceIpAllocator | undefined {
    const parsed = parseIpSloppy(ip);
    return parsed ? this.#byFamily.get(parsed.version === 4 ? 'IPv4' : 'IPv6') : undefined;
  }
}
