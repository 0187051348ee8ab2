import {
  addressBits,
  cidrContains,
  cidrLast,
  formatIp,
  parseCidr,
  parseIp,
  type IpCidr,
  type IpVersion,
} from '../../../../src/core/index.ts';
import { neutronError, text } from '../http.ts';
import { nerr } from './errors.ts';
import type { FixedIp, NetworkRecord, NeutronStore, SubnetPoolRecord, SubnetRecord } from './store.ts';

/**
 * Neutron's built-in IPAM: addresses are taken at random from a subnet's allocation pools (as Neutron's IPAM
 * driver picks a random free address from a window), never twice; subnet pools hand out CIDRs best-fit, first
 * address first (`neutron/ipam/subnet_alloc.py`), so consecutive requests get consecutive blocks.
 */

const routerOwners = new Set([
  'network:router_interface',
  'network:router_interface_distributed',
  'network:ha_router_replicated_interface',
]);

function inPools(subnet: SubnetRecord, value: bigint): boolean {
  return subnet.pools.some((p) => value >= p.start && value <= p.end);
}

/** Takes one address of a subnet for a port (the caller knows it is free). */
export function takeIp(subnet: SubnetRecord, ip: string, portId: string): void {
  const parsed = parseIp(ip);
  if (parsed) take(subnet, parsed.value, portId);
}

function take(subnet: SubnetRecord, value: bigint, portId: string): void {
  subnet.allocated.set(value, portId);
  if (inPools(subnet, value)) subnet.allocatedInPools++;
}

/** Gives an address back. */
export function releaseIp(subnet: SubnetRecord, ip: string): void {
  const parsed = parseIp(ip);
  if (!parsed || !subnet.allocated.delete(parsed.value)) return;
  if (inPools(subnet, parsed.value)) subnet.allocatedInPools--;
}

/** A random free address from the pools, or undefined when they are full. */
function randomFree(store: NeutronStore, subnet: SubnetRecord): bigint | undefined {
  if (subnet.allocatedInPools >= subnet.poolSize) return undefined;
  let offset = store.random.bigint(subnet.poolSize);
  // Linear probing from a random start: finds a free address in at most poolSize steps (there is one).
  for (let tries = 0n; tries < subnet.poolSize; tries++, offset = (offset + 1n) % subnet.poolSize) {
    let rest = offset;
    for (const pool of subnet.pools) {
      const size = pool.end - pool.start + 1n;
      if (rest < size) {
        const value = pool.start + rest;
        if (!subnet.allocated.has(value)) return value;
        break;
      }
      rest -= size;
    }
  }
  return undefined;
}

/** Can `value` be a fixed IP of this subnet at all (inside the CIDR, not the IPv4 network/broadcast address)? */
function usable(subnet: SubnetRecord, value: bigint): boolean {
  const c = subnet.parsed;
  if (subnet.ip_version === 4 && c.prefixLength < 31 && (value === c.network || value === cidrLast(c))) return false;
  return cidrContains(c, { version: c.version, value });
}

/** SLAAC and DHCPv6-stateless subnets: their addresses come from the port's MAC, not from the pool. */
export function isAutoAddress(subnet: SubnetRecord): boolean {
  return subnet.ipv6_address_mode === 'slaac' || subnet.ipv6_address_mode === 'dhcpv6-stateless';
}

/** The EUI-64 address of `mac` in a /64 (`fd00::` + `fa:16:3e:3d:31:a2` → `fd00::f816:3eff:fe3d:31a2`). */
function eui64(subnet: SubnetRecord, mac: string): bigint {
  const bytes = mac.split(':').map((b) => BigInt(parseInt(b, 16)));
  const id = [bytes[0]! ^ 2n, bytes[1]!, bytes[2]!, 0xffn, 0xfen, bytes[3]!, bytes[4]!, bytes[5]!];
  return subnet.parsed.network + id.reduce((acc, b) => (acc << 8n) | b, 0n);
}

