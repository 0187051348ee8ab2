import type { DeepReadonly } from '../../core/index.ts';
import type { CachedPod } from './trim.ts';
import { parseVif, VIF_ANNOTATION, type ObjectMeta, type Vif } from '../../kube/api/index.ts';

/** A pod Raven must wire: scheduled to a node, not hostNetwork, not finished, with its identity filled in. */
export type WiredPod = CachedPod & {
  metadata: Required<Pick<ObjectMeta, 'name' | 'namespace' | 'uid'>>;
  spec: { nodeName: string };
};

/**
 * Whether a pod should have a port: scheduled, not hostNetwork, not finished. Terminating pods keep theirs until gone.
 */
export function wantsPort(pod: DeepReadonly<CachedPod> | undefined): pod is DeepReadonly<WiredPod> {
  if (!pod?.metadata.name || !pod.metadata.namespace || !pod.metadata.uid) return false;
  const phase = pod.status.phase;
  return Boolean(pod.spec.nodeName) && !pod.spec.hostNetwork && phase !== 'Succeeded' && phase !== 'Failed';
}

/** The pod's VIF annotation when it is the pod's own (written for its uid), else undefined. */
export function ownVif(pod: DeepReadonly<CachedPod>): Vif | undefined {
  const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
  return vif && vif.podUid === pod.metadata.uid ? vif : undefined;
}

/** The index of pods that want a port and have no VIF of their own yet: the ones a freed port may help. */
export const UNWIRED_INDEX = 'raven/unwired';

/** Add to the pod informer: `pods.addIndexers(unwiredPodIndexers)`. */
export const unwiredPodIndexers = {
  [UNWIRED_INDEX]: (pod: DeepReadonly<CachedPod>): string[] => (wantsPort(pod) && !ownVif(pod) ? ['unwired'] : []),
};

/** The pods of a node, by `spec.nodeName` (index `byNode`): whether a node's pools are in use. */
export function indexByNode(pod: DeepReadonly<CachedPod>): string[] {
  return pod.spec.nodeName ? [pod.spec.nodeName] : [];
}
