import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { TypedValueError } from './errors.ts';
import { builtinType, customResourceType } from './schema.ts';
import { compareObjects, fieldSetOf } from './walk.ts';

const pod = builtinType('', 'Pod');
const service = builtinType('', 'Service');
const configMap = builtinType('', 'ConfigMap');

describe('fieldSetOf (the fields an applied configuration sets)', () => {
  it('claims scalars, map keys, list items by key; named structs only as prefixes; never what the server owns', () => {
    const set = fieldSetOf(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'p',
          namespace: 'ns',
          labels: { app: 'x' },
          finalizers: ['a/b'],
          ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1' }],
        },
        spec: {
          containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], args: ['a', 'b'], resources: {} }],
        },
      },
      pod,
    );
    assert.deepEqual(set, {
      'f:metadata': {
        'f:finalizers': { 'v:"a/b"': {} },
        'f:labels': { 'f:app': {} },
        'f:ownerReferences': { 'k:{"uid":"u1"}': {} },
      },
      'f:spec': {
        'f:containers': {
          'k:{"name":"c"}': {
            '.': {},
            'f:args': {},
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
            'f:resources': {},
          },
        },
      },
    });
  });

  it('claims a field given as null, and nothing for an empty granular list', () => {
    assert.deepEqual(fieldSetOf({ metadata: { finalizers: [] }, data: { a: null } }, configMap), {
      'f:data': { 'f:a': {} },
    });
  });

  it('treats atomic maps and structs as one leaf', () => {
    assert.deepEqual(fieldSetOf({ spec: { selector: { app: 'x', tier: 'y' } } }, service), {
      'f:spec': { 'f:selector': {} },
    });
  });

  it('fails like upstream on items without their key and on duplicate keys', () => {
    assert.throws(
      () => fieldSetOf({ spec: { containers: [{ image: 'x' }] } }, pod),
      (err: unknown) => {
        assert.ok(err instanceof TypedValueError);
        assert.equal(
          err.message,
          '.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
        );
        return true;
      },
    );
    assert.throws(
      () => fieldSetOf({ spec: { containers: [{ name: 'a' }, { name: 'a' }] } }, pod),
      /\.spec\.containers: duplicate entries for key \[name="a"\]/,
    );
  });

  it('follows a CRD schema: list-type map with keys, sets; and deduces schemaless fields', () => {
    const crd = customResourceType({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            replicas: { type: 'integer' },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
            },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            args: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    });
    assert.deepEqual(
      fieldSetOf({ spec: { replicas: 2, ports: [{ name: 'http', port: 80 }], tags: ['a'], args: ['x'] } }, crd),
      {
        'f:spec': {
          'f:args': {},
          'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
          'f:replicas': {},
          'f:tags': { 'v:"a"': {} },
        },
      },
    );
    // x-kubernetes-preserve-unknown-fields: every key is a map key, so objects are members of their own.
    assert.deepEqual(
      fieldSetOf(
        { spec: { a: { b: 1 } } },
        customResourceType({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
      ),
      {
        'f:spec': { '.': {}, 'f:a': { '.': {}, 'f:b': {} } },
      },
    );
  });
});

describe('compareObjects (what a write changed)', () => {
  it('reports modified and added leaves, and containers that appear as a whole', () => {
    const { changed, removed } = compareObjects(
      { metadata: { name: 'a', resourceVersion: '1' }, data: { a: '1', b: '2' } },
      { metadata: { name: 'a', resourceVersion: '2', labels: { x: 'y' } }, data: { a: '1', b: '3', c: '4' } },
      configMap,
    );
    assert.deepEqual(changed, {
      'f:data': { 'f:b': {}, 'f:c': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
    });
    assert.deepEqual(removed, {});
  });

  it('reports removed leaves and items; atomic lists change as one leaf', () => {
    const before = {
      spec: {
        containers: [
          { name: 'a', image: 'x', args: ['1'] },
          { name: 'b', image: 'y' },
        ],
      },
    };
    const after = { spec: { containers: [{ name: 'a', image: 'x', args: ['2'] }] } };
    const { changed, removed } = compareObjects(before, after, pod);
    assert.deepEqual(changed, { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { 'f:args': {} } } } });
    assert.deepEqual(removed, {
      'f:spec': { 'f:containers': { 'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    });
  });

  it('sees nothing when only order-insensitive details or server-owned fields differ', () => {
    const { changed, removed } = compareObjects(
      { metadata: { uid: '1', generation: 1, managedFields: [] }, data: { a: '1', b: '2' } },
      { metadata: { uid: '2', generation: 2 }, data: { b: '2', a: '1' } },
      configMap,
    );
    assert.deepEqual([changed, removed], [{}, {}]);
  });
});
