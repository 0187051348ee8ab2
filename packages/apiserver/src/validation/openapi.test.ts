import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { admitCustomResource, type StructuralSchema } from './openapi.ts';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
        name: { type: 'string', maxLength: 5, pattern: '^[a-z]+$' },
        ports: { type: 'array', maxItems: 2, items: { type: 'object', properties: { port: { type: 'integer' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        port: { 'x-kubernetes-int-or-string': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

const widget = (spec: Record<string, unknown>, more: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', labels: { a: 'b' } },
  spec,
  ...more,
});

describe('custom resources against their structural schema', () => {
  it('fills defaults and prunes unknown fields, keeping preserved subtrees and the root metadata', () => {
    const obj = widget(
      { size: 3, unknown: 1, ports: [{ port: 80, junk: true }], labels: { x: 'y' }, extra: { anything: { goes: 1 } } },
      { junkAtRoot: 1 },
    );
    assert.deepEqual(admitCustomResource(obj, schema), []);
    assert.deepEqual(obj, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' } },
      spec: { size: 3, mode: 'safe', ports: [{ port: 80 }], labels: { x: 'y' }, extra: { anything: { goes: 1 } } },
    });
  });

  it('reports every violation with the field path and kube-openapi wording', () => {
    const obj = widget({
      size: 'big',
      mode: 'slow',
      name: 'Toolong',
      ports: [{ port: 1 }, { port: 2 }, { port: 'x' }],
      port: 1.5,
    });
    const causes = admitCustomResource(obj, schema);
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason, c.message]),
      [
        ['spec.size', 'FieldValueInvalid', 'Invalid value: "big": spec.size in body must be of type integer: "string"'],
        ['spec.mode', 'FieldValueNotSupported', 'Unsupported value: "slow": supported values: "fast", "safe"'],
        [
          'spec.name',
          'FieldValueInvalid',
          'Invalid value: "Toolong": spec.name in body should be at most 5 chars long',
        ],
        ['spec.name', 'FieldValueInvalid', 'Invalid value: "Toolong": spec.name in body should match \'^[a-z]+$\''],
        ['spec.ports', 'FieldValueInvalid', 'Invalid value: 3: spec.ports in body should have at most 2 items'],
        [
          'spec.ports[2].port',
          'FieldValueInvalid',
          'Invalid value: "x": spec.ports[2].port in body must be of type integer: "string"',
        ],
        [
          'spec.port',
          'FieldValueInvalid',
          'Invalid value: 1.5: spec.port in body must be of type integer or string: "number"',
        ],
      ],
    );
  });

  it('requires required properties and checks bounds', () => {
    assert.deepEqual(
      admitCustomResource(widget({}), schema).map((c) => c.message),
      ['Required value'],
    );
    assert.deepEqual(
      admitCustomResource(widget({ size: 11 }), schema).map((c) => c.message),
      ['Invalid value: 11: spec.size in body should be less than or equal to 10'],
    );
    assert.deepEqual(
      admitCustomResource(widget({ size: 0 }), schema).map((c) => c.message),
      ['Invalid value: 0: spec.size in body should be greater than or equal to 1'],
    );
  });

  it('accepts anything without a schema', () => {
    const obj = widget({ whatever: true });
    assert.deepEqual(admitCustomResource(obj, undefined), []);
    assert.deepEqual(obj.spec, { whatever: true });
  });
});
