// Union, difference and intersection of field sets (fieldpath.Set), path by path: a member of `b` removes only that
// member from `a`, never the members below it. Every operation walks only the levels both sides share, returns its
// first argument itself when nothing changes, and copies just the levels it changes, so diffing a large stored set
// against the few fields one write touched costs no more than the touched paths.
import { EMPTY, SELF, hasChildren, isMember, nodeOf, sortLevel, type Fields } from './fields.ts';

type Level = Record<string, Fields>;

/** Every path in `a` or `b`. */
export function union(a: Fields, b: Fields): Fields {
  return unionLevel(a, b) ?? EMPTY;
}

/** The paths of `a` that are not in `b`. */
export function difference(a: Fields, b: Fields): Fields {
  return differenceLevel(a, b) ?? EMPTY;
}

/** The paths in both `a` and `b`. */
export function intersection(a: Fields, b: Fields): Fields {
  return intersectionLevel(a, b) ?? EMPTY;
}

function unionLevel(a: Fields, b: Fields): Fields | undefined {
  if (a === b || !hasChildren(b)) return a;
  if (!hasChildren(a)) return b;
  let out: Level | undefined;
  let added = false;
  for (const key in b) {
    if (key === SELF) continue;
    const av = Object.prototype.hasOwnProperty.call(a, key) ? a[key] : undefined;
    const next = av === undefined ? b[key]! : unionNode(av, b[key]!);
    if (next !== av) {
      out ??= { ...a };
      out[key] = next;
      if (av === undefined) added = true;
    }
  }
  if (!out) return a;
  return added ? sortLevel(out) : out;
}

function unionNode(a: Fields, b: Fields): Fields {
  const memberA = isMember(a);
  const member = memberA || isMember(b);
  const children = unionLevel(a, b);
  if (children === a && member === memberA) return a;
  return nodeOf(member, children) ?? EMPTY;
}

function differenceLevel(a: Fields, b: Fields): Fields | undefined {
  if (!hasChildren(a)) return a;
  if (a === b) return undefined;
  let out: Level | undefined;
  for (const key in b) {
    if (key === SELF || !Object.prototype.hasOwnProperty.call(a, key)) continue;
    const av = a[key]!;
    const next = differenceNode(av, b[key]!);
    if (next !== av) {
      out ??= { ...a };
      if (next === undefined) delete out[key];
      else out[key] = next;
    }
  }
  return out ?? a;
}

function differenceNode(a: Fields, b: Fields): Fields | undefined {
  if (a === b) return undefined;
  const memberA = isMember(a);
  const member = memberA && !isMember(b);
  const children = hasChildren(b) ? differenceLevel(a, b) : a;
  if (member === memberA && children === a) return a;
  return nodeOf(member, children);
}

function intersectionLevel(a: Fields, b: Fields): Fields | undefined {
  if (a === b) return a;
  let out: Level | undefined;
  for (const key in b) {
    if (key === SELF || !Object.prototype.hasOwnProperty.call(a, key)) continue;
    const next = intersectionNode(a[key]!, b[key]!);
    if (next !== undefined) (out ??= {})[key] = next;
  }
  return out === undefined ? undefined : sortLevel(out);
}

function intersectionNode(a: Fields, b: Fields): Fields | undefined {
  if (a === b) return a;
  const member = isMember(a) && isMember(b);
  const children = hasChildren(a) && hasChildren(b) ? intersectionLevel(a, b) : undefined;
  return nodeOf(member, children);
}

/** `set` without the subtree at the top-level element `element` (RecursiveDifference of one path). */
export function withoutSubtree(set: Fields, element: string): Fields {
  if (!Object.prototype.hasOwnProperty.call(set, element)) return set;
  const { [element]: _dropped, ...rest } = set;
  return rest;
}

/** Only the subtree at the top-level element `element` of `set`. */
export function onlySubtree(set: Fields, element: string): Fields {
  const node = Object.prototype.hasOwnProperty.call(set, element) ? set[element] : undefined;
  if (node === undefined) return EMPTY;
  for (const key in set) if (key !== element) return { [element]: node };
  return set;
}
