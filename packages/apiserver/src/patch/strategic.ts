// Kubernetes strategic merge patch, applied the way k8s.io/apimachinery/pkg/util/strategicpatch does server-side
// (StrategicMergeMapPatch: MergeParallelList and IgnoreUnmatchedNulls on). Deliberate differences, all at the JSON
// level because we store untyped JSON where upstream decodes into Go structs afterwards:
//  - a value copied from the patch with nothing to merge into (a new key, a new list element, a `$patch: replace`
//    body) is cleaned as the typed decode would leave it: nulls dropped, directive keys stripped, `$patch` elements
//    removed, a `{"$patch":"delete"}` map dropped;
//  - fields the schema does not know merge as plain maps / replace as lists (upstream errors on unknown fields);
//  - `$deleteFromPrimitiveList/<list>` runs after the other keys (upstream's order is Go map order, i.e. random);
//  - `$setElementOrder/<list>` on a list without merge strategy is ignored (upstream reorders, or panics for maps);
//  - malformed directives are 422 (upstream answers 400 for some and 500 for others).
// Faithful on purpose, though surprising: `{"$patch":"delete"}` on an existing nested map leaves `{}`, and merge-list
// items new to the server go *before* server-only items unless $setElementOrder places them (strategic-order.ts).
import { PatchError } from './errors.ts';
import { cloneJson, describe, getOwn, hasOwn, isJsonObject, setOwn, type JsonObject } from './json.ts';
import { childOf, compileSchema, type SchemaNode, type StrategicSchema } from './schema.ts';
import {
  normalizeElementOrder,
  partition,
  requireMergeKey,
  validateSetElementOrder,
  type Fail,
} from './strategic-order.ts';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList';

/**
 * Applies a Kubernetes strategic merge patch (`application/strategic-merge-patch+json`) to `target` and returns a new
 * object; neither input is mutated. Maps merge recursively and `null` deletes a key. Lists that `schema` marks
 * `patchStrategy: merge` merge element by element on their `patchMergeKey` (or as a set, for primitives); every other
 * list is replaced. Honours `$patch: replace|delete`, `$setElementOrder/<list>`, `$retainKeys` and
 * `$deleteFromPrimitiveList/<list>`.
 *
 * @throws {PatchError} 400 when `patch` is not a JSON object; 422 when a directive is malformed, a merge-list element
 * lacks its merge key, or the patch order contradicts `$setElementOrder`.
 *
 * @example
 * const schema = strategicSchemaFor('', 'Pod');
 * if (schema) applyStrategicMergePatch(pod, {
 *   spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'a', image: 'nginx:1.2' }] },
 * }, schema);
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown, schema: StrategicSchema): unknown {
  if (!isJsonObject(patch)) {
    throw new PatchError(400, `a strategic merge patch must be a JSON object, got ${describe(patch)}`);
  }
  const original = isJsonObject(target) ? cloneJson(target) : {};
  return mergeMap(original, patch, compileSchema(schema), '');
}

function failAt(at: string): Fail {
  const where = at === '' ? '' : `${at}: `;
  return (why) => new PatchError(422, `strategic merge patch: ${where}${why}`, at === '' ? {} : { field: at });
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

/** Merges `patch` into `original` (a private copy, mutated and returned). */
function mergeMap(original: JsonObject, patch: JsonObject, node: SchemaNode | undefined, at: string): JsonObject {
  if (hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') return cleanMap(patch, at);
    if (directive === 'delete') return {};
    throw failAt(at)(`unknown ${DIRECTIVE} directive ${describe(directive)}`);
  }
  if (hasOwn(patch, RETAIN_KEYS)) retainKeys(original, patch, at);

  const consumed = new Set<string>(); // lists already merged together with their $setElementOrder
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const listKey = mergeWithElementOrder(original, patch, key, order, node, at);
    if (listKey !== undefined) consumed.add(listKey);
  }

  const deletions: [string, unknown][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ORDER) || consumed.has(key)) continue;
    if (key.startsWith(DELETE_PRIMITIVES)) {
      deletions.push([directiveTarget(key, DELETE_PRIMITIVES, at), value]);
      continue;
    }
    if (value === null) {
      if (hasOwn(original, key)) delete original[key];
      continue;
    }
    const current = getOwn(original, key);
    const child = childOf(node, key);
    if (isJsonObject(current) && isJsonObject(value)) {
      setOwn(original, key, mergeMap(current, value, child, join(at, key)));
    } else if (Array.isArray(current) && Array.isArray(value)) {
      setOwn(original, key, mergeListField(current, value, child, join(at, key), false));
    } else {
      // A new key, a change of type, or a primitive: take the patch value.
      const fresh = clean(value, join(at, key));
      if (fresh === undefined) delete original[key];
      else setOwn(original, key, fresh);
    }
  }

  for (const [listKey, values] of deletions) {
    const listAt = join(at, listKey);
    if (!Array.isArray(values)) throw failAt(listAt)(`${DELETE_PRIMITIVES}/${listKey} must be a list`);
    const current = getOwn(original, listKey);
    if (Array.isArray(current)) {
      setOwn(original, listKey, mergeListField(current, values, childOf(node, listKey), listAt, true));
    }
  }
  return original;
}

