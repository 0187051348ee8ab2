// Generic strategic-merge semantics, on a schema shaped like upstream's test type MergeItem; several cases are the
// ones in k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go, with upstream's expected results.
import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { StrategicSchema } from './schema.ts';
import { applyStrategicMergePatch } from './strategic.ts';
import { assertPatchError, assertUnshared, frozen } from '../../../../test/support/patch.ts';

const byName = { patchStrategy: 'merge', patchMergeKey: 'name' } as const;
const set = { patchStrategy: 'merge' } as const;
const schema: StrategicSchema = {
  lists: {
    mergingList: byName,
    'mergingList[].mergingList': byName,
    'mergingList[].mergingIntList': set,
    mergingIntList: set,
    retainKeysMergingList: byName,
    'retainKeysMap.mergingList': byName,
  },
};

function check(original: unknown, patch: unknown, expected: unknown): void {
  const result = applyStrategicMergePatch(frozen(original), frozen(patch), schema);
  assert.deepEqual(result, expected);
  assertUnshared(result);
}

function fails(original: unknown, patch: unknown, status: 400 | 422, ...patterns: RegExp[]): void {
  assertPatchError(() => applyStrategicMergePatch(frozen(original), frozen(patch), schema), status, ...patterns);
}

describe('strategic merge patch: maps', () => {
  it('merges maps recursively and deletes keys set to null', () => {
    check(
      { name: 1, simpleMap: { key1: 1, key2: 1 }, other: 'x' },
      { value: 1, simpleMap: { key2: null, key3: 3 }, other: null, absent: null },
      { name: 1, value: 1, simpleMap: { key1: 1, key3: 3 } },
    );
  });

  it('replaces on a change of type and copies new values without their nulls or directives', () => {
    check(
      { a: 'string', b: { x: 1 } },
      {
        a: { nested: { keep: 1, drop: null } },
        b: ['now', 'a', 'list'],
        c: { '$setElementOrder/l': [1], l: [1], $retainKeys: ['l'] },
      },
      { a: { nested: { keep: 1 } }, b: ['now', 'a', 'list'], c: { l: [1] } },
    );
  });

  it('$patch: delete on a nested map leaves it empty (upstream: "delete map from nested map")', () => {
    check({ simpleMap: { key1: 1, key2: 1 } }, { simpleMap: { $patch: 'delete' } }, { simpleMap: {} });
  });

  it('$patch: delete on a map the target lacks adds nothing', () => {
    check({ name: 1 }, { simpleMap: { $patch: 'delete' } }, { name: 1 });
  });

  it('$patch: replace replaces the whole map (upstream: "delete all keys" / "add key and delete all keys")', () => {
    check({ name: 1, value: 1 }, { $patch: 'replace' }, {});
    check({ name: 1, value: 1 }, { other: 'a', $patch: 'replace' }, { other: 'a' });
    check(
      { simpleMap: { a: 1, b: 2 }, name: 1 },
      { simpleMap: { $patch: 'replace', c: 3, d: null } },
      { simpleMap: { c: 3 }, name: 1 },
    );
  });

  it('$retainKeys clears unlisted keys, then merges', () => {
    check(
      { retainKeysMap: { name: 'foo', value: 'a', other: 'b', mergingList: [{ name: 'x' }] } },
      { retainKeysMap: { $retainKeys: ['name', 'value', 'mergingList'], value: 'c', mergingList: [{ name: 'y' }] } },
      { retainKeysMap: { name: 'foo', value: 'c', mergingList: [{ name: 'y' }, { name: 'x' }] } },
    );
  });

  it('$retainKeys ignores nulls and parallel-list directives when checking the patch', () => {
    check(
      { m: { a: 1, b: 2, c: 3 } },
      { m: { $retainKeys: ['a'], b: null, '$setElementOrder/x': [], '$deleteFromPrimitiveList/y': [1] } },
      { m: { a: 1 } },
    );
  });

  it('rejects a patch that sets a key $retainKeys does not list, or a $retainKeys that is not a list', () => {
    fails({ m: {} }, { m: { $retainKeys: ['a'], b: 1 } }, 422, /^strategic merge patch: m: /, /sets "b"/);
    fails({ m: {} }, { m: { $retainKeys: 'a' } }, 422, /\$retainKeys must be a list/);
  });

  it('rejects an unknown $patch directive on a map', () => {
    fails({ m: { a: 1 } }, { m: { $patch: 'merge' } }, 422, /unknown \$patch directive "merge"/);
    fails({}, { m: { $patch: 'explode' } }, 422, /unknown \$patch directive "explode"/);
  });

  it('rejects a patch that is not a JSON object with 400', () => {
    for (const patch of [null, [], 'x', 3]) fails({}, patch, 400, /must be a JSON object/);
  });

  it('treats a missing target as an empty object', () => {
    assert.deepEqual(applyStrategicMergePatch(undefined, { mergingList: [{ name: 'a' }] }, schema), {
      mergingList: [{ name: 'a' }],
    });
  });
});