/**
 * Allocates a port's addresses: the requested `fixed_ips` (each `{subnet_id}`, `{ip_address}` or both), or by
 * default one address from the first IPv4 subnet with room and one from the first IPv6 subnet that hands out
 * addresses from its pool. Either way (as Neutron does), a port that is no router's also gets its EUI-64 address
 * (from `mac`) on every SLAAC or DHCPv6-stateless subnet of the network that it did not ask for.
 * All-or-nothing: on error nothing stays allocated.
 */
export function allocatePortIps(
  store: NeutronStore,
  network: NetworkRecord,
  requested: unknown,
  portId: string,
  deviceOwner: string,
  mac?: string,
): FixedIp[] {
  const subnets = [...store.subnets.values()].filter((s) => s.network_id === network.id);
  const done: { subnet: SubnetRecord; ip: string }[] = [];
  const withAutoAddresses = (): FixedIp[] => {
    if (mac !== undefined && !routerOwners.has(deviceOwner)) {
      for (const subnet of subnets) {
        if (!isAutoAddress(subnet) || done.some((d) => d.subnet === subnet)) continue;
        const value = eui64(subnet, mac);
        if (subnet.allocated.has(value)) throw nerr.ipAllocated(formatIp(6, value), subnet.id);
        take(subnet, value, portId);
        done.push({ subnet, ip: formatIp(6, value) });
      }
    }
    return done.map(({ subnet, ip }) => ({ subnet_id: subnet.id, ip_address: ip }));
  };
  try {
    if (requested === undefined) {
      for (const version of [4, 6] as const) {
        const candidates = subnets.filter((s) => s.ip_version === version && !isAutoAddress(s));
        if (candidates.length === 0) continue;
        const subnet = candidates.find((s) => s.allocatedInPools < s.poolSize);
        const value = subnet && randomFree(store, subnet);
        if (!subnet || value === undefined) throw nerr.ipGenerationFailure(network.id);
        take(subnet, value, portId);
        done.push({ subnet, ip: formatIp(version, value) });
      }
      return withAutoAddresses();
    }
    if (!Array.isArray(requested))
      throw nerr.invalidAttr('fixed_ips', `Invalid data format for fixed IP: '${text(requested)}'`);
    for (const entry of requested as unknown[]) {
      const e = (entry ?? {}) as { subnet_id?: unknown; ip_address?: unknown };
      let subnet: SubnetRecord | undefined;
      if (e.subnet_id !== undefined) {
        subnet = store.subnets.get(text(e.subnet_id));
        if (!subnet) throw nerr.subnetNotFound(text(e.subnet_id));
        if (subnet.network_id !== network.id) {
          throw nerr.invalidInput(
            `Failed to create port on network ${network.id}, because fixed_ips included invalid subnet ${subnet.id}`,
          );
        }
      }
      if (e.ip_address !== undefined) {
        const ip = typeof e.ip_address === 'string' ? parseIp(e.ip_address) : undefined;
        if (!ip) throw nerr.invalidAttr('fixed_ips', `'${text(e.ip_address)}' is not a valid IP address`);
        if (subnet && !usable(subnet, ip.value))
          throw neutronError(
            400,
            'InvalidIpForSubnet',
            `IP address ${text(e.ip_address)} is not a valid IP for the specified subnet.`,
          );
        subnet ??= subnets.find((s) => usable(s, ip.value));
        if (!subnet)
          throw neutronError(
            400,
            'InvalidIpForNetwork',
            `IP address ${text(e.ip_address)} is not a valid IP for any of the subnets on the specified network.`,
          );
        const addr = formatIp(ip.version, ip.value);
        // The gateway address belongs to the router interface that may come later.
        const isGateway = subnet.gateway_ip === addr && !routerOwners.has(deviceOwner);
        if (subnet.allocated.has(ip.value) || isGateway) throw nerr.ipAllocated(addr, subnet.id);
        take(subnet, ip.value, portId);
        done.push({ subnet, ip: addr });
      } else if (subnet && isAutoAddress(subnet) && mac !== undefined) {
        continue; // its EUI-64 address is added below
      } else if (subnet) {
        const value = randomFree(store, subnet);
        if (value === undefined) throw nerr.ipGenerationFailure(network.id);
        take(subnet, value, portId);
        done.push({ subnet, ip: formatIp(subnet.ip_version, value) });
      } else {
        throw nerr.invalidInput('IP allocation requires subnet_id or ip_address');
      }
    }
    return withAutoAddresses();
  } catch (err) {
    for (const { subnet, ip } of done) releaseIp(subnet, ip);
    throw err;
  }
}

