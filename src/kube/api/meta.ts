/**
 * `meta/v1`: the parts every Kubernetes object shares. Objects are plain JSON; unknown top-level fields are kept (the
 * index signature on {@link KubeObject}), so a round-trip through Raven never drops what another client wrote.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

/** Any Kubernetes object: `kind`, `apiVersion`, `metadata`, and whatever else its kind has (spec, status, data…). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

/** `core/v1 ObjectReference`: what an Event is about, an EndpointSlice's `targetRef`. */
export interface ObjectReference {
  kind: string;
  apiVersion?: string | undefined;
  name: string;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  fieldPath?: string | undefined;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** `metav1.LabelSelector` as it appears inside objects (NetworkPolicy); Service selectors are plain maps. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** `metav1.Condition`, the shape of `status.conditions` on newer kinds (Service among them). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/**
 * The {@link ObjectReference} of an object, for Events and references: `kind` and `apiVersion` from the object, or
 * from `fallback` when the object does not carry them (informers' cached objects from a list do not always).
 *
 * @example
 * recorder.record(objectReference(pod, { kind: 'Pod', apiVersion: 'v1' }), 'Normal', 'PortCreated', message);
 */
export function objectReference(
  obj: {
    apiVersion?: string | undefined;
    kind?: string | undefined;
    metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  },
  fallback: { kind: string; apiVersion: string },
): ObjectReference {
  const m = obj.metadata;
  return {
    kind: obj.kind ?? fallback.kind,
    apiVersion: obj.apiVersion ?? fallback.apiVersion,
    name: m.name ?? '',
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
}

/** `metav1.Time`: RFC 3339 in whole seconds, as the API server writes timestamps. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
