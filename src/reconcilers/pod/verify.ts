import type { Lister } from '../../kube/cache/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { parseVif, VIF_ANNOTATION } from '../common/vif.ts';
import { wantsPort } from './reconciler.ts';

/** A pod whose `raven.openstack.org/vif` names a port: the port must exist. */
export interface PortClaim {
  key: string;
  portId: string;
}

/**
 * The ports the cached pods' annotations name. Take them BEFORE listing the ports they are checked against: a pod
 * annotated by then had its port created before the list began, so a port missing from the list is really gone (a pod
 * annotated later is simply not checked this time).
 */
export function portClaims(pods: Lister<KubeObject>): PortClaim[] {
  const claims: PortClaim[] = [];
  for (const pod of pods.list()) {
    const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
    if (vif && vif.podUid === pod.metadata.uid && wantsPort(pod))
      claims.push({ key: `${pod.metadata.namespace}/${pod.metadata.name}`, portId: vif.portId });
  }
  return claims;
}

/**
 * Keys of the pods whose annotated port Neutron no longer has (deleted by hand, or by another tool): the drift the pod
 * reconciler's annotation fast path cannot see. `present` is this cluster's pod port ids from one list (the garbage
 * collector's sweep), however many pods.
 */
export function podsWithMissingPorts(claims: readonly PortClaim[], present: ReadonlySet<string>): string[] {
  return claims.filter((c) => !present.has(c.portId)).map((c) => c.key);
}
