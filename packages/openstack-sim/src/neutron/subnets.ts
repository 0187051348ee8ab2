import {
  cidrContains,
  cidrLast,
  cidrsOverlap,
  formatCidr,
  formatIp,
  parseCidr,
  parseIp,
  type IpCidr,
} from '../../../../src/core/index.ts';
import { neutronError, text } from '../http.ts';
import { createOnly, parseResourceBody, rw, stdSpecs, type AttrSpecs, updateAttributes } from './body.ts';
import {
  checkQuota,
  checkRevision,
  findOwned,
  findVisible,
  ordered,
  targetProject,
  type Kind,
  type NeutronCall,
} from './common.ts';
import { nerr, pyRepr, pyStr } from './errors.ts';
import { allocateFromPool, poolHasRoom } from './ipam.ts';
import { networkKind } from './networks.ts';
import type { Item } from './query.ts';
import type { AllocationPool, NetworkRecord, SubnetRecord } from './store.ts';
import { subnetPoolKind } from './subnetpools.ts';

/** neutron-lib's `validate_nameservers` (Python iterates a string's characters and a dict's keys). */
function nameserversProblem(value: unknown): string | undefined {
  if (value === null || (typeof value !== 'string' && typeof value !== 'object'))
    return `Invalid data format for nameserver: '${pyStr(value)}'`;
  const hosts: unknown[] = typeof value === 'string' ? [...value] : Array.isArray(value) ? value : Object.keys(value);
  const seen: unknown[] = [];
  for (const host of hosts) {
    if (typeof host !== 'string' || !parseIp(host))
      return `'${pyStr(host)}' is not a valid nameserver. '${pyStr(host)}' is not a valid IP address`;
    if (seen.includes(host)) return `Duplicate nameserver '${host}'`;
    seen.push(host);
  }
  return undefined;
}

const IPV6_MODES = ['dhcpv6-stateful', 'dhcpv6-stateless', 'slaac', null];

/**
 * Neutron's `_validate_ipv6_attributes` (measured on Zed): no mode on an IPv4 subnet; both modes equal when both are
 * set; SLAAC and DHCPv6-stateless addresses (EUI-64) need a /64.
 */
function ipv6ModesProblem(
  version: number,
  ra: string | null,
  address: string | null,
  cidr: IpCidr,
): string | undefined {
  if (version === 4) {
    if (ra !== null) return 'ipv6_ra_mode is not valid when ip_version is 4';
    if (address !== null) return 'ipv6_address_mode is not valid when ip_version is 4';
    return undefined;
  }
  if (ra !== null && address !== null && ra !== address)
    return `ipv6_ra_mode set to '${ra}' with ipv6_address_mode set to '${address}' is not valid. If both attributes are set, they must be the same value`;
  const eui64 = [ra, address].some((m) => m === 'slaac' || m === 'dhcpv6-stateless');
  if (eui64 && cidr.prefixLength !== 64)
    return `Invalid CIDR ${formatCidr(cidr)} for IPv6 address mode. OpenStack uses the EUI-64 address format, which requires the prefix to be /64`;
  return undefined;
}

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string', { maxLen: 255 }),
  network_id: createOnly('string', { required: true }),
  ip_version: createOnly('int', { required: true, values: [4, 6] }),
  subnetpool_id: createOnly('string', { nullable: true }),
  prefixlen: createOnly('int'),
  use_default_subnetpool: createOnly('boolean'),
  cidr: createOnly('string'),
  gateway_ip: rw('string', { nullable: true }),
  allocation_pools: rw('list'),
  enable_dhcp: rw('boolean'),
  dns_nameservers: rw('any', { validate: nameserversProblem }),
  host_routes: rw('list'),
  ipv6_ra_mode: createOnly('string', { nullable: true, values: IPV6_MODES }),
  ipv6_address_mode: createOnly('string', { nullable: true, values: IPV6_MODES }),
  service_types: rw('list'),
  segment_id: createOnly('string', { nullable: true }),
};

