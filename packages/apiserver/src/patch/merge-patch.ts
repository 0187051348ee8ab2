import { cloneJson, getOwn, hasOwn, isJsonObject, setOwn } from './json.ts';

/**
 * Applies an RFC 7386 JSON merge patch (`application/merge-patch+json`) and returns a new value: `null` deletes a
 * key, objects merge recursively, and anything else (arrays included) replaces the target wholesale. Neither input is
 * mutated and the result shares no structure with them.
 *
 * This is the RFC to the letter, so a patch that is not an object replaces the whole document; callers that need an
 * object back (the API server) check the result.
 *
 * @example
 * applyMergePatch({ metadata: { labels: { a: '1', b: '2' } } }, { metadata: { labels: { b: null, c: '3' } } });
 * // → { metadata: { labels: { a: '1', c: '3' } } }
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(cloneJson(target), patch);
}

/** Merges `patch` into `target`, which is already a private copy and may be mutated. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result = isJsonObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      if (hasOwn(result, key)) delete result[key];
    } else {
      setOwn(result, key, mergeInto(getOwn(result, key), value));
    }
  }
  return result;
}
