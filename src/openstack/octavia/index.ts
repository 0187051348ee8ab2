/**
 * openstack/octavia: a typed Octavia v2 (load-balancer) client on the shared OpenStackSession.
 *
 * Contract:
 * - {@link OctaviaClient} has `loadBalancers`, `listeners`, `pools`, `members` (below a pool, plus the batch
 *   `PUT /pools/{id}/members`) and `healthMonitors`; each has `list` (all pages, filters incl. tags), `listPage`,
 *   `get` (throws on 404), `find` (undefined on 404), `create`, `update` and `delete` (false on 404). Every call takes
 *   `{ signal }`. Wire types keep Octavia's snake_case field names.
 * - It never sleeps or polls. Writes answer with `PENDING_*` objects; {@link provisioningState} says what that means
 *   and {@link isImmutable} recognises the 409 Octavia gives while a load balancer is busy, so a reconciler returns
 *   `{ requeueAfterMs }` and looks again.
 * - `versions()` reads the endpoint's version document once; `supports(feature)` gates what needs a newer v2.x.
 */
export {
  OctaviaClient,
  LoadBalancers,
  Listeners,
  Pools,
  Members,
  HealthMonitors,
  type LoadBalancerDeleteOptions,
  type BatchUpdateOptions,
} from './client.ts';
// Aliased: the Neutron client exports its own CallOptions and Page through the same openstack/index.ts.
export {
  type CallOptions as OctaviaCallOptions,
  type ListQuery as OctaviaListQuery,
  type Page as OctaviaPage,
} from './resource.ts';
export { providerTraits, type ProviderTraits } from './providers.ts';
export { provisioningState, isImmutable, type ProvisioningPhase, type ProvisioningState } from './provisioning.ts';
export {
  OctaviaVersions,
  octaviaFeatures,
  parseVersionDocument,
  type OctaviaFeature,
  type OctaviaVersion,
} from './versions.ts';
export type {
  ProvisioningStatus,
  OperatingStatus,
  ListenerProtocol,
  PoolProtocol,
  LbAlgorithm,
  HealthMonitorType,
  AdditionalVip,
  SessionPersistence,
  LoadBalancer,
  Listener,
  Pool,
  Member,
  HealthMonitor,
  ListenerTree,
  PoolTree,
  LoadBalancerTree,
  LoadBalancerCreate,
  ListenerCreate,
  PoolCreate,
  MemberCreate,
  HealthMonitorCreate,
  LoadBalancerTreeCreate,
  ListenerTreeCreate,
  PoolTreeCreate,
  LoadBalancerUpdate,
  ListenerUpdate,
  PoolUpdate,
  MemberUpdate,
  HealthMonitorUpdate,
  LoadBalancerStats,
  LoadBalancerStatusTree,
} from './types.ts';
export type { IdRef as OctaviaIdRef } from './types.ts';
