// Element order of merged lists, following upstream strategicpatch (normalizeElementOrder, mergeSortedSlice,
// validatePatchWithSetOrderList). The rule is "$setElementOrder > order in the patch > order on the server":
// items named by the patch are sorted into the patch's order, server-only items keep their server order, and the two
// runs are interleaved by walking both and taking the server-only item first only when the server's own order puts
// it before the patch item. A patch item the server has never seen therefore wins that comparison and lands before
// the remaining server-only items — which is why, without $setElementOrder, a new element is *prepended* (upstream
// does exactly this; kubectl apply always sends $setElementOrder, so it gets the order it asked for).
import type { PatchError } from './errors.ts';
import { describe, getOwn, hasOwn, isJsonObject } from './json.ts';

/** Builds the 422 for the list being ordered. */
export type Fail = (why: string) => PatchError;

/** What two elements are compared by: the merge-key value for objects, the element itself for primitives. */
function identity(item: unknown, mergeKey: string): unknown {
  if (mergeKey === '') return item;
  return isJsonObject(item) ? getOwn(item, mergeKey) : undefined;
}

/** Position of each identity's first occurrence in `list`, so lookups stay O(1) on long lists (env, ports…). */
function positions(list: readonly unknown[], mergeKey: string): (item: unknown) => number {
  const first = new Map<unknown, number>();
  list.forEach((item, i) => {
    const id = identity(item, mergeKey);
    if (!first.has(id)) first.set(id, i);
  });
  return (item) => first.get(identity(item, mergeKey)) ?? -1;
}

/** Upstream refuses to order object lists whose elements lack the merge key. */
export function requireMergeKey(item: unknown, mergeKey: string, fail: Fail): void {
  if (!isJsonObject(item)) throw fail(`list element ${describe(item)} is not an object`);
  if (!hasOwn(item, mergeKey)) throw fail(`${describe(item)} does not contain declared merge key "${mergeKey}"`);
}

/**
 * Splits `merged` into the items `by` names (by merge key, or by value for primitives) and the rest, both in
 * `merged` order.
 */
export function partition(
  merged: readonly unknown[],
  by: readonly unknown[],
  mergeKey: string,
  fail: Fail,
): [named: unknown[], rest: unknown[]] {
  const named: unknown[] = [];
  const rest: unknown[] = [];
  if (mergeKey !== '') for (const item of by) if (!isJsonObject(item)) throw fail(`${describe(item)} is not an object`);
  const indexInBy = positions(by, mergeKey);
  for (const item of merged) {
    if (mergeKey !== '') requireMergeKey(item, mergeKey, fail);
    (indexInBy(item) >= 0 ? named : rest).push(item);
  }
  return [named, rest];
}

/**
 * Sorts `items` by their position in `order`. This is an insertion sort with upstream's comparator, which calls an
 * item missing from `order` "less" than anything: identical to Go's sort.SliceStable for the ≤ 20-element blocks it
 * insertion-sorts, and to any stable sort whenever every item is found (the normal case).
 */
function sortByOrder(items: readonly unknown[], order: readonly unknown[], mergeKey: string, fail: Fail): unknown[] {
  if (mergeKey !== '') for (const item of [...items, ...order]) requireMergeKey(item, mergeKey, fail);
  const sorted = [...items];
  const indexInOrder = positions(order, mergeKey);
  const less = (a: unknown, b: unknown): boolean => {
    const ia = indexInOrder(a);
    const ib = indexInOrder(b);
    return ia >= 0 && ib >= 0 ? ia < ib : true;
  };
  for (let i = 1; i < sorted.length; i++) {
    for (let j = i; j > 0 && less(sorted[j], sorted[j - 1]); j--) {
      [sorted[j - 1], sorted[j]] = [sorted[j], sorted[j - 1]];
    }
  }
  return sorted;
}

/**
 * The final order of a merged list: `patchItems` sorted by `patchOrder`, `serverOnly` sorted by `serverOrder`, then
 * interleaved (see the file comment). `mergeKey` is "" for lists of primitives.
 */
export function normalizeElementOrder(
  patchItems: readonly unknown[],
  serverOnly: readonly unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  mergeKey: string,
  fail: Fail,
): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, fail);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, fail);
  const indexOnServer = positions(serverOrder, mergeKey);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) {
      out.push(left[i++]);
    } else if (i >= left.length) {
      out.push(right[j++]);
    } else {
      const li = indexOnServer(left[i]);
      const ri = indexOnServer(right[j]);
      out.push(li >= 0 && ri >= 0 && li < ri ? left[i++] : right[j++]);
    }
  }
  return out;
}

/**
 * Checks that the patch list names its items in the same relative order as `$setElementOrder` and names nothing the
 * order list lacks (deletions and other `$patch` elements aside), as upstream's validatePatchWithSetOrderList does.
 */
export function validateSetElementOrder(
  patchList: readonly unknown[],
  order: readonly unknown[],
  mergeKey: string,
  fail: Fail,
): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const item of patchList) {
      if (!isJsonObject(item)) throw fail(`list element ${describe(item)} is not an object`);
    }
    items = patchList.filter((item) => !(isJsonObject(item) && getOwn(item, '$patch') === 'delete'));
  }
  const sameKey = (a: unknown, b: unknown): boolean => {
    if (mergeKey === '') return a === b;
    requireMergeKey(a, mergeKey, fail);
    requireMergeKey(b, mergeKey, fail);
    return identity(a, mergeKey) === identity(b, mergeKey);
  };
  let p = 0;
  let s = 0;
  while (p < items.length && s < order.length) {
    if (isJsonObject(items[p]) && hasOwn(items[p] as Record<string, unknown>, '$patch')) {
      p++;
      continue;
    }
    if (sameKey(items[p], order[s])) p++;
    s++;
  }
  if (p < items.length) {
    throw fail(`the order in patch list ${describe(patchList)} doesn't match $setElementOrder list ${describe(order)}`);
  }
}
