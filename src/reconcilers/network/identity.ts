/**
 * How Raven marks what it owns in OpenStack: three tags on every resource (`raven.cluster=<id>`, `raven.kind=<kind>`,
 * `raven.uid=<owner uid>`) and a human-readable name saying the same (`raven/<cluster>/<namespace>/<name>`). The name
 * and, for ports, `device_id` also find a resource whose tags were lost to a crash between create and tag.
 */

export type OwnerKind = 'cluster' | 'namespace' | 'pod' | 'service';

export const TAG_CLUSTER = 'raven.cluster';
export const TAG_KIND = 'raven.kind';
export const TAG_UID = 'raven.uid';

export { POD_DEVICE_OWNER } from '../../kube/api/index.ts';

export function clusterTag(clusterId: string): string {
  return `${TAG_CLUSTER}=${clusterId}`;
}

/** The tags of a resource owned by `uid` (for cluster-level resources, the uid is the cluster id). */
export function ownerTags(clusterId: string, kind: OwnerKind, uid: string): string[] {
  return [clusterTag(clusterId), `${TAG_KIND}=${kind}`, `${TAG_UID}=${uid}`];
}

export interface OwnerRef {
  cluster: string;
  kind: string;
  uid: string;
}

/** The owner named by a resource's tags, or undefined when they are not all there. */
export function ownerOf(tags: readonly string[] | undefined): OwnerRef | undefined {
  const value = (key: string) => tags?.find((t) => t.startsWith(`${key}=`))?.slice(key.length + 1);
  const cluster = value(TAG_CLUSTER);
  const kind = value(TAG_KIND);
  const uid = value(TAG_UID);
  return cluster && kind && uid ? { cluster, kind, uid } : undefined;
}

/** `raven/<cluster>/<parts…>`: the name of a resource (Neutron and Octavia names allow 255 characters). */
export function resourceName(clusterId: string, ...parts: string[]): string {
  return ['raven', clusterId, ...parts].join('/');
}

/** The prefix of every resource name of this cluster. */
export function namePrefix(clusterId: string): string {
  return `raven/${clusterId}/`;
}
