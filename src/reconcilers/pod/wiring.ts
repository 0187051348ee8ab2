import type { DeepReadonly } from '../../core/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { CachedPod } from './trim.ts';
import { parseVif, vifSignatureValid, VIF_ANNOTATION, type ObjectMeta, type Vif } from '../../kube/api/index.ts';

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

/** The index of pods by the port their own VIF names, when Raven signed it: ports a node may have plugged already. */
export const SIGNED_VIF_INDEX = 'raven/signed-vif-port';

/**
 * Add to the pod informer when VIFs are signed with `key`. Only Raven's signature counts: a user who writes a VIF
 * naming a port on their pod reserves nothing.
 */
export function signedVifIndexers(key: Uint8Array) {
  return {
    [SIGNED_VIF_INDEX]: (pod: DeepReadonly<CachedPod>): string[] => {
      if (!wantsPort(pod)) return [];
      const vif = ownVif(pod);
      return vif && vifSignatureValid(vif, key) ? [vif.portId] : [];
    },
  };
}

/** The pods of a node, by `spec.nodeName` (index `byNode`): whether a node's pools are in use. */
export function indexByNode(pod: DeepReadonly<CachedPod>): string[] {
  return pod.spec.nodeName ? [pod.spec.nodeName] : [];
}

/**
 * Whether a pod that wants a port runs on `node` (of `namespace`, when given; whose port carries `groups`, when
 * given), by the `byNode` index: a pool it may take from is never idle. `podGroups`: a pod's groups under the
 * NetworkPolicy translation (undefined while they are not all made).
 */
export function poolInUse(
  pods: Lister<CachedPod>,
  podGroups?: (pod: DeepReadonly<CachedPod>) => readonly string[] | undefined,
): (node: string, namespace: string | undefined, groups?: readonly string[]) => boolean {
  const sameGroups = (pod: DeepReadonly<CachedPod>, groups: readonly string[] | undefined): boolean =>
    groups === undefined || podGroups?.(pod)?.join(',') === groups.join(',');
  return (node, namespace, groups) =>
    pods
      .byIndex('byNode', node)
      .some(
        (p) => wantsPort(p) && (namespace === undefined || p.metadata.namespace === namespace) && sameGroups(p, groups),
      );
}

/**
 * The `limit` nodes that run the most pods that want a port (ties by name), among those `exists` knows: where a new
 * namespace's pods are likeliest to land (its pools are filled there first).
 */
export function busiestNodes(
  pods: readonly DeepReadonly<CachedPod>[],
  limit: number,
  exists: (node: string) => boolean,
): string[] {
  const counts = new Map<string, number>();
  for (const pod of pods) if (wantsPort(pod)) counts.set(pod.spec.nodeName, (counts.get(pod.spec.nodeName) ?? 0) + 1);
  return [...counts]
    .filter(([node]) => exists(node))
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, limit)
    .map(([node]) => node);
}
