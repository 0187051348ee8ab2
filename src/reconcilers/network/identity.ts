/**
 * How Raven marks what it owns in OpenStack: three tags on every resource (`raven.cluster=<id>`, `raven.kind=<kind>`,
 * `raven.uid=<owner uid>`) and a human-readable name saying the same (`raven/<cluster>/<namespace>/<name>`). The name
 * and, for ports, `device_id` also find a resource whose tags were lost to a crash between create and tag.
 */

import { createHash } from 'node:crypto';

/**
 * `securitygroup`: a group of the NetworkPolicy translation, owned by no one object (its uid is the group's id).
 * `node`: a VM node's trunk that Raven made (docs/nested.md).
 */
export type OwnerKind = 'cluster' | 'namespace' | 'pod' | 'service' | 'securitygroup' | 'node';

export const TAG_CLUSTER = 'raven.cluster';
export const TAG_KIND = 'raven.kind';
export const TAG_UID = 'raven.uid';

export { POD_DEVICE_OWNER, SUBPORT_DEVICE_OWNER } from '../../kube/api/index.ts';

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

/**
 * Whether `tags` name this cluster and `kind` (and, when given, the owner `uid`): the mark of Raven's own resources.
 * Pod ports carry no `raven.uid` (a pooled port passes from pod to pod): their owner is their `device_id`.
 */
export function isOwned(
  tags: readonly string[] | undefined,
  clusterId: string,
  kind: OwnerKind,
  uid?: string,
): boolean {
  const has = (tag: string) => tags?.includes(tag) ?? false;
  return has(clusterTag(clusterId)) && has(`${TAG_KIND}=${kind}`) && (uid === undefined || has(`${TAG_UID}=${uid}`));
}

/** Whether a resource carries no Raven tag at all (a crash cut its tagging short, or Raven never made it). */
export function untagged(tags: readonly string[] | undefined): boolean {
  return !tags?.some((t) => t.startsWith(`${TAG_CLUSTER}=`));
}

/**
 * The `description` of the pod ports Raven creates, set in the create request itself: Zed drops tags in a port POST
 * (they follow in a second request), so this is what marks a port as this cluster's when a crash falls between the
 * two. Raven adopts (tags) such a port when it starts leading; a port without this mark and without tags is never
 * Raven's to touch.
 */
export function podPortMark(clusterId: string): string {
  return `raven pod port of cluster ${clusterId}`;
}

/**
 * The `description` of the security groups Raven creates (the group's id, then what it is for people), set in the
 * create request: Zed tags a group only in a second request, and this mark is how a group a crash left untagged is
 * recognised — and adopted, never made twice.
 */
export function securityGroupMark(clusterId: string, groupId: string, what: string): string {
  return `raven security group ${groupId} of cluster ${clusterId}: ${what}`.slice(0, 255);
}

/** The group id in a description {@link securityGroupMark} wrote for this cluster, or undefined. */
export function securityGroupIdOfMark(clusterId: string, description: string | null | undefined): string | undefined {
  const m = /^raven security group ([0-9a-f]{16}) of cluster (\S+): /.exec(description ?? '');
  return m && m[2] === clusterId ? m[1] : undefined;
}

/** The tags of a pod port: this cluster's and the pod kind's; the owning pod is the port's `device_id`. */
export function podPortTags(clusterId: string): string[] {
  return [clusterTag(clusterId), `${TAG_KIND}=pod`];
}

/** The owner named by a resource's tags, or undefined when they are not all there. */
export function ownerOf(tags: readonly string[] | undefined): OwnerRef | undefined {
  const value = (key: string) => tags?.find((t) => t.startsWith(`${key}=`))?.slice(key.length + 1);
  const cluster = value(TAG_CLUSTER);
  const kind = value(TAG_KIND);
  const uid = value(TAG_UID);
  return cluster && kind && uid ? { cluster, kind, uid } : undefined;
}

/** Neutron's and Octavia's longest name. */
export const MAX_RESOURCE_NAME = 255;

/**
 * `raven/<cluster>/<parts…>`: the name of a resource. Names longer than Neutron's and Octavia's 255 characters (a
 * 253-character pod name in a long namespace) keep their first characters and end in `~` and 16 hex digits of the
 * full name's SHA-256: stable, so a reconcile finds the resource again by name, and distinct for distinct names. The
 * tags carry the full identity (the owner's uid).
 */
export function resourceName(clusterId: string, ...parts: string[]): string {
  const full = ['raven', clusterId, ...parts].join('/');
  if (full.length <= MAX_RESOURCE_NAME) return full;
  const digest = createHash('sha256').update(full).digest('hex').slice(0, 16);
  return `${full.slice(0, MAX_RESOURCE_NAME - digest.length - 1)}~${digest}`;
}

/** The prefix of every resource name of this cluster. */
export function namePrefix(clusterId: string): string {
  return `raven/${clusterId}/`;
}

/** `raven.until=<unix seconds>`: when a held floating IP's quarantine ends. */
export const TAG_UNTIL = 'raven.until';

export type HoldKind = 'kept' | 'held';

/** The `raven.uid` of what is kept or held for the Service `namespace/name`: 32 hex digits of its SHA-256. */
export function serviceNameUid(service: string): string {
  return createHash('sha256').update(service).digest('hex').slice(0, 32);
}

/** `kept` or `held` when a floating IP's tags make it one of these (of this cluster), else undefined. */
export function holdKindOf(tags: readonly string[] | undefined, clusterId: string): HoldKind | undefined {
  if (!tags?.includes(clusterTag(clusterId))) return undefined;
  if (tags.includes(`${TAG_KIND}=kept`)) return 'kept';
  if (tags.includes(`${TAG_KIND}=held`)) return 'held';
  return undefined;
}

/** When a held floating IP's quarantine ends (ms since the epoch); 0 when it carries no end. */
export function heldUntil(tags: readonly string[] | undefined): number {
  const value = tags?.find((t) => t.startsWith(`${TAG_UNTIL}=`))?.slice(TAG_UNTIL.length + 1);
  const seconds = Number(value);
  return Number.isSafeInteger(seconds) ? seconds * 1000 : 0;
}
