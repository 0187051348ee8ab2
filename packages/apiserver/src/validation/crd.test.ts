import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { validateCustomResourceDefinition } from './crd.ts';

const DNS1035 = (value: string): string =>
  `Invalid value: "${value}": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;

const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
  },
};

function crd(name: string, spec: Record<string, unknown>): KubeObject {
  return deepFreeze({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec,
  });
}

const good = {
  group: 'raven.example.io',
  scope: 'Namespaced',
  names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
  versions: [
    { name: 'v1', served: true, storage: true, schema },
    { name: 'v1beta1', served: true, storage: false, schema },
  ],
};

describe('validateCustomResourceDefinition', () => {
  it('accepts a well-formed CRD, defaulting singular and listKind', () => {
    assert.deepEqual(validateCustomResourceDefinition(crd('widgets.raven.example.io', good)), []);
    assert.deepEqual(
      validateCustomResourceDefinition(
        crd('widgets.raven.example.io', {
          ...good,
          scope: 'Cluster',
          names: { ...good.names, singular: 'widget', listKind: 'WidgetList' },
        }),
      ),
      [],
    );
  });

  it('requires the name to be <plural>.<group>', () => {
    assert.deepEqual(validateCustomResourceDefinition(crd('widget.raven.example.io', good)), [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: 'Invalid value: "widget.raven.example.io": must be spec.names.plural+"."+spec.group',
      },
    ]);
  });

  it('checks group and scope', () => {
    assert.deepEqual(
      validateCustomResourceDefinition(crd('widgets.raven', { ...good, group: 'raven', scope: 'Global' })),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.group',
          message: 'Invalid value: "raven": should be a domain with at least one dot',
        },
        {
          reason: 'FieldValueNotSupported',
          field: 'spec.scope',
          message: 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        },
      ],
    );
    assert.deepEqual(
      validateCustomResourceDefinition(crd('widgets.', { ...good, group: '', scope: '' })).map((c) => [
        c.field,
        c.message,
      ]),
      [
        ['spec.group', 'Required value'],
        ['spec.scope', 'Required value'],
      ],
    );
    assert.equal(
      validateCustomResourceDefinition(crd('widgets.Raven.io', { ...good, group: 'Raven.io' }))[0]?.field,
      'spec.group',
    );
  });

  it('checks names', () => {
    const causes = validateCustomResourceDefinition(
      crd('Widgets.raven.example.io', {
        ...good,
        names: { plural: 'Widgets', kind: 'Wid_get', listKind: 'Wid_get', shortNames: ['1w'] },
      }),
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['spec.names.plural', DNS1035('Widgets')],
        // singular defaults to the lower-cased kind, so it inherits the kind's problem.
        ['spec.names.singular', DNS1035('wid_get')],
        [
          'spec.names.kind',
          DNS1035('Wid_get').replace(': a DNS-1035', ': may have mixed case, but should otherwise match: a DNS-1035'),
        ],
        [
          'spec.names.listKind',
          DNS1035('Wid_get').replace(': a DNS-1035', ': may have mixed case, but should otherwise match: a DNS-1035'),
        ],
        ['spec.names.shortNames[0]', DNS1035('1w')],
        ['spec.names.listKind', 'Invalid value: "Wid_get": kind and listKind may not be the same'],
      ],
    );
    assert.deepEqual(
      validateCustomResourceDefinition(crd('.raven.example.io', { ...good, names: {} })).map((c) => [
        c.field,
        c.message,
      ]),
      [
        ['spec.names.plural', 'Required value'],
        ['spec.names.singular', 'Required value'],
        ['spec.names.kind', 'Required value'],
        ['spec.names.listKind', 'Required value'],
      ],
    );
  });

  it('checks versions and their schemas', () => {
    const versions = [
      { name: 'v1', storage: true, schema },
      { name: 'v1', storage: true },
      { name: 'V2', storage: false, schema: { openAPIV3Schema: { type: 'string' } } },
      { name: 'v3', schema: { openAPIV3Schema: {} } },
    ];
    const causes = validateCustomResourceDefinition(crd('widgets.raven.example.io', { ...good, versions }));
    const shown = JSON.stringify(versions);
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['spec.versions[1].schema.openAPIV3Schema', 'Required value: schemas are required'],
        ['spec.versions[2].name', DNS1035('V2')],
        ['spec.versions[2].schema.openAPIV3Schema.type', 'Invalid value: "string": must be object at the root'],
        ['spec.versions[3].schema.openAPIV3Schema.type', 'Required value: must not be empty at the root'],
        ['spec.versions', `Invalid value: ${shown}: must contain unique version names`],
        ['spec.versions', `Invalid value: ${shown}: must have exactly one version marked as storage version`],
      ],
    );
    assert.deepEqual(
      validateCustomResourceDefinition(crd('widgets.raven.example.io', { ...good, versions: [] })).map(
        (c) => c.message,
      ),
      ['Invalid value: []: must have exactly one version marked as storage version'],
    );
  });

  it('fixes group, plural, scope and kind on update', () => {
    const stored = crd('widgets.raven.example.io', good);
    assert.deepEqual(
      validateCustomResourceDefinition(
        crd('widgets.raven.example.io', { ...good, names: { ...good.names, shortNames: ['w'] } }),
        stored,
      ),
      [],
    );
    const changed = crd('gadgets.other.example.io', {
      ...good,
      group: 'other.example.io',
      scope: 'Cluster',
      names: { plural: 'gadgets', kind: 'Gadget' },
    });
    assert.deepEqual(
      validateCustomResourceDefinition(changed, stored).map((c) => [c.field, c.message]),
      [
        ['spec.scope', 'Invalid value: "Cluster": field is immutable'],
        ['spec.names.kind', 'Invalid value: "Gadget": field is immutable'],
        ['spec.group', 'Invalid value: "other.example.io": field is immutable'],
        ['spec.names.plural', 'Invalid value: "gadgets": field is immutable'],
      ],
    );
  });
});
