/**
 * reconcilers/service: Service → Octavia load balancer.
 *
 * Contract:
 * - {@link ServiceReconciler} reconciles `namespace/name` keys of Services. A Service wants a load balancer when it
 *   is `type: LoadBalancer` (no other `loadBalancerClass`), has `externalIPs`, or — with `emulateKubeProxy` — has a
 *   clusterIP at all; headless and ExternalName Services never do.
 * - The load balancer is `raven/<cluster>/<ns>/<name>`, tagged `raven.cluster/kind=service/uid`, on a VIP port Raven
 *   creates (`<lb name>/vip`, fixed IP = clusterIP on the service subnet) and deletes after the load balancer is gone.
 *   One listener + ROUND_ROBIN pool per port (TCP, UDP; SCTP when Octavia ≥ v2.23), members = ready endpoints of the
 *   Service's EndpointSlices (core Endpoints when it has none) on the namespace's pod subnet.
 * - Floating IPs for `type: LoadBalancer` (`loadBalancerIP` honoured) and each of `externalIPs`; only those Raven
 *   created are ever deleted. `status.loadBalancer.ingress` is written when it differs.
 * - Finalizer `raven.openstack.org/loadbalancer`: on before the first create, off after everything is confirmed gone.
 * - Never waits: Octavia `PENDING_*` → `{ requeueAfterMs }`; changes are diffs, one Octavia change per reconcile.
 * - Under NetworkPolicy (`peers`, the policy module's answer): each listener's `allowed_cidrs` are what every member's
 *   ingress policies admit on its port, within `loadBalancerSourceRanges`; a member whose policies admit no one is
 *   left out (`access.ts`, docs/policy.md).
 *
 * Wiring: `endpointSlices.addIndexers(serviceSliceIndexers)` before starting, and `.watches(slices, sliceToService)`;
 * for the Endpoints fallback, an Endpoints informer with the {@link trimEndpoints} transform, its lister as
 * `endpoints`, and `.watches(endpoints, endpointsToService(slices.lister()))`.
 */
export { ServiceReconciler, type ServiceReconcilerOptions } from './reconciler.ts';
export { sliceToService, endpointsToService, serviceSliceIndexers, SLICE_SERVICE_INDEX } from './desired.ts';
export { trimEndpoints, type CachedEndpoints } from './trim.ts';
export { LB_FINALIZER, wantsLoadBalancer, type BalancedService } from './types.ts';
export { vipPortName } from './vip-port.ts';
export { podIpIndexers, POD_IP_INDEX } from './members.ts';
export { loadBalancerVerification, type LoadBalancerGone } from './verify.ts';
export { inAllocationPools } from './fip-ownership.ts';
export { setupServices, type ServiceModule, type ServiceModuleInputs } from './module.ts';
export type { SeenLoadBalancer } from './converged.ts';
export { ConvergedLoadBalancers } from './converged.ts';
