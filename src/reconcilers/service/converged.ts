/**
 * What each Service's last converged pass left in Octavia and Neutron — the ids of its load balancer, VIP port,
 * listeners, pools, members and floating IPs — so that the sweep can tell when one of them is gone behind Raven's back. Written
 * only by the service reconciler (a converged pass sets it, a Service that no longer wants a load balancer drops
 * it); read by the load balancer verification. In memory: after a restart every Service is reconciled anyway.
 */
export class ConvergedLoadBalancers {
  readonly #byKey = new Map<string, readonly string[]>();

  set(key: string, ids: readonly string[]): void {
    this.#byKey.set(key, ids);
  }

  delete(key: string): void {
    this.#byKey.delete(key);
  }

  get(key: string): readonly string[] | undefined {
    return this.#byKey.get(key);
  }
}
