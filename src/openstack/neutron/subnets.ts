import type { StandardFilters } from './query.ts';
import { ResourceApi, type NeutronTransport, type StandardAttributes } from './resource.ts';

export interface AllocationPool {
  start: string;
  end: string;
}

export interface HostRoute {
  destination: string;
  nexthop: string;
}

/** A Neutron subnet as the API returns it. */
export interface Subnet extends StandardAttributes {
  network_id: string;
  ip_version: 4 | 6;
  cidr: string;
  /** The pool the CIDR came from, or null. */
  subnetpool_id: string | null;
  gateway_ip: string | null;
  allocation_pools: AllocationPool[];
  /** True by default, yet without a DHCP agent no DHCP port is ever created. */
  enable_dhcp: boolean;
  dns_nameservers: string[];
  host_routes: HostRoute[];
  service_types: string[];
  ipv6_ra_mode: string | null;
  ipv6_address_mode: string | null;
}

interface SubnetCreateCommon {
  network_id: string;
  ip_version: 4 | 6;
  name?: string;
  description?: string;
  /** Explicit gateway, or null for none; default: the first address. */
  gateway_ip?: string | null;
  allocation_pools?: AllocationPool[];
  enable_dhcp?: boolean;
  dns_nameservers?: string[];
  host_routes?: HostRoute[];
  service_types?: string[];
  ipv6_ra_mode?: string;
  ipv6_address_mode?: string;
  /** Admin only: create it in another project. */
  project_id?: string;
}

/**
 * A subnet to create: either with a `cidr` (400 `InvalidInput` when malformed, e.g. `/33`, or when it overlaps
 * another subnet of the network), or from a subnet pool: `subnetpool_id` plus an optional `prefixlen` (default: the
 * pool's `default_prefixlen`), and Neutron picks the next free CIDR.
 */
export type SubnetCreate = SubnetCreateCommon &
  (
    | { cidr: string; subnetpool_id?: undefined; prefixlen?: undefined }
    | { subnetpool_id: string; prefixlen?: number; cidr?: string }
  );

/** What a subnet update may change. */
export interface SubnetUpdate {
  name?: string;
  description?: string;
  gateway_ip?: string | null;
  allocation_pools?: AllocationPool[];
  enable_dhcp?: boolean;
  dns_nameservers?: string[];
  host_routes?: HostRoute[];
  service_types?: string[];
}

export interface SubnetFilters extends StandardFilters {
  network_id?: string | readonly string[];
  cidr?: string;
  ip_version?: 4 | 6;
  subnetpool_id?: string;
  gateway_ip?: string;
  enable_dhcp?: boolean;
}

/** `/v2.0/subnets`. */
export class SubnetsApi extends ResourceApi<Subnet, SubnetCreate, SubnetUpdate, SubnetFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'subnet', plural: 'subnets', path: 'subnets' });
  }
}

/** A subnet pool as the API returns it. */
export interface SubnetPool extends StandardAttributes {
  prefixes: string[];
  /** Zed sends the prefix lengths as strings (`"26"`); compare with `Number(...)`. */
  default_prefixlen: string | number;
  min_prefixlen: string | number;
  max_prefixlen: string | number;
  ip_version: 4 | 6;
  is_default: boolean;
  shared: boolean;
  default_quota: number | null;
  address_scope_id: string | null;
}

/** A subnet pool to create. */
export interface SubnetPoolCreate {
  prefixes: string[];
  name?: string;
  description?: string;
  default_prefixlen?: number;
  min_prefixlen?: number;
  max_prefixlen?: number;
  is_default?: boolean;
  shared?: boolean;
  default_quota?: number;
  address_scope_id?: string;
  project_id?: string;
}

/** What a subnet pool update may change (prefixes may only grow). */
export interface SubnetPoolUpdate {
  name?: string;
  description?: string;
  prefixes?: string[];
  default_prefixlen?: number;
  min_prefixlen?: number;
  max_prefixlen?: number;
  is_default?: boolean;
  default_quota?: number;
  address_scope_id?: string | null;
}

export interface SubnetPoolFilters extends StandardFilters {
  ip_version?: 4 | 6;
  is_default?: boolean;
  shared?: boolean;
  address_scope_id?: string;
}

/** `/v2.0/subnetpools`. */
export class SubnetPoolsApi extends ResourceApi<SubnetPool, SubnetPoolCreate, SubnetPoolUpdate, SubnetPoolFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'subnetpool', plural: 'subnetpools', path: 'subnetpools' });
  }
}
