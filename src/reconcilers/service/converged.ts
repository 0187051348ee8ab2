import type { LoadBalancer, Member } from '../../openstack/index.ts';
import type { LbChildren } from './plan.ts';

/** A Service's load balancer as the reconciler last saw it in Octavia (what the topology view shows). */
export interface SeenLoadBalancer {
  id: string;
  provisioningStatus: string;
  operatingStatus: string;
  vips: string[];
  listeners: { id: string; protocol: string; port: number; allowedCidrs: string[] }[];
  pools: { id: string; protocol: string; method: string; members: { id: string; address: string; port: number }[] }[];
  floatingIps: string[];
}

/** What a pass read: the load balancer, and (when it got that far) its children and floating IPs. */
export function seenLoadBalancer(
  lb: LoadBalancer,
  children?: LbChildren,
  floatingIps: string[] = [],
): SeenLoadBalancer {
  const members = (id: string): readonly Member[] => children?.members.get(id) ?? [];
  return {
    id: lb.id,
    provisioningStatus: lb.provisioning_status,
    operatingStatus: lb.operating_status,
    vips: [lb.vip_address, ...(lb.additional_vips ?? []).map((v) => v.ip_address)].filter(Boolean),
    listeners: (children?.listeners ?? []).map((l) => ({
      id: l.id,
      protocol: l.protocol,
      port: l.protocol_port,
      allowedCidrs: [...(l.allowed_cidrs ?? [])],
    })),
    pools: (children?.pools ?? []).map((p) => ({
      id: p.id,
      protocol: p.protocol,
      method: p.lb_algorithm,
      members: members(p.id).map((m) => ({ id: m.id, address: m.address, port: m.protocol_port })),
    })),
    floatingIps,
  };
}

/**
 * What each Service's last converged pass left in Octavia and Neutron — the ids of its load balancer, VIP port,
 * listeners, pools, members and floating IPs — so that the sweep can tell when one of them is gone behind Raven's back;
 * and how each pass last saw the load balancer (the topology view). Written only by the service reconciler (a
 * converged pass sets it, a Service that no longer wants a load balancer drops it); read by the load balancer
 * verification and the view. In memory: after a restart every Service is reconciled anyway.
 */
export class ConvergedLoadBalancers {
  readonly #byKey = new Map<string, readonly string[]>();
  readonly #seen = new Map<string, SeenLoadBalancer>();

  set(key: string, ids: readonly string[]): void {
    this.#byKey.set(key, ids);
  }

  delete(key: string): void {
    this.#byKey.delete(key);
    this.#seen.delete(key);
  }

  get(key: string): readonly string[] | undefined {
    return this.#byKey.get(key);
  }

  /** A pass read the load balancer: its status alone keeps the children and floating IPs seen before. */
  saw(key: string, lb: SeenLoadBalancer): void {
    const before = this.#seen.get(key);
    const partial = lb.listeners.length === 0 && before?.id === lb.id;
    this.#seen.set(
      key,
      partial ? { ...before, provisioningStatus: lb.provisioningStatus, operatingStatus: lb.operatingStatus } : lb,
    );
  }

  /** The load balancer as the last pass saw it. */
  seen(key: string): SeenLoadBalancer | undefined {
    return this.#seen.get(key);
  }
}