describe('strategic merge patch: lists', () => {
  it('replaces lists the schema does not mark as merging', () => {
    check(
      { nonMergingList: [{ name: 1 }, { name: 2 }], nonMergingIntList: [1, 2] },
      { nonMergingList: [{ name: 3 }], nonMergingIntList: [2, 3] },
      { nonMergingList: [{ name: 3 }], nonMergingIntList: [2, 3] },
    );
  });

  it('merges lists of maps by key, recursing into matches', () => {
    check(
      {
        mergingList: [
          { name: 'a', value: 1, other: 'x' },
          { name: 'b', value: 2 },
        ],
      },
      {
        mergingList: [
          { name: 'b', value: 3, other: null },
          { name: 'a', other: 'y' },
        ],
      },
      {
        mergingList: [
          { name: 'b', value: 3 },
          { name: 'a', value: 1, other: 'y' },
        ],
      },
    );
  });

  it('merges nested merging lists inside matched elements', () => {
    check(
      { mergingList: [{ name: 'a', mergingList: [{ name: 'x', v: 1 }, { name: 'y' }], mergingIntList: [1] }] },
      { mergingList: [{ name: 'a', mergingList: [{ name: 'x', v: 2 }], mergingIntList: [2] }] },
      { mergingList: [{ name: 'a', mergingList: [{ name: 'x', v: 2 }, { name: 'y' }], mergingIntList: [2, 1] }] },
    );
  });

  it('puts new elements first when there is no $setElementOrder (upstream order normalisation)', () => {
    check(
      { mergingList: [{ name: 'a' }, { name: 'b' }] },
      { mergingList: [{ name: 'c' }] },
      {
        mergingList: [{ name: 'c' }, { name: 'a' }, { name: 'b' }],
      },
    );
    check({ mergingIntList: [1, 2] }, { mergingIntList: [3] }, { mergingIntList: [3, 1, 2] });
  });

  it('keeps scalars unique when merging (upstream: "unique scalars when merging lists")', () => {
    check({ mergingIntList: [1, 2] }, { mergingIntList: [2, 3] }, { mergingIntList: [1, 2, 3] });
  });

  it('preserves the order from the patch (upstream: "preserve the order from the patch in a merging list")', () => {
    check(
      { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
      {
        mergingList: [
          { name: 3, value: 'c' },
          { name: 1, value: 'a' },
          { name: 2, other: 'x' },
        ],
      },
      {
        mergingList: [
          { name: 3, value: 'c' },
          { name: 1, value: 'a' },
          { name: 2, value: 'b', other: 'x' },
        ],
      },
    );
    check(
      { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
      {
        mergingList: [
          { name: 3, value: 'c' },
          { name: 1, value: 'a' },
        ],
      },
      {
        mergingList: [
          { name: 2, value: 'b' },
          { name: 3, value: 'c' },
          { name: 1, value: 'a' },
        ],
      },
    );
    check({ mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1, 2] }, { mergingIntList: [3, 1, 2] });
    check({ mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1] }, { mergingIntList: [2, 3, 1] });
  });

  it('merges duplicate keys within one patch into one element', () => {
    check(
      { mergingList: [] },
      {
        mergingList: [
          { name: 'a', x: 1 },
          { name: 'a', y: 2 },
        ],
      },
      { mergingList: [{ name: 'a', x: 1, y: 2 }] },
    );
  });

  it('merges empty merging lists', () => {
    check({ mergingList: [] }, { mergingList: [] }, { mergingList: [] });
  });

  it('$patch: delete removes every element with that key (upstream: "delete all duplicate entries")', () => {
    check(
      { mergingList: [{ name: 1 }, { name: 1 }, { name: 2, value: 'a' }, { name: 3 }, { name: 3 }] },
      {
        mergingList: [
          { name: 1, $patch: 'delete' },
          { name: 3, $patch: 'delete' },
        ],
      },
      { mergingList: [{ name: 2, value: 'a' }] },
    );
  });

  it('$patch: delete of an absent element, and a new list, keep only the real elements (upstream: "nested patch merge with empty list")', () => {
    check(
      { name: 'hi' },
      { mergingList: [{ name: 'hello' }, { $patch: 'delete', name: 'doesntexist' }] },
      {
        name: 'hi',
        mergingList: [{ name: 'hello' }],
      },
    );
    check(
      { mergingList: [{ name: 'hello2' }] },
      { mergingList: [{ name: 'hello' }, { $patch: 'delete', name: 'doesntexist' }] },
      {
        mergingList: [{ name: 'hello' }, { name: 'hello2' }],
      },
    );
  });

  it('{"$patch":"replace"} as an element replaces the whole list', () => {
    check({ mergingList: [{ name: 1 }, { name: 2 }] }, { mergingList: [{ $patch: 'replace' }] }, { mergingList: [] });
    check(
      { mergingList: [{ name: 1, v: 1 }, { name: 2 }] },
      { mergingList: [{ name: 1, w: 2, x: null }, { $patch: 'replace' }] },
      {
        mergingList: [{ name: 1, w: 2 }],
      },
    );
  });

  it('names the failing field, through list elements, in the error', () => {
    const err = assertPatchError(
      () =>
        applyStrategicMergePatch(
          frozen({ mergingList: [{ name: 'a', mergingList: [{ name: 'x' }] }] }),
          frozen({ mergingList: [{ name: 'a', mergingList: [{ value: 1 }] }] }),
          schema,
        ),
      422,
      /^strategic merge patch: mergingList\[name="a"\]\.mergingList: /,
    );
    assert.equal(err.field, 'mergingList[name="a"].mergingList');
  });

  it('rejects bad list elements with 422', () => {
    fails(
      { mergingList: [{ name: 'a', value: 'a' }] },
      { mergingList: [{ value: 'b' }] },
      422,
      /does not contain declared merge key "name"/,
    );
    fails(
      { mergingList: [{ name: 'a' }] },
      { mergingList: [{ value: 'b', $patch: 'delete' }] },
      422,
      /merge key "name"/,
    );
    fails(
      { mergingList: [{ name: 'a' }] },
      { mergingList: [{ $patch: 'merge' }] },
      422,
      /merging lists cannot yet be specified/,
    );
    fails(
      { mergingList: [{ name: 'a' }] },
      { mergingList: [{ $patch: 'nope' }] },
      422,
      /unknown \$patch directive "nope"/,
    );
    fails(
      { mergingList: [{ name: 'a' }] },
      { mergingList: ['a'] },
      422,
      /^strategic merge patch: mergingList: list element types/,
    );
    fails({ mergingIntList: [[1]] }, { mergingIntList: [[2]] }, 422, /is not an object or a primitive/);
    fails({ mergingIntList: [{ a: 1 }] }, { mergingIntList: [{ a: 2 }] }, 422, /without a merge key/);
  });
});

