import type { StandardFilters } from './query.ts';
import { ResourceApi, type NeutronTransport, type StandardAttributes, type UpdateOptions } from './resource.ts';

/** The port a floating IP points at, as embedded in the floating IP. */
export interface FloatingIpPortDetails {
  name: string;
  network_id: string;
  mac_address: string;
  admin_state_up: boolean;
  status: string;
  device_id: string;
  device_owner: string;
}

/**
 * A floating IP as the API returns it. It has no `name`; `status` stays `DOWN` without an L3 agent (never wait for
 * `ACTIVE`).
 */
export interface FloatingIp extends Omit<StandardAttributes, 'name'> {
  floating_ip_address: string;
  floating_network_id: string;
  /** The router that reaches the port (set on association), or null. */
  router_id: string | null;
  port_id: string | null;
  fixed_ip_address: string | null;
  status: string;
  port_details: FloatingIpPortDetails | null;
}

/**
 * A floating IP to create, optionally at a given address and already associated. A port whose subnet has no router
 * to the external network → 404 `ExternalGatewayForFloatingIPNotFound` (nothing is created); a taken address → 409
 * `IpAddressAlreadyAllocated`.
 */
export interface FloatingIpCreate {
  floating_network_id: string;
  floating_ip_address?: string;
  subnet_id?: string;
  port_id?: string;
  fixed_ip_address?: string;
  description?: string;
  project_id?: string;
}

export interface FloatingIpUpdate {
  port_id?: string | null;
  fixed_ip_address?: string | null;
  description?: string;
}

export interface FloatingIpFilters extends Omit<StandardFilters, 'name'> {
  floating_ip_address?: string | readonly string[];
  floating_network_id?: string;
  router_id?: string;
  port_id?: string | readonly string[];
  fixed_ip_address?: string;
  status?: string;
}

/** `/v2.0/floatingips`. */
export class FloatingIpsApi extends ResourceApi<FloatingIp, FloatingIpCreate, FloatingIpUpdate, FloatingIpFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'floatingip', plural: 'floatingips', path: 'floatingips' });
  }

  /**
   * Points the floating IP at a port (at `fixedIp` when the port has several addresses). Idempotent: associating to
   * the port it already has is a plain update.
   */
  associate(id: string, portId: string, fixedIp?: string, options: UpdateOptions = {}): Promise<FloatingIp> {
    return this.update(
      id,
      fixedIp === undefined ? { port_id: portId } : { port_id: portId, fixed_ip_address: fixedIp },
      options,
    );
  }

  /** Detaches the floating IP from its port (`port_id: null`); the address stays allocated. */
  disassociate(id: string, options: UpdateOptions = {}): Promise<FloatingIp> {
    return this.update(id, { port_id: null }, options);
  }
}
