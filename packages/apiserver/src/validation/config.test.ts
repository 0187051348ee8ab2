import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { validateConfigMap, validateSecret } from './config.ts';

const KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

const obj = (kind: string, body: Record<string, unknown>): KubeObject =>
  deepFreeze({ apiVersion: 'v1', kind, metadata: { name: 'c', namespace: 'default' }, ...body });

describe('validateConfigMap', () => {
  it('accepts file-like keys in data and binaryData', () => {
    assert.deepEqual(
      validateConfigMap(
        obj('ConfigMap', { data: { 'app.properties': 'a=1', '.env': 'X=1' }, binaryData: { 'logo.png': 'iVBORw0=' } }),
      ),
      [],
    );
    assert.deepEqual(validateConfigMap(obj('ConfigMap', {})), []);
  });

  it('rejects bad keys, duplicates across data and binaryData, and oversize data', () => {
    assert.deepEqual(
      validateConfigMap(
        obj('ConfigMap', { data: { 'a/b': '', '..x': '', dup: '' }, binaryData: { dup: '', 'c d': '' } }),
      ),
      [
        { reason: 'FieldValueInvalid', field: 'data[a/b]', message: `Invalid value: "a/b": ${KEY_MSG}` },
        {
          reason: 'FieldValueInvalid',
          field: 'data[..x]',
          message: 'Invalid value: "..x": must not start with \'..\'',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'data[dup]',
          message: 'Invalid value: "dup": duplicate of key present in binaryData',
        },
        { reason: 'FieldValueInvalid', field: 'binaryData[c d]', message: `Invalid value: "c d": ${KEY_MSG}` },
      ],
    );
    assert.deepEqual(validateConfigMap(obj('ConfigMap', { data: { a: 'x'.repeat(1024 * 1024), b: 'y' } })), [
      { reason: 'FieldValueTooLong', field: '', message: 'Too long: must have at most 1048576 bytes' },
    ]);
    assert.deepEqual(validateConfigMap(obj('ConfigMap', { data: { a: 'x'.repeat(1024 * 1024) } })), []);
  });

  it('freezes data once stored as immutable', () => {
    const stored = obj('ConfigMap', { immutable: true, data: { a: '1' } });
    assert.deepEqual(validateConfigMap(obj('ConfigMap', { immutable: true, data: { a: '1' } }), stored), []);
    assert.deepEqual(validateConfigMap(obj('ConfigMap', { immutable: false, data: { a: '2' } }), stored), [
      {
        reason: 'FieldValueForbidden',
        field: 'immutable',
        message: 'Forbidden: field is immutable when `immutable` is set',
      },
      {
        reason: 'FieldValueForbidden',
        field: 'data',
        message: 'Forbidden: field is immutable when `immutable` is set',
      },
    ]);
    const mutable = obj('ConfigMap', { data: { a: '1' } });
    assert.deepEqual(validateConfigMap(obj('ConfigMap', { immutable: true, data: { a: '2' } }), mutable), []);
  });
});

describe('validateSecret', () => {
  it('accepts Opaque and TLS secrets', () => {
    assert.deepEqual(validateSecret(obj('Secret', { type: 'Opaque', data: { password: 'cGFzcw==' } })), []);
    assert.deepEqual(
      validateSecret(
        obj('Secret', { type: 'kubernetes.io/tls', data: { 'tls.crt': 'YQ==' }, stringData: { 'tls.key': 'k' } }),
      ),
      [],
    );
  });

  it('checks keys, required keys for typed secrets and size', () => {
    assert.deepEqual(
      validateSecret(
        obj('Secret', { type: 'kubernetes.io/tls', data: { 'tls.crt': 'YQ==' }, stringData: { 'a b': 'x' } }),
      ),
      [
        { reason: 'FieldValueInvalid', field: 'stringData[a b]', message: `Invalid value: "a b": ${KEY_MSG}` },
        { reason: 'FieldValueRequired', field: 'data[tls.key]', message: 'Required value' },
      ],
    );
    assert.deepEqual(validateSecret(obj('Secret', { type: 'kubernetes.io/dockerconfigjson' })), [
      { reason: 'FieldValueRequired', field: 'data[.dockerconfigjson]', message: 'Required value' },
    ]);
    // 1 MiB decoded is 1398104 base64 characters (with padding); one byte more is too long.
    const base64 = (bytes: number): string => Buffer.alloc(bytes).toString('base64');
    assert.deepEqual(validateSecret(obj('Secret', { data: { a: base64(1024 * 1024) } })), []);
    assert.deepEqual(validateSecret(obj('Secret', { data: { a: base64(1024 * 1024 + 1) } })), [
      { reason: 'FieldValueTooLong', field: 'data', message: 'Too long: must have at most 1048576 bytes' },
    ]);
  });

  it('keeps the type, and the data of an immutable secret', () => {
    const stored = obj('Secret', { type: 'Opaque', immutable: true, data: { a: 'YQ==' } });
    assert.deepEqual(validateSecret(obj('Secret', { immutable: true, data: { a: 'YQ==' } }), stored), []);
    assert.deepEqual(
      validateSecret(obj('Secret', { type: 'kubernetes.io/basic-auth', immutable: true, data: { a: 'Yg==' } }), stored),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'type',
          message: 'Invalid value: "kubernetes.io/basic-auth": field is immutable',
        },
        {
          reason: 'FieldValueForbidden',
          field: 'data',
          message: 'Forbidden: field is immutable when `immutable` is set',
        },
      ],
    );
  });
});
