/**
 * reconcilers/pod: Pod → Neutron port, published as the `raven.openstack.org/vif` annotation.
 *
 * Contract:
 * - {@link PodReconciler} reconciles `namespace/name` keys of pods from a trimmed cache ({@link trimPod}); its
 *   outcome depends on that cache, Neutron and {@link GonePorts} (Raven's view of ports proven gone) only.
 * - A pod's port: name `raven/<cluster>/<ns>/<pod>`, `device_owner` `compute:raven`, `device_id` = pod uid,
 *   `binding:host_id` = node, owner tags. Found by `device_id` before any create, so nothing is made twice.
 * - The VIF annotation is written once per pod uid, and again only when it no longer matches the port.
 * - Events in: the pod informer, the namespace informer (a namespace's subnet appearing), `portsGone` (the port
 *   verification) and `portsFreed` (a deleted port: pods waiting on the quota or a full subnet, by the
 *   {@link UNWIRED_INDEX} index). Events out: `portsFreed`.
 */
export { PodReconciler, vifFor, type PodReconcilerOptions, type PortFreed } from './reconciler.ts';
export { trimPod, type CachedPod } from './trim.ts';
export { VIF_ANNOTATION, parseVif, formatVif, type Vif, type VifIp } from '../../kube/api/index.ts';
export { wantsPort, ownVif, UNWIRED_INDEX, unwiredPodIndexers, type WiredPod } from './wiring.ts';
export {
  GonePorts,
  portClaims,
  missingPorts,
  portVerification,
  type PortClaim,
  type PortGone,
  type PortVerificationOptions,
} from './verify.ts';
export { networkReadySeconds, scheduledAt } from './network-ready.ts';