/** Splits the inclusive range [start, end] into the fewest CIDRs, in address order (netaddr's `iter_cidrs`). */
function rangeToCidrs(version: IpVersion, start: bigint, end: bigint): IpCidr[] {
  const bits = addressBits(version);
  const out: IpCidr[] = [];
  let cur = start;
  while (cur <= end) {
    let len = bits;
    while (len > 0) {
      const size = 1n << BigInt(bits - len + 1);
      if (cur % size !== 0n || cur + size - 1n > end) break;
      len--;
    }
    out.push({ version, network: cur, prefixLength: len });
    cur += 1n << BigInt(bits - len);
  }
  return out;
}

/** The pool's free space as CIDRs (its prefixes minus the subnets already allocated from it). */
function freeBlocks(store: NeutronStore, pool: SubnetPoolRecord): IpCidr[] {
  const taken = [...store.subnets.values()]
    .filter((s) => s.subnetpool_id === pool.id)
    .map((s) => s.parsed)
    .sort((a, b) => (a.network < b.network ? -1 : 1));
  const out: IpCidr[] = [];
  for (const text of pool.prefixes) {
    const prefix = parseCidr(text)!.cidr;
    let cur = prefix.network;
    const last = cidrLast(prefix);
    for (const t of taken) {
      if (cidrLast(t) < cur || t.network > last) continue;
      if (t.network > cur) out.push(...rangeToCidrs(prefix.version, cur, t.network - 1n));
      cur = cidrLast(t) + 1n;
    }
    if (cur <= last) out.push(...rangeToCidrs(prefix.version, cur, last));
  }
  return out;
}

/** A free CIDR of `prefixlen` from the pool: the first block of the smallest free block that fits. */
export function allocateFromPool(store: NeutronStore, pool: SubnetPoolRecord, prefixlen: number): IpCidr {
  if (prefixlen < pool.min_prefixlen) {
    throw neutronError(
      400,
      'MinPrefixSubnetAllocationError',
      `Unable to allocate subnet with prefix length ${prefixlen}, minimum allowed prefix is ${pool.min_prefixlen}.`,
    );
  }
  if (prefixlen > pool.max_prefixlen) {
    throw neutronError(
      400,
      'MaxPrefixSubnetAllocationError',
      `Unable to allocate subnet with prefix length ${prefixlen}, maximum allowed prefix is ${pool.max_prefixlen}.`,
    );
  }
  const blocks = freeBlocks(store, pool).sort((a, b) => b.prefixLength - a.prefixLength);
  const fit = blocks.find((b) => b.prefixLength <= prefixlen);
  // Not mapped to an HTTP error in Neutron, hence 500 with the exception's own text.
  if (!fit)
    throw neutronError(
      500,
      'SubnetAllocationError',
      `Failed to allocate subnet: Insufficient prefix space to allocate subnet size /${prefixlen}.`,
    );
  return { version: fit.version, network: fit.network, prefixLength: prefixlen };
}

/** Is `cidr` inside the pool's prefixes and free? (a subnet asking for a specific CIDR from a pool) */
export function poolHasRoom(store: NeutronStore, pool: SubnetPoolRecord, cidr: IpCidr): boolean {
  return freeBlocks(store, pool).some((b) => b.network <= cidr.network && cidrLast(b) >= cidrLast(cidr));
}
