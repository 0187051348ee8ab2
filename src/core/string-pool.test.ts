import assert from 'node:assert/strict';
import { heapPerItem } from '../../test/support/heap.ts';
import { describe, it } from '../../test/support/node-test.ts';
import { StringPool } from './string-pool.ts';

/** A body's id, parsed as Neutron's answer would be: a string of its own each time. */
const parsedId = (id: string): string => (JSON.parse(`{"id":"${id}"}`) as { id: string }).id;
const ID = '28f80316-0c00-4cac-bdce-a4caaeb8e27c';

describe('StringPool', () => {
  it('answers equal values, and one frozen list for equal lists', () => {
    const pool = new StringPool();
    assert.equal(pool.intern(parsedId(ID)), ID);
    const a = pool.list([parsedId(ID), 'b']);
    assert.equal(pool.list([ID, 'b']), a);
    assert.notEqual(pool.list(['b', ID]), a);
    assert.notEqual(pool.list([`${ID},b`]), a, 'no separator makes two lists one');
    assert.ok(Object.isFrozen(a));
    assert.deepEqual(a, [ID, 'b']);
  });

  it('keeps one copy of a repeated id: thousands of parsed copies cost a pointer each', () => {
    const pool = new StringPool();
    const perCopy = heapPerItem(
      20_000,
      () => undefined,
      () => Array.from({ length: 20_000 }, () => pool.intern(parsedId(ID))),
    );
    // A copy of its own: ~56 bytes beside its 8-byte slot in the array.
    assert.ok(perCopy < 20, `${perCopy.toFixed(0)} bytes per copy`);
  });

  it('shares one deep-frozen value among equal ones', () => {
    const pool = new StringPool();
    const a = pool.value({ app: 'web', ports: [{ port: 80 }] });
    assert.equal(pool.value({ app: 'web', ports: [{ port: 80 }] }), a);
    assert.notEqual(pool.value({ app: 'db' }), a);
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a.ports[0]));
  });

  it('clears itself past its bound and keeps answering equal values', () => {
    const pool = new StringPool(2);
    for (const v of ['a', 'b', 'c', 'a']) assert.equal(pool.intern(v), v);
    assert.deepEqual(pool.list(['x']), ['x']);
  });
});