describe('strategic merge patch: $setElementOrder', () => {
  it('orders a merged list of maps and interleaves server-only items (upstream: "merge lists of maps")', () => {
    check(
      {
        mergingList: [
          { name: 1, other: 'a' },
          { name: 2, value: 2, other: 'b' },
        ],
      },
      {
        '$setElementOrder/mergingList': [{ name: 4 }, { name: 1 }, { name: 2 }, { name: 3 }],
        mergingList: [
          { name: 4, value: 4 },
          { name: 3, value: 3 },
        ],
      },
      {
        mergingList: [
          { name: 4, value: 4 },
          { name: 1, other: 'a' },
          { name: 2, value: 2, other: 'b' },
          { name: 3, value: 3 },
        ],
      },
    );
  });

  it('interleaves a server-only item before the first ordered item the server had after it', () => {
    // Upstream mergeSortedSlice: "server" (server index 1) is compared with "b" (server index 2) and goes first.
    check(
      { mergingList: [{ name: 'a' }, { name: 'server' }, { name: 'b' }] },
      { '$setElementOrder/mergingList': [{ name: 'b' }, { name: 'a' }] },
      { mergingList: [{ name: 'server' }, { name: 'b' }, { name: 'a' }] },
    );
    check(
      { mergingList: [{ name: 'a' }, { name: 'server' }, { name: 'b' }] },
      { '$setElementOrder/mergingList': [{ name: 'a' }, { name: 'b' }] },
      { mergingList: [{ name: 'a' }, { name: 'server' }, { name: 'b' }] },
    );
  });

  it('ignores order entries the list does not have (upstream: "$setElementOrder contains item that is not present")', () => {
    check(
      { mergingList: [{ name: 1 }, { name: 3 }] },
      {
        '$setElementOrder/mergingList': [{ name: 3 }, { name: 2 }, { name: 1 }],
        mergingList: [
          { name: 3, value: 3 },
          { name: 1, value: 1 },
        ],
      },
      {
        mergingList: [
          { name: 3, value: 3 },
          { name: 1, value: 1 },
        ],
      },
    );
    check({ mergingIntList: [1, 3] }, { '$setElementOrder/mergingIntList': [3, 2, 1] }, { mergingIntList: [3, 1] });
  });

  it('creates a list that the target lacks, in the order given', () => {
    check(
      {},
      {
        '$setElementOrder/mergingList': [{ name: 'b' }, { name: 'a' }],
        mergingList: [{ name: 'b', x: null }, { name: 'a' }],
      },
      {
        mergingList: [{ name: 'b' }, { name: 'a' }],
      },
    );
    check({}, { '$setElementOrder/mergingList': [{ name: 'b' }, { name: 'a' }] }, {});
  });

  it('rejects a patch list whose order contradicts $setElementOrder (upstream: "doesn\'t match")', () => {
    fails(
      { mergingList: [{ name: 1 }, { name: 3 }, { name: 2 }] },
      {
        '$setElementOrder/mergingList': [{ name: 1 }, { name: 2 }, { name: 3 }],
        mergingList: [
          { name: 3, value: 3 },
          { name: 1, value: 1 },
        ],
      },
      422,
      /doesn't match \$setElementOrder list/,
    );
    fails(
      { mergingIntList: [1, 3, 2] },
      { '$setElementOrder/mergingIntList': [1, 2, 3], mergingIntList: [3, 1] },
      422,
      /doesn't match/,
    );
  });

  it('rejects malformed $setElementOrder directives', () => {
    fails({ mergingList: [] }, { '$setElementOrder/mergingList': { name: 1 } }, 422, /must be a list/);
    fails({ mergingList: [] }, { $setElementOrderX: [] }, 422, /malformed directive key "\$setElementOrderX"/);
    fails(
      { mergingList: [{ name: 1 }] },
      { '$setElementOrder/mergingList': [{ value: 1 }] },
      422,
      /declared merge key "name"/,
    );
  });

  it('is ignored on a list that does not merge, which is replaced as usual', () => {
    check(
      { nonMergingList: [{ name: 1 }, { name: 2 }] },
      { '$setElementOrder/nonMergingList': [{ name: 2 }], nonMergingList: [{ name: 2 }] },
      {
        nonMergingList: [{ name: 2 }],
      },
    );
  });
});

