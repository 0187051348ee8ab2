// Merging an applied configuration into the live object (TypedValue.Merge with ruleKeepRHS) and removing what an
// applier stopped applying (Updater.prune), on plain JSON.
import { isPlainObject } from '../../../../src/kube/api/index.ts';
import { hasChildren, isMember, type Fields } from './fields.ts';
import { childType, isDeclared, type TypeNode } from './schema.ts';
import { itemElement } from './walk.ts';

type JsonObject = Record<string, unknown>;

function getOwn(obj: JsonObject, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function setOwn(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) {
    for (const _ in value) return false;
    return true;
  }
  return false;
}

/**
 * Merges `config` into `live` and returns the result. `live` must be a private copy (it is reused and mutated);
 * `config` subtrees end up in the result as they are. The configuration's values win; granular objects merge key by
 * key, associative and set lists item by item (items keep the live order unless the configuration reorders the
 * items it shares with it); atomic values are replaced. An explicit `null` removes a leaf (the typed object drops
 * nulls) but leaves a non-empty granular object or list alone, as upstream. Undefined means "absent".
 */
export function mergeApplied(live: unknown, config: unknown, type: TypeNode): unknown {
  if (config === undefined) return live;
  const liveLike = live === undefined || live === null;
  if (type.object !== 'atomic' && (isPlainObject(config) || config === null) && (liveLike || isPlainObject(live))) {
    if (isEmpty(live) && isEmpty(config)) return config === null ? undefined : config;
    if (config === null) return live;
    const target = isPlainObject(live) ? live : {};
    for (const key of Object.keys(config)) {
      const merged = mergeApplied(getOwn(target, key), config[key], childType(type, key));
      if (merged === undefined) delete target[key];
      else setOwn(target, key, merged);
    }
    return target;
  }
  if (type.list !== 'atomic' && (Array.isArray(config) || config === null) && (liveLike || Array.isArray(live))) {
    if (isEmpty(live) && isEmpty(config)) return config === null ? undefined : config;
    if (config === null) return live;
    const out = mergeLists((live as unknown[] | undefined) ?? [], config as unknown[], type);
    return out.length > 0 ? out : undefined;
  }
  return config === null ? undefined : config;
}

/** Elements of `list`'s items; an item without a valid element gets a unique one, so it is kept in place. */
function elementsOf(list: readonly unknown[], type: TypeNode): string[] {
  return list.map((item, i) => {
    const element = itemElement(type, item);
    return typeof element === 'string' ? element : `#invalid:${i}`;
  });
}

/** The list merge of structured-merge-diff's mergingWalker.visitListItems, which settles the order of the result. */
function mergeLists(lhs: readonly unknown[], rhs: readonly unknown[], type: TypeNode): unknown[] {
  const rhsElements = elementsOf(rhs, type);
  const lhsElements = elementsOf(lhs, type);
  const observedRhs = new Map<string, unknown>();
  rhsElements.forEach((element, i) => observedRhs.set(element, rhs[i]));
  // Repeated live items are not merged with the configuration: the first stands for all of them, as null.
  const observedLhs = new Map<string, unknown>();
  lhsElements.forEach((element, i) => observedLhs.set(element, observedLhs.has(element) ? null : lhs[i]));
  const shared = rhsElements.filter((element) => observedLhs.has(element));
  let nextShared = shared.shift();
  const mergedRhs = new Set<string>();
  const out: unknown[] = [];
  const push = (value: unknown): void => {
    if (value !== undefined) out.push(value);
  };
  let l = 0;
  let r = 0;
  while (l < lhs.length || r < rhs.length) {
    if (l < lhs.length && r < rhs.length) {
      const element = lhsElements[l]!;
      if (element === rhsElements[r]) {
        mergedRhs.add(element);
        push(mergeApplied(observedLhs.get(element) ?? undefined, observedRhs.get(element), type.items));
        l++;
        r++;
        nextShared = shared.shift();
        continue;
      }
      if (observedRhs.has(element) && nextShared !== undefined && nextShared !== element) {
        l++; // a shared item, but not the one due now: it comes later, in the configuration's order
        continue;
      }
    }
    if (l < lhs.length) {
      const element = lhsElements[l]!;
      if (!observedRhs.has(element)) {
        push(mergeApplied(lhs[l], undefined, type.items));
        l++;
        continue;
      }
      if (mergedRhs.has(element)) {
        l++;
        continue;
      }
    }
    if (r < rhs.length) {
      const element = rhsElements[r]!;
      mergedRhs.add(element);
      push(mergeApplied(observedLhs.get(element) ?? undefined, observedRhs.get(element), type.items));
      r++;
      if (nextShared === element) nextShared = shared.shift();
    }
  }
  return out;
}

