import type { Lister } from '../../kube/cache/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { clusterTag, POD_DEVICE_OWNER } from '../common/identity.ts';
import type { Cloud } from '../common/types.ts';
import { parseVif, VIF_ANNOTATION } from '../common/vif.ts';
import { wantsPort } from './reconciler.ts';

/**
 * Keys of the pods whose `raven.openstack.org/vif` names a port that Neutron no longer has (deleted by hand, or by
 * another tool): the drift the pod reconciler's annotation fast path cannot see. One paginated list of this cluster's
 * pod ports (ids only) per sweep, however many pods.
 *
 * The pods are read from the cache BEFORE the ports are listed: a pod annotated by then had its port created before
 * the list began, so a port missing from the list is really gone (a pod annotated later is simply not checked).
 */
export async function podsWithMissingPorts(cloud: Cloud, clusterId: string, pods: Lister<KubeObject>, signal?: AbortSignal): Promise<string[]> {
  const claims: { key: string; portId: string }[] = [];
  for (const pod of pods.list()) {
    const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
    if (vif && vif.podUid === pod.metadata.uid && wantsPort(pod)) claims.push({ key: `${pod.metadata.namespace}/${pod.metadata.name}`, portId: vif.portId });
  }
  if (claims.length === 0) return [];
  const ports = await cloud.neutron.ports.list({ device_owner: POD_DEVICE_OWNER, tags: clusterTag(clusterId) }, { fields: ['id'], signal });
  const present = new Set(ports.map((p) => p.id));
  return claims.filter((c) => !present.has(c.portId)).map((c) => c.key);
}
