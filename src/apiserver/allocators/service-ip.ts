/**
 * Cluster IPs from the service CIDR, as pkg/registry/core/service/ipallocator hands them out: never the network
 * address (nor, for IPv4, the broadcast address); the first address kept for the `kubernetes` Service; dynamic
 * picks from the upper part of the range first, leaving a low static band for addresses users ask for.
 */
import ipaddr from 'ipaddr.js';
import { RavenError } from '../../core/index.ts';
import { OffsetBitmap, staticBandSize } from './bitmap.ts';

/**
 * Upstream caps an IPv6 range at 2^16 addresses (its bitmap would not fit otherwise): a /64 serves only its first
 * 65,535 addresses after the network address.
 */
export const IPV6_RANGE_CAP = 65536;
/** kube-apiserver rejects IPv4 service ranges larger than 2^20 addresses (`the mask must be >= 12`). */
const IPV4_MIN_PREFIX = 12;

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

type Family = 'IPv4' | 'IPv6';

/** An address as an integer, or undefined when `text` is not one. IPv4-mapped IPv6 literals count as IPv4. */
function parseIp(text: string): { family: Family; value: bigint } | undefined {
  const m = IPV4_RE.exec(text);
  if (m) {
    const octets = m.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    return { family: 'IPv4', value: octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0n) };
  }
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const v6 = ipaddr.IPv6.parse(text);
  if (v6.isIPv4MappedAddress()) return parseIp(v6.toIPv4Address().toString());
  return { family: 'IPv6', value: v6.toByteArray().reduce((acc, b) => (acc << 8n) | BigInt(b), 0n) };
}

function formatIp(family: Family, value: bigint): string {
  const count = family === 'IPv4' ? 4 : 16;
  const bytes: number[] = [];
  for (let i = count - 1; i >= 0; i--) bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return family === 'IPv4' ? bytes.join('.') : ipaddr.fromByteArray(bytes).toString();
}

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
  #base: bigint;
  #bits: OffsetBitmap;

  /** @throws RavenError `CIDR_INVALID` for a malformed, too large (IPv4 wider than /12) or address-less range. */
  constructor(cidr: string) {
    const bad = (why: string): RavenError => new RavenError('CIDR_INVALID', `service CIDR "${cidr}" ${why}`);
    const slash = cidr.indexOf('/');
    const address = slash > 0 ? cidr.slice(0, slash) : '';
    const ip = parseIp(address);
    const prefixText = cidr.slice(slash + 1);
    const width = ip?.family === 'IPv6' ? 128 : 32;
    // An IPv4-mapped IPv6 network ("::ffff:10.0.0.0/104") has no sensible IPv4 reading: refuse it.
    const mapped = ip?.family === 'IPv4' && address.includes(':');
    if (!ip || mapped || !/^\d{1,3}$/.test(prefixText) || Number(prefixText) > width) {
      throw bad('is not a valid CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)');
    }
    const prefix = Number(prefixText);
    const hostBits = width - prefix;
    if (ip.family === 'IPv4' && prefix < IPV4_MIN_PREFIX) {
      throw bad(`is too large; for 32-bit addresses, the mask must be >= ${IPV4_MIN_PREFIX}`);
    }
    this.family = ip.family;
    this.#base = (ip.value >> BigInt(hostBits)) << BigInt(hostBits);
    this.cidr = `${formatIp(this.family, this.#base)}/${prefix}`;
    // Full size as upstream's netutils.RangeSize sees it (saturating), then minus network (and IPv4 broadcast).
    const rangeSize = hostBits >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits;
    const usable = this.family === 'IPv4' ? rangeSize - 2 : Math.min(rangeSize, IPV6_RANGE_CAP) - 1;
    if (usable <= 0) throw bad('has no usable addresses');
    // Offset 0 is the first address after the network one: the `kubernetes` Service's, never handed out by allocateNext.
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
    return formatIp(this.family, this.#base + 1n);
  }

  /** The offset of an address in the usable range, or undefined when it is outside it (or not an address). */
  #offsetOf(ip: string): number | undefined {
    const parsed = parseIp(ip);
    if (parsed?.family !== this.family) return undefined;
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
    return formatIp(this.family, this.#base + 1n + BigInt(offset));
  }

  /** Gives an address back; false (and nothing happens) when it was not allocated or is not in the range. */
  release(ip: string): boolean {
    const offset = this.#offsetOf(ip);
    return offset !== undefined && this.#bits.delete(offset);
  }
}
