import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import {
  compareElements,
  isMember,
  keyElement,
  memberPaths,
  parseFields,
  pathString,
  sortLevel,
  valueElement,
  type Fields,
} from './fields.ts';
import { difference, intersection, union } from './set-ops.ts';

/** Deep-frozen, as sets stored in objects are. */
function frozen<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.freeze(value);
    for (const child of Object.values(value)) frozen(child);
  }
  return value;
}

describe('path elements', () => {
  it('writes keys and values as upstream: key fields sorted, canonical JSON', () => {
    assert.equal(
      keyElement([
        ['protocol', 'TCP'],
        ['port', 80],
      ]),
      'k:{"port":80,"protocol":"TCP"}',
    );
    assert.equal(keyElement([['name', 'a']]), 'k:{"name":"a"}');
    assert.equal(valueElement('example.com/cleanup'), 'v:"example.com/cleanup"');
  });

  it('prints paths as fieldpath.Path.String does', () => {
    assert.equal(
      pathString(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:targetPort']),
      '.spec.ports[port=80,protocol="TCP"].targetPort',
    );
    assert.equal(pathString(['f:metadata', 'f:finalizers', 'v:"a/b"']), '.metadata.finalizers[="a/b"]');
    assert.equal(pathString(['f:data', 'f:key.with.dots']), '.data.key.with.dots');
    assert.equal(pathString(['f:x', 'i:3']), '.x[3]');
  });

  it('orders `.` first, then fields by name, keys, values, indices', () => {
    const keys = ['i:0', 'v:"b"', 'k:{"name":"b"}', 'f:b', 'k:{"name":"a"}', 'v:1', '.', 'f:a'];
    assert.deepEqual([...keys].sort(compareElements), [
      '.',
      'f:a',
      'f:b',
      'k:{"name":"a"}',
      'k:{"name":"b"}',
      'v:1',
      'v:"b"',
      'i:0',
    ]);
    assert.deepEqual(Object.keys(sortLevel({ 'f:z': {}, 'f:a': {} })), ['f:a', 'f:z']);
  });
});

describe('membership', () => {
  it('is a leaf `{}` or a node with `.`; a node with only children is a prefix', () => {
    assert.equal(isMember({}), true);
    assert.equal(isMember({ '.': {}, 'f:a': {} }), true);
    assert.equal(isMember({ 'f:a': {} }), false);
  });

  it('lists members level by level, members before children', () => {
    const set: Fields = { 'f:a': { 'f:x': {} }, 'f:b': {}, 'f:c': { '.': {}, 'f:y': {} } };
    assert.deepEqual(memberPaths(set).map(pathString), ['.b', '.c', '.a.x', '.c.y']);
  });
});

describe('set operations', () => {
  const a = frozen<Fields>({
    'f:data': { '.': {}, 'f:k': {}, 'f:j': {} },
    'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
  });

  it('difference removes members only, not what is below them', () => {
    assert.deepEqual(difference(a, { 'f:data': {} }), {
      'f:data': { 'f:k': {}, 'f:j': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
    });
    assert.deepEqual(difference(a, { 'f:data': { 'f:k': {} } }), {
      'f:data': { '.': {}, 'f:j': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
    });
    assert.deepEqual(difference(a, { 'f:data': { '.': {}, 'f:k': {}, 'f:j': {} } }), {
      'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
    });
    assert.deepEqual(difference({ 'f:a': { '.': {}, 'f:b': {} } }, { 'f:a': { 'f:b': {} } }), { 'f:a': {} });
  });

  it('shares what it does not change with its input', () => {
    const result = difference(a, { 'f:data': { 'f:k': {} } });
    assert.equal(result['f:metadata'], a['f:metadata']);
    assert.equal(difference(a, { 'f:other': {} }), a);
    assert.equal(union(a, { 'f:data': { 'f:k': {} } }), a);
  });

  it('union merges membership and children, keeping levels sorted', () => {
    const u = union(a, { 'f:data': { 'f:a': {} }, 'f:binaryData': {} });
    assert.deepEqual(Object.keys(u), ['f:binaryData', 'f:data', 'f:metadata']);
    assert.deepEqual(Object.keys(u['f:data']!), ['.', 'f:a', 'f:j', 'f:k']);
    assert.deepEqual(union({ 'f:a': {} }, { 'f:a': { 'f:b': {} } }), { 'f:a': { '.': {}, 'f:b': {} } });
  });

  it('intersection keeps the paths in both', () => {
    assert.deepEqual(intersection(a, { 'f:data': { 'f:k': {}, 'f:z': {} } }), { 'f:data': { 'f:k': {} } });
    assert.deepEqual(intersection(a, { 'f:data': {} }), { 'f:data': {} });
    assert.deepEqual(intersection(a, { 'f:spec': {} }), {});
  });
});

describe('parseFields', () => {
  it('accepts FieldsV1 and canonicalises keys and order', () => {
    assert.deepEqual(
      parseFields({
        'f:spec': { 'f:ports': { 'k:{"protocol":"TCP","port":80}': { '.': {}, 'f:port': {} } } },
        'f:data': {},
      }),
      {
        'f:data': {},
        'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } },
      },
    );
  });

  it('rejects what is not a set', () => {
    for (const bad of [
      [],
      'x',
      { name: {} },
      { 'f:a': 1 },
      { 'k:[1]': {} },
      { 'k:{': {} },
      { '.': { 'f:a': {} } },
      { 'f:__proto__': { x: {} } },
    ]) {
      assert.equal(parseFields(bad), undefined, JSON.stringify(bad));
    }
  });
});
