/**
 * reconcilers/pod: Pod → Neutron port, published as the `raven.openstack.org/vif` annotation.
 *
 * Contract:
 * - {@link PodReconciler} reconciles `namespace/name` keys of pods from a trimmed cache ({@link trimPod}); its
 *   outcome depends on that cache, Neutron and {@link PodPortRecord} (Raven's record of its pod ports) only.
 * - A pod's port: name `raven/<cluster>/<ns>/<pod>`, `device_owner` `compute:raven`, `device_id` = pod uid,
 *   `binding:host_id` = node, owner tags. Found by `device_id` before any create, so nothing is made twice. On a VM
 *   node (nested mode, {@link NestedPods}): no host, a subport of the node's trunk, claimed once it is one; the
 *   node's warm pools hold free subports of its trunk.
 * - The VIF annotation is a projection of the record: written once per pod uid, and rewritten (Warning
 *   `VifTampered`) whenever it differs from what the record gives — never read as an input.
 * - Events in: the pod informer, the record's loader, the namespace networks' changes, `portsGone` (the port
 *   verification) and `portsFreed` (a deleted port: pods waiting on the quota or a full subnet, by the
 *   {@link UNWIRED_INDEX} index). Events out: `portsFreed`.
 */
export { PodReconciler, type PodReconcilerOptions, type PodSecurityGroups, type PortFreed } from './reconciler.ts';
export { vifFor, portFits, annotationMatches, vifDifferences } from './vif-check.ts';
export {
  PodPortRecord,
  podPortRecordLoader,
  recordedPort,
  type RecordedPort,
  type PodPortRecordLoaderOptions,
} from './port-record.ts';
export { trimPod, trimNode, type CachedPod, type CachedNode } from './trim.ts';
export { VIF_ANNOTATION, parseVif, formatVif, type Vif, type VifIp } from '../../kube/api/index.ts';
export {
  wantsPort,
  ownVif,
  poolInUse,
  UNWIRED_INDEX,
  unwiredPodIndexers,
  indexByNode,
  type WiredPod,
} from './wiring.ts';
export { PortPools, type FreeRule, type PoolPlace, type PoolState, type PoolActivity } from './pools.ts';
export { PoolReconciler, type PoolReconcilerOptions } from './pool-reconciler.ts';
export { decidePoolChanges, nextIdleCheck, poolSizes, type PoolChange, type PoolWorld } from './pool-decisions.ts';
export {
  PendingClaims,
  PortClaimReconciler,
  type PendingClaim,
  type PortClaimed,
  type PortClaimReconcilerOptions,
} from './claims.ts';
export { portClaims, portVerification, type PortClaim, type PortGone, type PortVerificationOptions } from './verify.ts';
export { networkReadySeconds, scheduledAt } from './network-ready.ts';
export {
  setupPodPorts,
  setupPods,
  type PodModule,
  type PodModuleInputs,
  type PodPolicies,
  type PodMetrics,
} from './module.ts';
export {
  setupWarmPools,
  type PoolPolicies,
  type PoolMetrics,
  type PoolSizeSample,
  type Warm,
  type WarmPoolsInputs,
} from './warm.ts';
export { PodPorts, type PodPortRecordView } from './ports.ts';
export { nestedVifFor, type NestedPods, type PodTrunk } from './nested.ts';
export type { PodModuleView, PodPortView, PoolSummary } from './view.ts';
