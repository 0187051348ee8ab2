import type { Clock, IpCidr } from '../../../../src/core/index.ts';
import type { SeededRandom } from '../random.ts';

/**
 * Neutron's in-memory database. Every handler runs synchronously between reading the request body and answering,
 * so a check-then-write never interleaves with another request (what Neutron needs DB transactions for).
 */

/** The standard attributes every Neutron resource with a `standardattributes` row has. */
export interface StdRecord {
  id: string;
  project_id: string;
  description: string;
  tags: string[];
  created_at: string;
  updated_at: string;
  revision_number: number;
  standard_attr_id: number;
}

export interface NetworkRecord extends StdRecord {
  name: string;
  admin_state_up: boolean;
  mtu: number;
  status: string;
  shared: boolean;
  external: boolean;
  network_type: string;
  physical_network: string | null;
  segmentation_id: number | null;
  port_security_enabled: boolean;
  availability_zone_hints: unknown[];
}

export interface AllocationPool {
  start: string;
  end: string;
}

export interface SubnetRecord extends StdRecord {
  name: string;
  network_id: string;
  ip_version: 4 | 6;
  subnetpool_id: string | null;
  enable_dhcp: boolean;
  ipv6_ra_mode: string | null;
  ipv6_address_mode: string | null;
  gateway_ip: string | null;
  cidr: string;
  allocation_pools: AllocationPool[];
  host_routes: unknown[];
  dns_nameservers: unknown[];
  service_types: unknown[];
  /** Parsed forms, for IPAM. */
  parsed: IpCidr;
  pools: { start: bigint; end: bigint }[];
  poolSize: bigint;
  /** Addresses taken (value → port id). */
  allocated: Map<bigint, string>;
  /** How many of `allocated` fall inside the allocation pools (exhaustion check without a scan). */
  allocatedInPools: bigint;
}

export interface SubnetPoolRecord extends StdRecord {
  name: string;
  prefixes: string[];
  default_prefixlen: number;
  min_prefixlen: number;
  max_prefixlen: number;
  is_default: boolean;
  shared: boolean;
  ip_version: 4 | 6;
  default_quota: number | null;
}

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

export interface PortRecord extends StdRecord {
  name: string;
  network_id: string;
  mac_address: string;
  admin_state_up: boolean;
  status: string;
  device_id: string;
  device_owner: string;
  fixed_ips: FixedIp[];
  port_security_enabled: boolean;
  security_groups: string[];
  vnic_type: string;
  profile: Record<string, unknown>;
  host_id: string;
  vif_type: string;
  vif_details: Record<string, unknown>;
  allowed_address_pairs: unknown[];
  extra_dhcp_opts: unknown[];
}

export interface RouterRecord extends StdRecord {
  name: string;
  admin_state_up: boolean;
  status: string;
  gateway: { network_id: string; port_id: string; enable_snat: boolean } | undefined;
  routes: unknown[];
}

export interface FloatingIpRecord extends StdRecord {
  floating_ip_address: string;
  floating_network_id: string;
  floating_port_id: string;
  router_id: string | null;
  port_id: string | null;
  fixed_ip_address: string | null;
  status: string;
}

export interface SecurityGroupRecord extends StdRecord {
  name: string;
  stateful: boolean;
}

export interface SecurityGroupRuleRecord extends Omit<StdRecord, 'description'> {
  security_group_id: string;
  ethertype: string;
  direction: string;
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  remote_address_group_id: string | null;
  normalized_cidr: string | null;
  remote_group_id: string | null;
  /** null for the rules Neutron makes itself (default egress, default SG), "" for user rules when not given. */
  description: string | null;
}

export interface SubPortRecord {
  port_id: string;
  segmentation_type: string;
  segmentation_id: number;
}

export interface TrunkRecord extends StdRecord {
  name: string;
  admin_state_up: boolean;
  /** DOWN, ACTIVE, BUILD, DEGRADED or ERROR: what the trunk driver made of it. */
  status: string;
  /** The parent port. */
  port_id: string;
  sub_ports: SubPortRecord[];
}

export const quotaResources = [
  'network',
  'subnet',
  'subnetpool',
  'port',
  'router',
  'floatingip',
  'rbac_policy',
  'security_group',
  'security_group_rule',
  'trunk',
] as const;
export type QuotaResource = (typeof quotaResources)[number];

/** Neutron's timestamps: seconds, UTC, `Z`. */
export function neutronTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class NeutronStore {
  readonly networks = new Map<string, NetworkRecord>();
  readonly subnets = new Map<string, SubnetRecord>();
  readonly subnetpools = new Map<string, SubnetPoolRecord>();
  readonly ports = new Map<string, PortRecord>();
  readonly routers = new Map<string, RouterRecord>();
  readonly floatingips = new Map<string, FloatingIpRecord>();
  readonly securityGroups = new Map<string, SecurityGroupRecord>();
  readonly securityGroupRules = new Map<string, SecurityGroupRuleRecord>();
  readonly trunks = new Map<string, TrunkRecord>();
  /** `network id|mac` of every port, for MacAddressInUse. */
  readonly macs = new Set<string>();
  readonly vnis = new Set<number>();
  /** Flat physical network → the network on it (FlatNetworkInUse). */
  readonly flatNetworks = new Map<string, string>();
  readonly quotas = new Map<string, Partial<Record<QuotaResource, number>>>();
  #nextStdAttrId = 1;

  constructor(
    readonly clock: Clock,
    readonly random: SeededRandom,
    readonly quotaDefaults: Record<QuotaResource, number>,
  ) {}

  now(): string {
    return neutronTime(this.clock.now());
  }

  /** Fresh standard attributes for a new resource. */
  std(projectId: string, description: string, revision: number): StdRecord {
    const now = this.now();
    return {
      id: this.random.uuid(),
      project_id: projectId,
      description,
      tags: [],
      created_at: now,
      updated_at: now,
      revision_number: revision,
      standard_attr_id: this.#nextStdAttrId++,
    };
  }

  /** Records a change: the revision goes up by one and updated_at moves. */
  touch(record: { revision_number: number; updated_at: string }, by = 1): void {
    record.revision_number += by;
    record.updated_at = this.now();
  }

  quotaLimit(projectId: string, resource: QuotaResource): number {
    return this.quotas.get(projectId)?.[resource] ?? this.quotaDefaults[resource];
  }

  used(projectId: string, resource: QuotaResource): number {
    const count = (map: Map<string, { project_id: string }>): number => {
      let n = 0;
      for (const r of map.values()) if (r.project_id === projectId) n++;
      return n;
    };
    switch (resource) {
      case 'network':
        return count(this.networks);
      case 'subnet':
        return count(this.subnets);
      case 'subnetpool':
        return count(this.subnetpools);
      case 'port':
        return count(this.ports);
      case 'router':
        return count(this.routers);
      case 'floatingip':
        return count(this.floatingips);
      case 'security_group':
        return count(this.securityGroups);
      case 'security_group_rule':
        return count(this.securityGroupRules);
      case 'trunk':
        return count(this.trunks);
      case 'rbac_policy':
        return 0;
    }
  }
}
