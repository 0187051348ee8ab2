import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import {
  duplicate,
  forbidden,
  formatValue,
  immutable,
  invalid,
  isZero,
  notSupported,
  required,
  semanticEqual,
  tooLong,
  tooMany,
} from './field.ts';

describe('cause builders', () => {
  it('write upstream ErrorBody messages', () => {
    assert.deepEqual(required('spec.containers'), {
      reason: 'FieldValueRequired',
      field: 'spec.containers',
      message: 'Required value',
    });
    assert.deepEqual(required('metadata.name', 'name or generateName is required'), {
      reason: 'FieldValueRequired',
      field: 'metadata.name',
      message: 'Required value: name or generateName is required',
    });
    assert.deepEqual(invalid('spec.ports[0].port', 0, 'must be between 1 and 65535, inclusive'), {
      reason: 'FieldValueInvalid',
      field: 'spec.ports[0].port',
      message: 'Invalid value: 0: must be between 1 and 65535, inclusive',
    });
    assert.deepEqual(notSupported('spec.type', 'Foo', ['ClusterIP', 'NodePort']), {
      reason: 'FieldValueNotSupported',
      field: 'spec.type',
      message: 'Unsupported value: "Foo": supported values: "ClusterIP", "NodePort"',
    });
    assert.equal(duplicate('x', 'a').message, 'Duplicate value: "a"');
    assert.equal(duplicate('x', 30080).message, 'Duplicate value: 30080');
    assert.equal(
      forbidden('metadata.namespace', 'not allowed on this type').message,
      'Forbidden: not allowed on this type',
    );
    assert.equal(tooLong('metadata.annotations', 262144).message, 'Too long: must have at most 262144 bytes');
    assert.equal(tooMany('endpoints', 1001, 1000).message, 'Too many: 1001: must have at most 1000 items');
  });

  it('immutable compares semantically', () => {
    assert.deepEqual(immutable('spec.group', 'a.io', 'a.io'), []);
    assert.deepEqual(immutable('spec.group', 'b.io', 'a.io'), [
      { reason: 'FieldValueInvalid', field: 'spec.group', message: 'Invalid value: "b.io": field is immutable' },
    ]);
  });
});

describe('formatValue', () => {
  it('prints values as Go does where it can', () => {
    assert.equal(formatValue('a"b'), '"a\\"b"');
    assert.equal(formatValue(42), '42');
    assert.equal(formatValue(true), 'true');
    assert.equal(formatValue(null), 'null');
    assert.equal(formatValue(undefined), 'null');
    assert.equal(formatValue(['a', 'b']), '[]string{"a", "b"}');
    assert.equal(formatValue([{ name: 'v1' }]), '[{"name":"v1"}]');
  });
});

describe('isZero and semanticEqual', () => {
  it('treat Go zero values as absent', () => {
    for (const zero of [undefined, null, '', 0, false, [], {}, { a: '', b: { c: null } }])
      assert.ok(isZero(zero), JSON.stringify(zero));
    for (const value of ['a', 1, true, [0], { a: 1 }]) assert.ok(!isZero(value), JSON.stringify(value));
  });
  it('compare nested JSON', () => {
    assert.ok(semanticEqual({ a: [1, { b: 'x' }], c: '' }, { a: [1, { b: 'x', d: null }] }));
    assert.ok(semanticEqual({ tolerations: [] }, {}));
    assert.ok(!semanticEqual({ a: [1, 2] }, { a: [2, 1] }));
    assert.ok(!semanticEqual({ a: 1 }, { a: '1' }));
    assert.ok(!semanticEqual({ a: [1] }, { a: { 0: 1 } }));
  });
});
