import type { KubeObject } from '../../../../src/kube/api/index.ts';

/** A printer column, as in a CRD's `additionalPrinterColumns`: how `kubectl get` shows a kind (Table responses). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** A simple JSONPath (`.status.phase`, `.spec.containers[*].name`) or a computed value. */
  jsonPath: string | ((obj: KubeObject) => unknown);
  description?: string;
  /** 0 = always shown; >0 = shown with `-o wide`. */
  priority?: number;
}

/**
 * A kind served as another version of a stored kind (events.k8s.io/v1 Events are core/v1 Events, as on the real
 * server): one table, converted on the way in and out.
 */
export interface StoredAs {
  /** The table of the stored kind, e.g. `/events`. */
  table: string;
  /** The stored form of an object of this view. */
  toStorage(obj: KubeObject): KubeObject;
  /** Field labels of this view → paths in the stored object. */
  fieldPaths: Record<string, string>;
}

/**
 * One servable resource: everything the server needs to know about a kind. Adding a kind is one entry of this
 * shape in `builtin.ts` (or a CustomResourceDefinition at run time).
 */
export interface ResourceDef {
  group: string;
  /** Versions served; objects are stored once and presented in the requested version (no conversion). */
  versions: string[];
  resource: string;
  kind: string;
  singular: string;
  listKind?: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Subresources served besides the main resource (`token`: ServiceAccount TokenRequests; `scale`: Deployments). */
  subresources?: Array<'status' | 'binding' | 'token' | 'scale'>;
  /** Verbs discovery lists (every verb when absent). */
  verbs?: string[];
  /** Never stored: a create is answered by the server (SelfSubjectAccessReview and the like). */
  review?: boolean;
  /** Field labels accepted by `fieldSelector` besides `metadata.name` and `metadata.namespace`. */
  fieldLabels?: string[];
  /** How `metadata.name` is validated. */
  nameRule?: 'label' | 'subdomain' | 'dns1035-label' | 'path-segment';
  /** PUT to a missing object creates it (Endpoints, Events…). */
  createOnUpdate?: boolean;
  /** PUT without `metadata.resourceVersion` is allowed (false for custom resources). */
  unconditionalUpdate?: boolean;
  /** `metadata.generation` counts changes outside metadata and status (custom resources, CRDs, NetworkPolicies). */
  tracksGeneration?: boolean;
  /** Served from a CustomResourceDefinition (strategic merge patch → 415, like the real server). */
  custom?: boolean;
  /** Custom resources: each served version's `openAPIV3Schema` (list types and map keys for server-side apply). */
  schemas?: Readonly<Record<string, unknown>>;
  printerColumns?: PrinterColumn[];
  /** Set when this kind is a view of another kind's table. */
  storedAs?: StoredAs;
}

/** The store's name for a resource: one table per group+resource, whatever the version (or the table it views). */
export function storageKeyOf(def: Pick<ResourceDef, 'group' | 'resource' | 'storedAs'>): string {
  return def.storedAs?.table ?? `${def.group}/${def.resource}`;
}
