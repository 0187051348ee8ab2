/**
 * reconcilers: Raven's translation of Kubernetes objects into Neutron and Octavia resources. Imports core, kube/*,
 * controller and openstack.
 *
 * Contract:
 * - Every reconciler is level-triggered on a key: it reads the desired state from an informer cache, finds the actual
 *   state in OpenStack by Raven's marks (tags `raven.cluster/kind/uid`, names `raven/<cluster>/…`, `device_id` = pod
 *   uid), and converges them; running it again — after a crash at any line — changes nothing more.
 * - Neutron tags are the record; annotations (`raven.openstack.org/vif` on pods, `raven.openstack.org/network` on
 *   namespaces) are projections for consumers, written only when they differ (one Kubernetes write per pod).
 * - Failures a user must see become Warning Events with a reason (`QuotaExceeded`, `SubnetExhausted` …) and are
 *   retried with back-off; they never stop other keys.
 * - The garbage collector deletes this cluster's resources whose owner is gone (after a grace age) and never touches
 *   anything untagged or another cluster's.
 * - {@link Raven} puts it together as one leader-only runnable for the manager.
 */
export { Raven, type RavenOptions } from './raven.ts';
export { networkReadySeconds, scheduledAt, type RavenMetrics } from './metrics.ts';
export { type ReconcilerConfig, type Cloud, type ClusterNetwork, type SubnetInfo } from './common/types.ts';
export { VIF_ANNOTATION, parseVif, formatVif, type Vif, type VifIp } from './common/vif.ts';
export {
  ownerTags,
  ownerOf,
  resourceName,
  clusterTag,
  POD_DEVICE_OWNER,
  type OwnerKind,
  type OwnerRef,
} from './common/identity.ts';
export { ensureClusterNetwork } from './cluster/bootstrap.ts';
export { clusterResources, teardownClusterNetwork, type ClusterResource } from './cluster/teardown.ts';
export {
  GarbageCollector,
  ownersIn,
  uidIndexers,
  type GcReport,
  type Orphan,
  type OwnerExists,
} from './gc/collector.ts';
export { NETWORK_ANNOTATION } from './namespace/strategy.ts';
export { ServiceReconciler, LB_FINALIZER, wantsLoadBalancer, sliceToService } from './service/index.ts';
