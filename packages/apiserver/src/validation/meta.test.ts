import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { ObjectMeta } from '../../../../src/kube/api/index.ts';
import { nameRuleErrors, validateAnnotations, validateLabelSelector, validateObjectMeta } from './meta.ts';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const namespaced = { namespaced: true, nameRule: 'subdomain' } as const;

describe('validateObjectMeta', () => {
  it('accepts a well-formed object', () => {
    const meta: ObjectMeta = {
      name: 'web.v1',
      namespace: 'default',
      labels: { app: 'web', 'app.kubernetes.io/part-of': 'shop', empty: '' },
      annotations: { 'Kubectl.Kubernetes.io/Last-Applied': '{}' },
      finalizers: ['raven.io/cleanup', 'kubernetes'],
    };
    assert.deepEqual(validateObjectMeta(meta, namespaced), []);
  });

  it('requires a name unless generateName is set', () => {
    assert.deepEqual(validateObjectMeta({ namespace: 'default' }, namespaced), [
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
    assert.deepEqual(validateObjectMeta({ generateName: 'web-', namespace: 'default' }, namespaced), []);
  });

  it('checks generateName as a prefix (a trailing dash is fine)', () => {
    assert.deepEqual(validateObjectMeta({ generateName: 'Web-', namespace: 'd' }, namespaced), [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.generateName',
        message: `Invalid value: "Web-": ${SUBDOMAIN_MSG}`,
      },
    ]);
  });

  it('applies the name rule', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a.b' }, { namespaced: false, nameRule: 'label' }), [
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "a.b": ${LABEL_MSG}` },
    ]);
    assert.deepEqual(validateObjectMeta({ name: 'a.b' }, { namespaced: false, nameRule: 'subdomain' }), []);
    assert.equal(
      validateObjectMeta({ name: '1svc', namespace: 'd' }, { namespaced: true, nameRule: 'dns1035-label' }).length,
      1,
    );
    assert.deepEqual(validateObjectMeta({ name: 'Admin:Role' }, { namespaced: false, nameRule: 'path-segment' }), []);
    assert.deepEqual(validateObjectMeta({ name: 'a'.repeat(64) }, { namespaced: false, nameRule: 'label' }), [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: `Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`,
      },
    ]);
  });

  it('requires a namespace exactly when namespaced', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a' }, namespaced), [
      { reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' },
    ]);
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'Bad' }, namespaced), [
      { reason: 'FieldValueInvalid', field: 'metadata.namespace', message: `Invalid value: "Bad": ${LABEL_MSG}` },
    ]);
    assert.deepEqual(
      validateObjectMeta({ name: 'a', namespace: 'default' }, { namespaced: false, nameRule: 'subdomain' }),
      [{ reason: 'FieldValueForbidden', field: 'metadata.namespace', message: 'Forbidden: not allowed on this type' }],
    );
  });

  it('checks label keys and values', () => {
    assert.deepEqual(
      validateObjectMeta(
        { name: 'a', labels: { '-bad': 'ok', good: '-bad' } },
        { namespaced: false, nameRule: 'subdomain' },
      ),
      [
        { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "-bad": ${NAME_PART_MSG}` },
        { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "-bad": ${VALUE_MSG}` },
      ],
    );
    const labels = { n: 1 } as unknown as Record<string, string>;
    assert.deepEqual(validateObjectMeta({ name: 'a', labels }, { namespaced: false, nameRule: 'subdomain' }), [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: 'Invalid value: 1: must be a string' },
    ]);
  });

  it('checks finalizers and generation', () => {
    assert.deepEqual(
      validateObjectMeta(
        { name: 'a', finalizers: ['a/b/c'], generation: -1 },
        { namespaced: false, nameRule: 'subdomain' },
      ),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'metadata.generation',
          message: 'Invalid value: -1: must be greater than or equal to 0',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'metadata.finalizers',
          message:
            "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        },
      ],
    );
  });
});

describe('validateAnnotations', () => {
  it('compares keys case-insensitively and caps the total size at 256 KiB', () => {
    assert.deepEqual(validateAnnotations({ 'Example.COM/Key': 'x' }, 'metadata.annotations'), []);
    assert.deepEqual(validateAnnotations({ a: 'x'.repeat(262143) }, 'metadata.annotations'), []);
    assert.deepEqual(validateAnnotations({ a: 'x'.repeat(262144) }, 'metadata.annotations'), [
      {
        reason: 'FieldValueTooLong',
        field: 'metadata.annotations',
        message: 'Too long: must have at most 262144 bytes',
      },
    ]);
    assert.deepEqual(validateAnnotations({ 'a b': '' }, 'metadata.annotations'), [
      { reason: 'FieldValueInvalid', field: 'metadata.annotations', message: `Invalid value: "a b": ${NAME_PART_MSG}` },
    ]);
  });
});

describe('validateLabelSelector', () => {
  it('checks operators, values and keys', () => {
    const causes = validateLabelSelector(
      {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'a', operator: 'In' },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Gt', values: ['1'] },
          { key: 'd', operator: 'NotIn', values: ['-x'] },
        ],
      },
      'spec.podSelector',
    );
    assert.deepEqual(causes, [
      {
        reason: 'FieldValueRequired',
        field: 'spec.podSelector.matchExpressions[0].values',
        message: "Required value: must be specified when `operator` is 'In' or 'NotIn'",
      },
      {
        reason: 'FieldValueForbidden',
        field: 'spec.podSelector.matchExpressions[1].values',
        message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.podSelector.matchExpressions[2].operator',
        message: 'Invalid value: "Gt": not a valid selector operator',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.podSelector.matchExpressions[3].values[0]',
        message: `Invalid value: "-x": ${VALUE_MSG}`,
      },
    ]);
    assert.deepEqual(validateLabelSelector(undefined, 'x'), []);
    assert.deepEqual(validateLabelSelector({}, 'x'), []);
  });
});

describe('nameRuleErrors', () => {
  it('implements the path-segment rule', () => {
    assert.deepEqual(nameRuleErrors('path-segment', '..'), ["may not be '..'"]);
    assert.deepEqual(nameRuleErrors('path-segment', 'a/b%c'), ["may not contain '/'", "may not contain '%'"]);
    assert.deepEqual(nameRuleErrors('path-segment', '..', true), []);
  });
  it('masks a trailing dash for prefixes only', () => {
    assert.deepEqual(nameRuleErrors('label', 'web-', true), []);
    assert.deepEqual(nameRuleErrors('label', 'web-'), [LABEL_MSG]);
  });
});
