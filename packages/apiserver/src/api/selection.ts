import {
  fieldSelectorPaths,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type KubeObject,
} from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import type { ResourceDef } from '../resources/index.ts';

/** The value of a field label: a dotted path into the object, stringified the way field selectors compare. */
export function fieldValue(obj: KubeObject, path: string): string | undefined {
  let value: unknown = obj;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * Builds the predicate for `labelSelector` and `fieldSelector` query parameters (and a name from the URL).
 * Unknown field labels → 400, as on the real server.
 */
export function selectionOf(def: ResourceDef, query: URLSearchParams, name?: string): (obj: KubeObject) => boolean {
  const checks: Array<(obj: KubeObject) => boolean> = [];
  try {
    const labels = query.get('labelSelector');
    if (labels) {
      const expr = parseLabelSelector(labels);
      checks.push((obj) => matchesLabels(expr, obj.metadata.labels));
    }
    const fields = query.get('fieldSelector');
    if (fields) {
      const expr = parseFieldSelector(fields);
      const allowed = new Set(['metadata.name', 'metadata.namespace', ...(def.fieldLabels ?? [])]);
      for (const path of fieldSelectorPaths(expr)) {
        if (!allowed.has(path)) {
          throw apiErrors.badRequest(
            `Unable to find "${def.group}/${def.versions[0] ?? ''}, Resource=${def.resource}" that match label selector "", field selector "${fields}": field label not supported: ${path}`,
          );
        }
      }
      const stored = def.storedAs?.fieldPaths ?? {};
      checks.push((obj) => matchesFields(expr, (path) => fieldValue(obj, stored[path] ?? path)));
    }
  } catch (err) {
    if (err instanceof SelectorError) throw apiErrors.badRequest(err.message);
    throw err;
  }
  if (name !== undefined) checks.push((obj) => obj.metadata.name === name);
  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0]!;
  return (obj) => checks.every((check) => check(obj));
}