describe('strategic merge patch: $deleteFromPrimitiveList', () => {
  it('deletes values from a primitive list, duplicates included', () => {
    check(
      { mergingIntList: [1, 2, 3, 3] },
      { '$deleteFromPrimitiveList/mergingIntList': [3] },
      { mergingIntList: [1, 2] },
    );
  });

  it('also works on a list without merge strategy (upstream: deletion lists ignore the strategy)', () => {
    check(
      { nonMergingIntList: [1, 2, 3] },
      { '$deleteFromPrimitiveList/nonMergingIntList': [2] },
      { nonMergingIntList: [1, 3] },
    );
  });

  it('never adds the values or the list', () => {
    check({ mergingIntList: [1, 2] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [1, 2] });
    check({ mergingIntList: [] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [] });
    check({ foo: ['bar'] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { foo: ['bar'] });
  });

  it('combines with $setElementOrder the way kubectl sends it (upstream: "delete items in lists of scalars")', () => {
    check(
      { mergingIntList: [1, 2, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] },
      { mergingIntList: [1, 2, 4] },
    );
    check(
      { mergingIntList: [1, 2, 3, 4] },
      {
        '$setElementOrder/mergingIntList': [1, 2, 4],
        '$deleteFromPrimitiveList/mergingIntList': [3],
        mergingIntList: [4],
      },
      { mergingIntList: [1, 2, 4] },
    );
  });

  it('rejects a deletion list that is not a list, or aims at a list of maps', () => {
    fails({ mergingIntList: [1] }, { '$deleteFromPrimitiveList/mergingIntList': 1 }, 422, /must be a list/);
    fails(
      { mergingList: [{ name: 1 }] },
      { '$deleteFromPrimitiveList/mergingList': [{ name: 1 }] },
      422,
      /only to lists of primitives/,
    );
  });
});
