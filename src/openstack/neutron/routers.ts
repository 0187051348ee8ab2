import { seg, type CallOptions, type StandardFilters } from './query.ts';
import {
  badResponse,
  ResourceApi,
  type NeutronTransport,
  type StandardAttributes,
  type UpdateOptions,
} from './resource.ts';
import type { FixedIp } from './ports.ts';
import type { HostRoute } from './subnets.ts';

/** A router's external gateway as the API returns it. */
export interface RouterGatewayInfo {
  network_id: string;
  enable_snat: boolean;
  external_fixed_ips: FixedIp[];
}

/** A gateway to set: the external network, optionally SNAT and the gateway's own addresses. */
export interface RouterGatewaySpec {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: { subnet_id?: string; ip_address?: string }[];
}

/** A Neutron router as the API returns it (the `router` service plugin; no L3 agent needed for the API). */
export interface Router extends StandardAttributes {
  admin_state_up: boolean;
  status: string;
  external_gateway_info: RouterGatewayInfo | null;
  routes: HostRoute[];
  distributed?: boolean;
  ha?: boolean;
  availability_zones?: string[];
  availability_zone_hints?: string[];
  flavor_id?: string | null;
}

export interface RouterCreate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  external_gateway_info?: RouterGatewaySpec;
  distributed?: boolean;
  ha?: boolean;
  availability_zone_hints?: string[];
  project_id?: string;
}

/** What a router update may change (the gateway: {@link RoutersApi.setGateway} / {@link RoutersApi.clearGateway}). */
export interface RouterUpdate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  routes?: HostRoute[];
  external_gateway_info?: RouterGatewaySpec | Record<string, never>;
}

export interface RouterFilters extends StandardFilters {
  status?: string;
  admin_state_up?: boolean;
}

/** Which interface to add or remove: the router gets (or loses) a port on a subnet, or an existing port. */
export type RouterInterfaceTarget = { subnetId: string } | { portId: string };

/** The answer of `add_router_interface` / `remove_router_interface`. */
export interface RouterInterface {
  /** The router's id. */
  id: string;
  tenant_id: string;
  project_id?: string;
  port_id: string;
  network_id: string;
  subnet_id: string;
  subnet_ids: string[];
}

/** `/v2.0/routers`: routers, their interfaces and external gateways. */
export class RoutersApi extends ResourceApi<Router, RouterCreate, RouterUpdate, RouterFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'router', plural: 'routers', path: 'routers' });
  }

  /**
   * Plugs the router into a subnet (Neutron creates a `network:router_interface` port with the subnet's gateway
   * address) or into an existing port. A PUT that is not idempotent — the same subnet again is 400 "Router already
   * has a port on subnet" — so the transport never retries it.
   */
  addInterface(routerId: string, target: RouterInterfaceTarget, options: CallOptions = {}): Promise<RouterInterface> {
    return this.#interface('add_router_interface', routerId, target, options);
  }

  /**
   * Unplugs the router from a subnet or port. 409 `RouterInterfaceInUseByFloatingIP` while a floating IP reaches a
   * port through it; 404 `RouterInterfaceNotFoundForSubnet` (or `…ForPort`) when it is not plugged in. Not retried.
   */
  removeInterface(
    routerId: string,
    target: RouterInterfaceTarget,
    options: CallOptions = {},
  ): Promise<RouterInterface> {
    return this.#interface('remove_router_interface', routerId, target, options);
  }

  /** Sets (or replaces) the external gateway. */
  setGateway(routerId: string, gateway: RouterGatewaySpec, options: UpdateOptions = {}): Promise<Router> {
    return this.update(routerId, { external_gateway_info: gateway }, options);
  }

  /** Removes the external gateway (`external_gateway_info: {}`; it reads back as null). */
  clearGateway(routerId: string, options: UpdateOptions = {}): Promise<Router> {
    return this.update(routerId, { external_gateway_info: {} }, options);
  }

  async #interface(
    action: string,
    routerId: string,
    target: RouterInterfaceTarget,
    options: CallOptions,
  ): Promise<RouterInterface> {
    const body = 'subnetId' in target ? { subnet_id: target.subnetId } : { port_id: target.portId };
    const path = `/routers/${seg(routerId)}/${action}`;
    const res = await this.transport.send<RouterInterface | undefined>('PUT', path, {
      body,
      idempotent: false,
      ...options,
    });
    if (!res.body || typeof res.body !== 'object' || typeof res.body.port_id !== 'string')
      throw badResponse(res, 'PUT', path, 'no router interface in the answer');
    return res.body;
  }
}
