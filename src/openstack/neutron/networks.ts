import type { StandardFilters } from './query.ts';
import { ResourceApi, type NeutronTransport, type StandardAttributes } from './resource.ts';

/** A Neutron network as the API returns it (ML2 with the provider and external-network extensions). */
export interface Network extends StandardAttributes {
  admin_state_up: boolean;
  /** `ACTIVE` at once: there is no agent to wait for. */
  status: string;
  mtu: number;
  /** Ids of the network's subnets. */
  subnets: string[];
  shared: boolean;
  'router:external': boolean;
  /** `vxlan` for tenant networks, `flat`/`vlan` for provider ones (admin only; absent for others). */
  'provider:network_type'?: string | null;
  'provider:physical_network'?: string | null;
  'provider:segmentation_id'?: number | null;
  port_security_enabled: boolean;
  is_default?: boolean;
  availability_zone_hints: string[];
  availability_zones: string[];
  ipv4_address_scope: string | null;
  ipv6_address_scope: string | null;
}

/**
 * A network to create. Zed rejects `tags` here (400 "Attribute 'tags' not allowed in POST"): tag it afterwards with
 * `neutron.tags`. External flat networks need admin and a `provider:physical_network` no other flat network uses
 * (409 `FlatNetworkInUse`).
 */
export interface NetworkCreate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  shared?: boolean;
  'router:external'?: boolean;
  'provider:network_type'?: string;
  'provider:physical_network'?: string;
  'provider:segmentation_id'?: number;
  port_security_enabled?: boolean;
  mtu?: number;
  /** Admin only: create it in another project. */
  project_id?: string;
}

/** What a network update may change. */
export interface NetworkUpdate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  shared?: boolean;
  'router:external'?: boolean;
  port_security_enabled?: boolean;
  mtu?: number;
}

export interface NetworkFilters extends StandardFilters {
  status?: string;
  shared?: boolean;
  admin_state_up?: boolean;
  'router:external'?: boolean;
  'provider:network_type'?: string;
  'provider:physical_network'?: string;
  'provider:segmentation_id'?: number;
  mtu?: number;
}

/** `/v2.0/networks`. */
export class NetworksApi extends ResourceApi<Network, NetworkCreate, NetworkUpdate, NetworkFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'network', plural: 'networks', path: 'networks' });
  }
}
