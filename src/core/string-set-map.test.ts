import assert from 'node:assert/strict';
import { heapPerItem } from '../../test/support/heap.ts';
import { describe, it } from '../../test/support/node-test.ts';
import { StringSetMap } from './string-set-map.ts';

describe('StringSetMap', () => {
  it('holds members per key in the order added, each once, and forgets a key with none left', () => {
    const m = new StringSetMap();
    m.add('a', 'x');
    m.add('a', 'x');
    assert.deepEqual(m.get('a'), ['x']);
    m.add('a', 'y');
    m.add('a', 'z');
    assert.deepEqual(m.get('a'), ['x', 'y', 'z']);
    assert.equal(m.first('a'), 'x');
    m.delete('a', 'x');
    m.delete('a', 'z');
    assert.deepEqual(m.get('a'), ['y']);
    m.add('a', 'x');
    assert.deepEqual(m.get('a'), ['y', 'x']);
    m.delete('a', 'q');
    m.delete('a', 'y');
    m.delete('a', 'x');
    assert.deepEqual(m.get('a'), []);
    assert.equal(m.first('a'), undefined);
    assert.equal(m.size, 0);
    m.add('b', 'x');
    m.add('c', 'x');
    assert.deepEqual(m.keys(), ['b', 'c']);
  });

  it('a copy is handed out: changing it changes nothing held', () => {
    const m = new StringSetMap();
    m.add('a', 'x');
    m.get('a').push('y');
    assert.deepEqual(m.get('a'), ['x']);
  });

  it('a key with one member costs no Set: under 120 bytes an entry (a Map of Sets of one: about 240)', () => {
    const strings = (n: number) => Array.from({ length: n }, (_, i) => [`key-${i}`, `member-${i}`] as const);
    const perEntry = heapPerItem(20_000, strings, (pairs) => {
      const m = new StringSetMap();
      for (const [k, v] of pairs) m.add(k, v);
      return m;
    });
    assert.ok(perEntry < 120, `${perEntry.toFixed(0)} bytes per entry`);
  });
});