/** `$retainKeys`: every key the patch sets must be listed; keys of `original` not listed are cleared. */
function retainKeys(original: JsonObject, patch: JsonObject, at: string): void {
  const listed = patch[RETAIN_KEYS];
  if (!Array.isArray(listed)) throw failAt(at)(`${RETAIN_KEYS} must be a list of field names`);
  const keep = new Set<unknown>(listed);
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || value === null || key.startsWith(SET_ORDER) || key.startsWith(DELETE_PRIMITIVES)) {
      continue;
    }
    if (!keep.has(key)) {
      throw failAt(at)(`the patch sets "${key}", which ${RETAIN_KEYS} ${describe(listed)} does not list`);
    }
  }
  for (const key of Object.keys(original)) if (!keep.has(key)) delete original[key];
}

/** `$setElementOrder/list` → "list" (upstream requires exactly the prefix, a slash, then the field). */
function directiveTarget(key: string, prefix: string, at: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw failAt(at)(`malformed directive key "${key}"; expected ${prefix}/<list>`);
  }
  return key.slice(slash + 1);
}

/**
 * Merges the list a `$setElementOrder/<list>` names together with the patch's list, then orders the result: items
 * named by the directive in its order, server-only items interleaved where the server had them. Returns the list's
 * key when it handled it; a directive on a list that does not merge is ignored and the list replaced as usual.
 */
function mergeWithElementOrder(
  original: JsonObject,
  patch: JsonObject,
  directiveKey: string,
  order: unknown,
  node: SchemaNode | undefined,
  at: string,
): string | undefined {
  const listKey = directiveTarget(directiveKey, SET_ORDER, at);
  const listAt = join(at, listKey);
  const fail = failAt(listAt);
  if (!Array.isArray(order)) throw fail(`${directiveKey} must be a list`);
  const child = childOf(node, listKey);
  if (!child?.list) return undefined;
  const current = getOwn(original, listKey);
  const patchValue = getOwn(patch, listKey);
  if (patchValue === null) return undefined; // an explicit null deletes the list; the main loop does that
  if (current !== undefined && current !== null && !Array.isArray(current)) {
    throw fail(`${describe(current)} is not a list`);
  }
  if (patchValue !== undefined && !Array.isArray(patchValue)) throw fail(`${describe(patchValue)} is not a list`);
  const originalList: unknown[] | undefined = Array.isArray(current) ? current : undefined;
  const patchList: unknown[] | undefined = Array.isArray(patchValue) ? patchValue : undefined;
  const orderList: unknown[] = order;

  const kind = elementKind([...(originalList ?? []), ...(patchList ?? []), ...orderList], fail);
  const mergeKey = kind === 'object' ? (child.list.patchMergeKey ?? '') : '';
  if (kind === 'object' && mergeKey === '') throw fail('cannot merge a list of objects without a merge key');
  validateSetElementOrder(patchList ?? [], order, mergeKey, fail);

  let merged: unknown[];
  if (originalList && patchList) merged = mergeListField(originalList, patchList, child, listAt, false);
  else if (patchList) merged = cleanList(patchList, listAt);
  else if (originalList) merged = originalList;
  else return listKey;

  const [named, serverOnly] = partition(merged, order, mergeKey, fail);
  setOwn(original, listKey, normalizeElementOrder(named, serverOnly, order, originalList ?? [], mergeKey, fail));
  return listKey;
}