const order = [
  'id',
  'name',
  'tenant_id',
  'network_id',
  'ip_version',
  'subnetpool_id',
  'enable_dhcp',
  'ipv6_ra_mode',
  'ipv6_address_mode',
  'gateway_ip',
  'cidr',
  'allocation_pools',
  'host_routes',
  'dns_nameservers',
  'description',
  'service_types',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

function serialize(s: SubnetRecord): Item {
  return ordered({ ...s, tenant_id: s.project_id, tags: [...s.tags].sort() }, order);
}

export const subnetKind: Kind<SubnetRecord> = {
  singular: 'subnet',
  plural: 'subnets',
  path: 'subnets',
  quota: 'subnet',
  map: (store) => store.subnets,
  notFound: (id) => nerr.subnetNotFound(id),
  serialize: (s) => serialize(s),
  // Subnets of shared and external networks are visible to everyone, like their networks.
  sharedWith: (s, call) => {
    const n = call.store.networks.get(s.network_id);
    return n !== undefined && (n.shared || n.external);
  },
  attributes: order,
  filterTypes: { enable_dhcp: 'boolean', ip_version: 'int' },
  missingMarker: 'empty',
};

/** The usable range of a CIDR: IPv4 skips the network and broadcast addresses, IPv6 only the subnet-router anycast. */
function usableRange(c: IpCidr): { first: bigint; last: bigint } {
  const last = cidrLast(c);
  if (c.version === 4 && c.prefixLength >= 31) return { first: c.network, last };
  return { first: c.network + 1n, last: c.version === 4 ? last - 1n : last };
}

function resolveCidr(
  call: NeutronCall,
  attrs: Record<string, unknown>,
  version: 4 | 6,
): { cidr: IpCidr; poolId: string | null } {
  const poolId = (attrs.subnetpool_id as string | null | undefined) ?? null;
  const pool = poolId === null ? undefined : findVisible(subnetPoolKind, call, poolId);
  if (attrs.cidr !== undefined) {
    const given = attrs.cidr as string;
    const parsed = parseCidr(given);
    if (!parsed) throw nerr.invalidInput(`${given} is not in a CIDR format`);
    // Host bits are fine (netaddr keeps them; the subnet gets the network address).
    if (parsed.cidr.version !== version)
      throw nerr.invalidInput(`cidr '${given}' does not match the ip_version '${version}'`);
    if (pool && !poolHasRoom(call.store, pool, parsed.cidr)) {
      throw neutronError(
        500,
        'SubnetAllocationError',
        'Failed to allocate subnet: Cannot allocate requested subnet from the available set of prefixes.',
      );
    }
    return { cidr: parsed.cidr, poolId };
  }
  if (!pool) throw nerr.badResourceRequest('subnets', 'a subnetpool must be specified in the absence of a cidr');
  return {
    cidr: allocateFromPool(call.store, pool, (attrs.prefixlen as number | undefined) ?? pool.default_prefixlen),
    poolId,
  };
}

function parsePools(
  cidr: IpCidr,
  gateway: bigint | undefined,
  requested: unknown[] | undefined,
): { start: bigint; end: bigint }[] {
  const { first, last } = usableRange(cidr);
  if (requested === undefined) {
    if (gateway === undefined || gateway < first || gateway > last) return [{ start: first, end: last }];
    return [
      { start: first, end: gateway - 1n },
      { start: gateway + 1n, end: last },
    ].filter((p) => p.start <= p.end);
  }
  const pools = requested.map((p) => {
    const { start, end } = (p ?? {}) as { start?: unknown; end?: unknown };
    const s = typeof start === 'string' ? parseIp(start) : undefined;
    const e = typeof end === 'string' ? parseIp(end) : undefined;
    if (!s || !e || s.value > e.value)
      throw neutronError(400, 'InvalidAllocationPool', `The allocation pool ${pyRepr(p)} is not valid.`);
    if (!cidrContains(cidr, s) || !cidrContains(cidr, e)) {
      throw neutronError(
        400,
        'OutOfBoundsAllocationPool',
        `The allocation pool ${String(start)}-${String(end)} spans beyond the subnet cidr ${formatCidr(cidr)}.`,
      );
    }
    if (gateway !== undefined && gateway >= s.value && gateway <= e.value) {
      throw neutronError(
        409,
        'GatewayConflictWithAllocationPools',
        `Gateway ip ${formatIp(cidr.version, gateway)} conflicts with allocation pool ${String(start)}-${String(end)}.`,
      );
    }
    return { start: s.value, end: e.value };
  });
  pools.sort((a, b) => (a.start < b.start ? -1 : 1));
  for (let i = 1; i < pools.length; i++) {
    if (pools[i]!.start <= pools[i - 1]!.end)
      throw neutronError(
        400,
        'OverlappingAllocationPools',
        `Found overlapping allocation pools for subnet ${formatCidr(cidr)}.`,
      );
  }
  return pools;
}

function createOne(call: NeutronCall, attrs: Record<string, unknown>): SubnetRecord {
  const network: NetworkRecord = findVisible(networkKind, call, attrs.network_id as string);
  if (!call.ctx.isAdmin && network.project_id !== call.ctx.projectId) throw nerr.policy('rule:create_subnet');
  const project = targetProject(call, attrs);
  checkQuota(call.store, project, 'subnet');
  const version = attrs.ip_version as number;
  if (version !== 4 && version !== 6) throw nerr.invalidAttr('ip_version', `${version} is not in valid_values`);
  const { cidr, poolId } = resolveCidr(call, attrs, version);
  const cidrText = formatCidr(cidr);
  const ra = (attrs.ipv6_ra_mode as string | null | undefined) ?? null;
  const addressMode = (attrs.ipv6_address_mode as string | null | undefined) ?? null;
  const modes = ipv6ModesProblem(version, ra, addressMode, cidr);
  if (modes) throw nerr.invalidInput(modes);
  let gateway: bigint | undefined;
  // The default gateway: the first address of an IPv4 subnet, the subnet-router anycast (network) address of IPv6.
  if (attrs.gateway_ip === undefined) gateway = version === 6 ? cidr.network : usableRange(cidr).first;
  else if (attrs.gateway_ip !== null) {
    const ip = parseIp(attrs.gateway_ip as string);
    if (!ip || ip.version !== version)
      throw nerr.invalidAttr('gateway_ip', `'${text(attrs.gateway_ip)}' is not a valid IP address`);
    if (ip.value === cidr.network && cidr.prefixLength < 31) throw nerr.invalidInput(`Gateway is not valid on subnet`);
    gateway = ip.value;
  }
  const pools = parsePools(cidr, gateway, attrs.allocation_pools as unknown[] | undefined);
  // Checked after the gateway and the pools, as real Neutron does.
  for (const other of call.store.subnets.values()) {
    if (other.network_id === network.id && cidrsOverlap(other.parsed, cidr)) {
      throw nerr.invalidInput(
        `Requested subnet with cidr: ${cidrText} for network: ${network.id} overlaps with another subnet`,
      );
    }
  }
  const subnet: SubnetRecord = {
    ...call.store.std(project, (attrs.description as string | undefined) ?? '', 0),
    name: (attrs.name as string | undefined) ?? '',
    network_id: network.id,
    ip_version: version,
    subnetpool_id: poolId,
    enable_dhcp: (attrs.enable_dhcp as boolean | undefined) ?? true,
    ipv6_ra_mode: ra,
    ipv6_address_mode: addressMode,
    gateway_ip: gateway === undefined ? null : formatIp(version, gateway),
    cidr: cidrText,
    allocation_pools: pools.map((p): AllocationPool => ({
      start: formatIp(version, p.start),
      end: formatIp(version, p.end),
    })),
    host_routes: (attrs.host_routes as unknown[] | undefined) ?? [],
    dns_nameservers: (attrs.dns_nameservers as unknown[] | undefined) ?? [],
    service_types: (attrs.service_types as unknown[] | undefined) ?? [],
    parsed: cidr,
    pools,
    poolSize: pools.reduce((n, p) => n + (p.end - p.start + 1n), 0n),
    allocated: new Map(),
    allocatedInPools: 0n,
  };
  call.store.subnets.set(subnet.id, subnet);
  // A subnet is part of its network: creating, updating or deleting one is a revision of the network too.
  call.store.touch(network);
  return subnet;
}

export const subnets = {
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'subnet', 'subnets', specs, 'POST');
    const created: SubnetRecord[] = [];
    try {
      for (const attrs of items) created.push(createOne(call, attrs));
    } catch (err) {
      for (const s of created) {
        call.store.subnets.delete(s.id);
        const n = call.store.networks.get(s.network_id);
        if (n) n.revision_number -= 1;
      }
      throw err;
    }
    const out = created.map(serialize);
    return { status: 201, body: bulk ? { subnets: out } : { subnet: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'subnet', 'subnets', specs, 'PUT');
    const s = findOwned(subnetKind, call, id, 'update');
    const attrs = updateAttributes(items, 'subnet');
    checkRevision(call, s);
    let gateway = s.gateway_ip === null ? undefined : parseIp(s.gateway_ip)!.value;
    if (attrs.gateway_ip !== undefined) {
      const ip = attrs.gateway_ip === null ? undefined : parseIp(attrs.gateway_ip as string);
      if (attrs.gateway_ip !== null && (!ip || ip.version !== s.ip_version))
        throw nerr.invalidAttr('gateway_ip', `'${text(attrs.gateway_ip)}' is not a valid IP address`);
      gateway = ip?.value;
    }
    // New pools are checked against the (new) gateway; a new gateway against the pools that will be.
    const pools =
      attrs.allocation_pools === undefined
        ? s.pools
        : parsePools(s.parsed, gateway, attrs.allocation_pools as unknown[]);
    const clash =
      gateway !== undefined && attrs.gateway_ip !== undefined
        ? pools.find((p) => gateway >= p.start && gateway <= p.end)
        : undefined;
    if (clash) {
      throw neutronError(
        409,
        'GatewayConflictWithAllocationPools',
        `Gateway ip ${text(attrs.gateway_ip)} conflicts with allocation pool ${formatIp(s.ip_version, clash.start)}-${formatIp(s.ip_version, clash.end)}.`,
      );
    }
    s.gateway_ip = gateway === undefined ? null : formatIp(s.ip_version, gateway);
    if (pools !== s.pools) {
      s.pools = pools;
      s.allocation_pools = pools.map((p): AllocationPool => ({
        start: formatIp(s.ip_version, p.start),
        end: formatIp(s.ip_version, p.end),
      }));
      s.poolSize = pools.reduce((n, p) => n + (p.end - p.start + 1n), 0n);
      s.allocatedInPools = BigInt(
        [...s.allocated.keys()].filter((v) => pools.some((p) => v >= p.start && v <= p.end)).length,
      );
    }
    if (attrs.name !== undefined) s.name = attrs.name as string;
    if (attrs.description !== undefined) s.description = attrs.description as string;
    if (attrs.enable_dhcp !== undefined) s.enable_dhcp = attrs.enable_dhcp as boolean;
    if (attrs.dns_nameservers !== undefined) s.dns_nameservers = attrs.dns_nameservers as unknown[];
    if (attrs.host_routes !== undefined) s.host_routes = attrs.host_routes as unknown[];
    if (attrs.service_types !== undefined) s.service_types = attrs.service_types as unknown[];
    call.store.touch(s);
    const network = call.store.networks.get(s.network_id);
    if (network) call.store.touch(network);
    return { status: 200, body: { subnet: serialize(s) } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const s = findOwned(subnetKind, call, id, 'delete');
    checkRevision(call, s);
    if (s.allocated.size > 0) {
      throw neutronError(
        409,
        'SubnetInUse',
        `Unable to complete operation on subnet ${id}: One or more ports have an IP allocation from this subnet.`,
      );
    }
    call.store.subnets.delete(id);
    const network = call.store.networks.get(s.network_id);
    if (network) call.store.touch(network);
    return { status: 204 };
  },
};
