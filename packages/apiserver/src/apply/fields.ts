// Sets of field paths, held directly in the FieldsV1 wire format of `metadata.managedFields[].fieldsV1` so that the
// sets the server stores are used as they are (no decode/encode per write) and operations share every untouched
// subtree with their inputs (copy-on-write; inputs may be frozen).
//
// A set is a "level": an object whose keys are path elements — `f:<field>`, `k:<json of the key fields>` (an item
// of an associative list), `v:<json>` (an item of a set list), `i:<index>` — and whose values are the nodes below
// them. A node is a member of the set when it has no children (`{}`) or carries the `.` key; a node with children and
// no `.` is only a prefix of members. Every level is kept sorted as sigs.k8s.io/structured-merge-diff serialises it:
// `.` first, then fields, keys, values and indices, each in their own order.
import { isPlainObject } from '../../../../src/kube/api/index.ts';

/** A set of field paths (or, below the root, one node of it) in the FieldsV1 format. */
export type Fields = { readonly [element: string]: Fields };

/** The `.` key: "this node itself is a member", written only when the node also has children. */
export const SELF = '.';

/** The empty set (and the value of a leaf member). */
export const EMPTY: Fields = Object.freeze({});

type Level = Record<string, Fields>;

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** True when `node` (a value below some path element) is a member of its set. */
export function isMember(node: Fields): boolean {
  for (const key in node) if (key === SELF) return true;
  for (const _ in node) return false;
  return true;
}

/** True when `node` has children besides `.`. */
export function hasChildren(node: Fields): boolean {
  for (const key in node) if (key !== SELF) return true;
  return false;
}

/** True for the empty set. */
export function isEmptySet(set: Fields): boolean {
  return !hasChildren(set);
}

/** The node for `member` with `children` (a level that may carry a stale `.`), or undefined when it is neither. */
export function nodeOf(member: boolean, children: Fields | undefined): Fields | undefined {
  if (!children || !hasChildren(children)) return member ? EMPTY : undefined;
  const marked = hasOwn(children, SELF);
  if (member === marked) return children;
  if (member) return { [SELF]: EMPTY, ...children };
  const { [SELF]: _self, ...rest } = children;
  return rest;
}

// ---- element order (fieldpath.PathElement.Compare) ----

const RANK: Readonly<Record<string, number>> = { f: 1, k: 2, v: 3, i: 4 };

function typeRank(value: unknown): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 2;
  if (Array.isArray(value)) return 3;
  if (isPlainObject(value)) return 4;
  return 5; // null
}

/** value.Compare: numbers < strings < booleans < lists < maps < null, then by value. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' || typeof a === 'string' || typeof a === 'boolean') {
    return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  }
  if (Array.isArray(a)) {
    const bl = b as unknown[];
    for (let i = 0; i < Math.min(a.length, bl.length); i++) {
      const c = compareValues(a[i], bl[i]);
      if (c !== 0) return c;
    }
    return a.length - bl.length;
  }
  if (isPlainObject(a))
    return compareFieldLists(Object.entries(a).sort(byName), Object.entries(b as object).sort(byName));
  return 0;
}

function byName(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function compareFieldLists(a: Array<[string, unknown]>, b: Array<[string, unknown]>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = byName(a[i]!, b[i]!) || compareValues(a[i]![1], b[i]![1]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** Orders two path elements as structured-merge-diff does (`.` first). */
export function compareElements(a: string, b: string): number {
  if (a === b) return 0;
  if (a === SELF) return -1;
  if (b === SELF) return 1;
  if (a.charCodeAt(0) === 102 && b.charCodeAt(0) === 102) return a < b ? -1 : 1; // two `f:` elements: by name
  const ra = RANK[a[0]!] ?? 5;
  const rb = RANK[b[0]!] ?? 5;
  if (ra !== rb) return ra - rb;
  const sa = a.slice(2);
  const sb = b.slice(2);
  if (ra === 1) return sa < sb ? -1 : 1;
  if (ra === 4) return Number(sa) - Number(sb);
  const va = JSON.parse(sa) as unknown;
  const vb = JSON.parse(sb) as unknown;
  if (ra === 2) return compareFieldLists(Object.entries(va as object), Object.entries(vb as object));
  return compareValues(va, vb);
}