/**
 * Removes from `obj` (mutated) what the applier applied last time (`last`) and no manager owns now (`owned`: every
 * manager's set, the applier's new one included), as Updater.prune does: a struct field counts as owned when anything
 * below it is (EnsureNamedFieldsAreMembers); a removed node takes its subtree with it, and a container emptied by the
 * removal goes too. `metadata` itself always stays (every configuration names the object).
 */
export function pruneApplied(obj: JsonObject, last: Fields, owned: readonly Fields[], root: TypeNode): void {
  pruneObject(obj, last, owned, root, true);
}

function ownedHere(nodes: readonly Fields[], declared: boolean): boolean {
  return nodes.some((node) => isMember(node) || (declared && hasChildren(node)));
}

function below(nodes: readonly Fields[], element: string): Fields[] {
  const out: Fields[] = [];
  for (const node of nodes) if (Object.prototype.hasOwnProperty.call(node, element)) out.push(node[element]!);
  return out;
}

/** Prunes one object; true when it removed anything. */
function pruneObject(obj: JsonObject, last: Fields, owned: readonly Fields[], type: TypeNode, root = false): boolean {
  let removed = false;
  for (const element of Object.keys(last)) {
    if (!element.startsWith('f:')) continue;
    const key = element.slice(2);
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    const lastNode = last[element]!;
    const ownedNodes = below(owned, element);
    const declared = isDeclared(type, key);
    const always = root && key === 'metadata';
    if (!always && (isMember(lastNode) || (declared && hasChildren(lastNode))) && !ownedHere(ownedNodes, declared)) {
      delete obj[key];
      removed = true;
      continue;
    }
    if (hasChildren(lastNode) && pruneValue(obj[key], lastNode, ownedNodes, childType(type, key))) {
      removed = true;
      if (isEmpty(obj[key])) delete obj[key];
    }
  }
  return removed;
}

const PRUNED = Symbol('pruned');

/** Prunes below one value; list items to drop are replaced by a marker the caller filters out. */
function pruneValue(value: unknown, last: Fields, owned: readonly Fields[], type: TypeNode): boolean {
  if (isPlainObject(value)) return type.object !== 'atomic' && pruneObject(value, last, owned, type);
  if (!Array.isArray(value) || type.list === 'atomic') return false;
  return pruneList(value as unknown[], last, owned, type);
}

function pruneList(value: unknown[], last: Fields, owned: readonly Fields[], type: TypeNode): boolean {
  let removed = false;
  value.forEach((item, i) => {
    const element = itemElement(type, item);
    if (typeof element !== 'string' || !Object.prototype.hasOwnProperty.call(last, element)) return;
    const lastNode = last[element]!;
    const ownedNodes = below(owned, element);
    if (isMember(lastNode) && !ownedHere(ownedNodes, false)) {
      value[i] = PRUNED;
      removed = true;
    } else if (hasChildren(lastNode) && pruneValue(item, lastNode, ownedNodes, type.items)) {
      removed = true;
    }
  });
  if (removed) {
    const kept = value.filter((item) => item !== PRUNED);
    value.length = 0;
    value.push(...kept);
  }
  return removed;
}
