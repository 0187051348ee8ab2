// The two ways structured-merge-diff turns objects into field sets: the set an applied configuration mentions
// (typed/tofieldset.go) and what changed between two versions of an object (typed/compare.go). Both leave out what
// the server owns (the schema's `skip` keys, fieldmanager's stripMeta).
import { isPlainObject } from '../../../../src/kube/api/index.ts';
import { TypedValueError } from './errors.ts';
import { EMPTY, fieldElement, keyElement, nodeOf, pathString, sortLevel, valueElement, type Fields } from './fields.ts';
import { childType, isDeclared, type TypeNode } from './schema.ts';

type Level = Record<string, Fields>;

function getOwn(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function isEmptyObject(value: Record<string, unknown>): boolean {
  for (const _ in value) return false;
  return true;
}

/**
 * The path element of an item of the associative or set list typed `list`, or an error message (listItemToPathElement).
 */
export function itemElement(list: TypeNode, item: unknown): string | { error: string } {
  if (list.list === 'map') {
    if (item === null) return { error: 'associative list with keys may not have a null element' };
    if (!isPlainObject(item)) return { error: 'associative list with keys may not have non-map elements' };
    const fields: Array<[string, unknown]> = [];
    for (const key of list.keys) {
      let value = getOwn(item, key);
      if (value === undefined || value === null) value = list.keyDefaults[key];
      if (value === undefined)
        return {
          error: `associative list with keys has an element that omits key field ${JSON.stringify(key)} (and doesn't have default value)`,
        };
      fields.push([key, value]);
    }
    return keyElement(fields);
  }
  if (isPlainObject(item)) return { error: "associative list without keys has an element that's a map type" };
  if (Array.isArray(item)) return { error: 'not supported: associative list with lists as elements' };
  if (item === null) return { error: "associative list without keys has an element that's an explicit null" };
  return valueElement(item);
}

/**
 * The fields an applied configuration sets (TypedValue.ToFieldSet): every scalar, atomic list or map, list item and
 * map key it mentions, and each field it gives as `null` or `{}`; named fields holding a non-empty object only as a
 * prefix. An empty granular list claims nothing.
 *
 * @throws {TypedValueError} when an associative list item lacks its key or a key repeats.
 */
export function fieldSetOf(obj: Record<string, unknown>, root: TypeNode): Fields {
  const errors: string[] = [];
  const level = objectLevel(obj, root, [], errors);
  if (errors.length > 0)
    throw new TypedValueError(errors.length === 1 ? errors[0]! : `errors:\n  ${errors.join('\n  ')}`);
  return stripMetadata(level);
}

/** stripMeta also drops `metadata` itself (a member when it was given empty or appeared as a whole). */
function stripMetadata(level: Fields | undefined): Fields {
  const meta = level?.['f:metadata'];
  if (!level || !meta || !Object.prototype.hasOwnProperty.call(level, 'f:metadata')) return level ?? EMPTY;
  const node = nodeOf(false, meta);
  if (node === meta) return level;
  const { 'f:metadata': _meta, ...rest } = level;
  return node ? sortLevel({ ...rest, 'f:metadata': node }) : rest;
}

function objectLevel(
  obj: Record<string, unknown>,
  type: TypeNode,
  path: string[],
  errors: string[],
): Level | undefined {
  let out: Level | undefined;
  for (const key of Object.keys(obj)) {
    if (type.skip?.has(key)) continue;
    const value = obj[key];
    const element = fieldElement(key);
    path.push(element);
    const children = childrenOf(value, childType(type, key), path, errors);
    path.pop();
    const member =
      children === undefined ||
      value === null ||
      (isPlainObject(value) && isEmptyObject(value)) ||
      !isDeclared(type, key);
    const node = nodeOf(member, children);
    if (node) (out ??= {})[element] = node;
  }
  return out && sortLevel(out);
}

/** The children a value contributes below its own element; undefined when the value is a leaf. */
function childrenOf(value: unknown, type: TypeNode, path: string[], errors: string[]): Level | undefined {
  if (isPlainObject(value))
    return type.object === 'atomic' ? undefined : (objectLevel(value, type, path, errors) ?? {});
  if (!Array.isArray(value) || type.list === 'atomic') return undefined;
  const out: Level = {};
  value.forEach((item, i) => {
    const element = itemElement(type, item);
    if (typeof element !== 'string') {
      errors.push(`${pathString(path)}: element ${i}: ${element.error}`);
      return;
    }
    if (Object.prototype.hasOwnProperty.call(out, element)) {
      errors.push(`${pathString(path)}: duplicate entries for key ${pathString([element])}`);
      return;
    }
    path.push(element);
    out[element] = nodeOf(true, childrenOf(item, type.items, path, errors)) ?? EMPTY;
    path.pop();
  });
  return sortLevel(out);
}

/** What changed from one version of an object to the next, as `Comparison` sets. */
export interface Changes {
  /** Added or modified fields (Comparison.Added ∪ Comparison.Modified). */
  readonly changed: Fields;
  /** Removed fields. */
  readonly removed: Fields;
}

interface Pair {
  changed: Fields | undefined;
  removed: Fields | undefined;
}

/**
 * Compares two versions of an object (TypedValue.Compare): leaves that differ, and containers or items that appear or
 * disappear as a whole. Items without a valid key and repeated keys are skipped, as upstream compares live objects.
 */
export function compareObjects(lhs: Record<string, unknown>, rhs: Record<string, unknown>, root: TypeNode): Changes {
  const pair = compareObjectLevels(lhs, rhs, root);
  return { changed: stripMetadata(pair?.changed), removed: stripMetadata(pair?.removed) };
}

function add(pair: Pair | undefined, element: string, child: Pair): Pair {
  const out = pair ?? { changed: undefined, removed: undefined };
  if (child.changed) {
    const level: Level = out.changed ?? {};
    level[element] = child.changed;
    out.changed = level;
  }
  if (child.removed) {
    const level: Level = out.removed ?? {};
    level[element] = child.removed;
    out.removed = level;
  }
  return out;
}

function compareObjectLevels(
  lhs: Record<string, unknown>,
  rhs: Record<string, unknown>,
  type: TypeNode,
  seed?: Pair,
): Pair | undefined {
  let pair = seed;
  for (const key in lhs) {
    if (type.skip?.has(key)) continue;
    const child = compareValues(lhs[key], getOwn(rhs, key), childType(type, key));
    if (child) pair = add(pair, fieldElement(key), child);
  }
  for (const key in rhs) {
    if (type.skip?.has(key) || Object.prototype.hasOwnProperty.call(lhs, key)) continue;
    const child = compareValues(undefined, rhs[key], childType(type, key));
    if (child) pair = add(pair, fieldElement(key), child);
  }
  return sorted(pair);
}

function sorted(pair: Pair | undefined): Pair | undefined {
  if (pair?.changed) pair.changed = sortLevel(pair.changed);
  if (pair?.removed) pair.removed = sortLevel(pair.removed);
  return pair;
}

// Leaf results are shared: `add` only reads them.
const ADDED: Pair = Object.freeze({ changed: EMPTY, removed: undefined });
const REMOVED: Pair = Object.freeze({ changed: undefined, removed: EMPTY });

function leaf(lhs: unknown, rhs: unknown): Pair | undefined {
  if (lhs === undefined) return ADDED;
  if (rhs === undefined) return REMOVED;
  return jsonEqual(lhs, rhs) ? undefined : ADDED;
}

function seedOf(lhs: unknown, rhs: unknown): Pair | undefined {
  if (lhs === undefined) return { changed: { '.': EMPTY }, removed: undefined };
  if (rhs === undefined) return { changed: undefined, removed: { '.': EMPTY } };
  return undefined;
}

function compareValues(lhs: unknown, rhs: unknown, type: TypeNode): Pair | undefined {
  if (lhs === rhs) return undefined;
  let inner: Pair | undefined;
  // A container that appears or disappears is itself added or removed (compare's postItemHook): its level starts
  // with the `.` member.

  if (
    (lhs === undefined || isPlainObject(lhs)) &&
    (rhs === undefined || isPlainObject(rhs)) &&
    type.object !== 'atomic'
  ) {
    if ((lhs === undefined || isEmptyObject(lhs)) && (rhs === undefined || isEmptyObject(rhs))) return leaf(lhs, rhs);
    inner = compareObjectLevels(lhs ?? {}, rhs ?? {}, type, seedOf(lhs, rhs));
  } else if (
    (lhs === undefined || Array.isArray(lhs)) &&
    (rhs === undefined || Array.isArray(rhs)) &&
    type.list !== 'atomic'
  ) {
    if ((lhs === undefined || lhs.length === 0) && (rhs === undefined || rhs.length === 0)) return leaf(lhs, rhs);
    inner = compareLists(lhs ?? [], rhs ?? [], type, seedOf(lhs, rhs));
  } else {
    return leaf(lhs, rhs);
  }
  const changed = nodeOf(lhs === undefined, inner?.changed);
  const removed = nodeOf(rhs === undefined, inner?.removed);
  return changed || removed ? { changed, removed } : undefined;
}

function indexItems(list: readonly unknown[], type: TypeNode): Map<string, unknown> {
  const index = new Map<string, unknown>();
  for (const item of list) {
    const element = itemElement(type, item);
    if (typeof element === 'string' && !index.has(element)) index.set(element, item);
  }
  return index;
}

function compareLists(lhs: readonly unknown[], rhs: readonly unknown[], type: TypeNode, seed?: Pair): Pair | undefined {
  const left = indexItems(lhs, type);
  const right = indexItems(rhs, type);
  let pair = seed;
  for (const [element, item] of left) {
    const child = compareValues(item, right.get(element), type.items);
    if (child) pair = add(pair, element, child);
  }
  for (const [element, item] of right) {
    if (left.has(element)) continue;
    const child = compareValues(undefined, item, type.items);
    if (child) pair = add(pair, element, child);
  }
  return sorted(pair);
}

/** Deep equality of JSON values (value.Equals): key order does not matter, list order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    let count = 0;
    for (const key in a) {
      if (!Object.prototype.hasOwnProperty.call(b, key) || !jsonEqual(a[key], b[key])) return false;
      count++;
    }
    for (const _ in b) count--;
    return count === 0;
  }
  return false;
}
