import type { KubeObject } from '../api/index.ts';

/** kubectl's copy of what it last applied: the whole object again, in an annotation. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * An informer transform that drops what only the API server and kubectl read — `metadata.managedFields` (server-side
 * apply's field owners, often larger than the rest of the object) and kubectl's last-applied-configuration
 * annotation — and keeps every other field, so no reader of the cache can miss one (client-go's
 * `TransformStripManagedFields`, plus that annotation). For kinds without a typed trim of their own.
 */
export function trimMetadata<T extends KubeObject>(obj: T): T {
  const { managedFields: _, ...metadata } = obj.metadata;
  if (metadata.annotations && LAST_APPLIED in metadata.annotations) {
    const { [LAST_APPLIED]: __, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  return { ...obj, metadata };
}