/** Merges a list field: by strategy when the schema says it merges (or for a deletion list), else replaced. */
function mergeListField(
  original: unknown[],
  patch: unknown[],
  node: SchemaNode | undefined,
  at: string,
  isDeletionList: boolean,
): unknown[] {
  const strategy = node?.list;
  if (!strategy && !isDeletionList) return cleanList(patch, at);
  const fail = failAt(at);
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind([...original, ...patch], fail);

  if (kind !== 'object') {
    if (isDeletionList) return original.filter((item) => !patch.includes(item));
    const merged = [...new Set([...original, ...patch])];
    const [named, serverOnly] = partition(merged, patch, '', fail);
    return normalizeElementOrder(named, serverOnly, patch, original, '', fail);
  }
  if (isDeletionList) throw fail(`${DELETE_PRIMITIVES} applies only to lists of primitives`);
  const mergeKey = strategy?.patchMergeKey;
  if (mergeKey === undefined) throw fail('cannot merge a list of objects without a merge key');

  // Special elements first: deletions by key, and a `$patch: replace` that makes the rest of the patch the list.
  let base = original as JsonObject[];
  const items: JsonObject[] = [];
  let replace = false;
  for (const element of patch as JsonObject[]) {
    if (!hasOwn(element, DIRECTIVE)) {
      items.push(element);
      continue;
    }
    const directive = element[DIRECTIVE];
    if (directive === 'delete') {
      requireMergeKey(element, mergeKey, fail);
      base = base.filter((item) => !(hasOwn(item, mergeKey) && item[mergeKey] === element[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw fail('merging lists cannot yet be specified in the patch');
    } else {
      throw fail(`unknown ${DIRECTIVE} directive ${describe(directive)}`);
    }
  }
  if (replace) {
    base = items.map((item) => cleanMap(item, at));
    items.length = 0;
  }

  const merged: JsonObject[] = [...base];
  for (const element of items) {
    requireMergeKey(element, mergeKey, fail);
    const key = element[mergeKey];
    const elementAt = `${at}[${mergeKey}=${describe(key)}]`;
    const index = merged.findIndex((item) => hasOwn(item, mergeKey) && item[mergeKey] === key);
    if (index >= 0) merged[index] = mergeMap(merged[index] as JsonObject, element, node, elementAt);
    else merged.push(cleanMap(element, elementAt));
  }
  const [named, serverOnly] = partition(merged, items, mergeKey, fail);
  return normalizeElementOrder(named, serverOnly, items, base, mergeKey, fail);
}

/** Whether the elements are objects or primitives; upstream refuses lists of lists, nulls and mixed types. */
function elementKind(items: readonly unknown[], fail: Fail): 'object' | 'primitive' | 'empty' {
  let seen: string | undefined;
  for (const item of items) {
    if (item === null || Array.isArray(item)) {
      throw fail(`list element ${describe(item)} is not an object or a primitive`);
    }
    const kind = isJsonObject(item) ? 'object' : typeof item;
    if (seen !== undefined && kind !== seen) throw fail(`list element types are not identical: ${describe(items)}`);
    seen = kind;
  }
  if (seen === undefined) return 'empty';
  return seen === 'object' ? 'object' : 'primitive';
}

/**
 * A patch value taken as it is, cleaned the way decoding into the Go type would leave it: undefined means "drop
 * the key" (a `{"$patch":"delete"}` map).
 */
function clean(value: unknown, at: string): unknown {
  if (Array.isArray(value)) return cleanList(value, at);
  if (!isJsonObject(value)) return value;
  if (hasOwn(value, DIRECTIVE)) {
    const directive = value[DIRECTIVE];
    if (directive === 'delete') return undefined;
    if (directive !== 'replace') throw failAt(at)(`unknown ${DIRECTIVE} directive ${describe(directive)}`);
  }
  return cleanMap(value, at);
}

/** A copy of a patch map without nulls and directive keys, cleaned all the way down. */
function cleanMap(map: JsonObject, at: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(map)) {
    if (value === null || key === DIRECTIVE || key === RETAIN_KEYS) continue;
    if (key.startsWith(SET_ORDER) || key.startsWith(DELETE_PRIMITIVES)) continue;
    const fresh = clean(value, join(at, key));
    if (fresh !== undefined) setOwn(out, key, fresh);
  }
  return out;
}

/** A copy of a patch list without its `$patch` marker elements, cleaned all the way down. */
function cleanList(list: readonly unknown[], at: string): unknown[] {
  return list.filter((item) => !(isJsonObject(item) && hasOwn(item, DIRECTIVE))).map((item) => clean(item, at));
}