/** `level` with its keys in element order (the same object when they already are). */
export function sortLevel<T extends Fields>(level: T): T {
  const keys = Object.keys(level);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = compareElements(keys[i - 1]!, keys[i]!) < 0;
  if (sorted) return level;
  const out: Level = {};
  for (const key of keys.sort(compareElements)) out[key] = level[key]!;
  return out as T;
}

// ---- path elements ----

/** JSON with object keys sorted at every depth: the canonical text of `k:` and `v:` elements. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `f:<name>`. */
export function fieldElement(name: string): string {
  return `f:${name}`;
}

/** `k:{"name":"a"}` for an associative-list item, from its key fields (sorted by name). */
export function keyElement(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const sorted = [...fields].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `k:{${sorted.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** `v:"a"` for an item of a set list. */
export function valueElement(value: unknown): string {
  return `v:${canonicalJson(value)}`;
}

/** value.ToString: how values appear in conflict paths (`[port=80,protocol="TCP"]`). */
function valueString(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(valueString).join(', ')}]`;
  if (isPlainObject(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}=${valueString(v)}`)
      .join(', ')}}`;
  return String(value);
}

/** One path element as fieldpath.PathElement.String writes it: `.spec`, `[name="a"]`, `[="x"]`, `[0]`. */
export function elementString(element: string): string {
  const body = element.slice(2);
  switch (element[0]) {
    case 'f':
      return `.${body}`;
    case 'k':
      return `[${Object.entries(JSON.parse(body) as object)
        .map(([k, v]) => `${k}=${valueString(v)}`)
        .join(',')}]`;
    case 'v':
      return `[=${valueString(JSON.parse(body))}]`;
    default:
      return `[${body}]`;
  }
}

/** A path as fieldpath.Path.String writes it: `.spec.ports[port=80,protocol="TCP"].targetPort`. */
export function pathString(elements: readonly string[]): string {
  return elements.map(elementString).join('');
}

/** The member paths of `set` in fieldpath.Set.Iterate order: a level's members first, then its children's. */
export function memberPaths(set: Fields): string[][] {
  const out: string[][] = [];
  const walk = (level: Fields, prefix: string[]): void => {
    const keys = Object.keys(level)
      .filter((k) => k !== SELF)
      .sort(compareElements);
    for (const key of keys) if (isMember(level[key]!)) out.push([...prefix, key]);
    for (const key of keys) if (hasChildren(level[key]!)) walk(level[key]!, [...prefix, key]);
  };
  walk(set, []);
  return out;
}

// ---- parsing what clients send ----

const ELEMENT = /^(?:f:[\s\S]*|k:\{[\s\S]*\}|v:[\s\S]+|i:-?\d+)$/;

/**
 * Checks and canonicalises a FieldsV1 value a client sent (sorted levels, canonical `k:`/`v:` JSON); undefined when
 * it is not a valid set, as fieldpath.SetFromJSON would fail.
 */
export function parseFields(raw: unknown): Fields | undefined {
  if (!isPlainObject(raw)) return undefined;
  const out: Level = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === SELF) {
      if (!isPlainObject(value) || Object.keys(value).length > 0) return undefined;
      continue;
    }
    if (!ELEMENT.test(key)) return undefined;
    let element = key;
    if (key[0] === 'k' || key[0] === 'v') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(key.slice(2));
      } catch {
        return undefined;
      }
      if (key[0] === 'k' && !isPlainObject(parsed)) return undefined;
      element = key[0] === 'k' ? keyElement(Object.entries(parsed as object)) : valueElement(parsed);
    }
    const child = parseFields(value);
    if (!child) return undefined;
    out[element] =
      hasOwn(raw, key) && hasOwn(value as object, SELF) && hasChildren(child) ? { [SELF]: EMPTY, ...child } : child;
  }
  return sortLevel(out);
}
