/**
 * The cache/work-queue key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's
 * MetaNamespaceKeyFunc).
 */
export function keyOf(obj: { metadata: { name?: string; namespace?: string } }): string {
  const { name = '', namespace } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by {@link keyOf}. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** `group/version` from a group and version; the core group is written as just the version. */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** True for a plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
