import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { validateEndpointSlice, validateNetworkPolicy } from './network.ts';

const slice = (body: Record<string, unknown>): KubeObject =>
  deepFreeze({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc', namespace: 'default' },
    ...body,
  });
const policy = (spec: Record<string, unknown>): KubeObject =>
  deepFreeze({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'p', namespace: 'default' },
    spec,
  });

describe('validateEndpointSlice', () => {
  it('accepts a typical slice', () => {
    assert.deepEqual(
      validateEndpointSlice(
        slice({
          addressType: 'IPv4',
          endpoints: [{ addresses: ['10.0.0.5'], conditions: { ready: true }, nodeName: 'node-1', hostname: 'web-0' }],
          ports: [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'dns', port: 53 },
          ],
        }),
      ),
      [],
    );
    assert.deepEqual(
      validateEndpointSlice(slice({ addressType: 'IPv6', endpoints: [{ addresses: ['fd00::5'] }] })),
      [],
    );
    assert.deepEqual(
      validateEndpointSlice(slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com'] }] })),
      [],
    );
  });

  it('requires a supported addressType', () => {
    assert.deepEqual(validateEndpointSlice(slice({})), [
      { reason: 'FieldValueRequired', field: 'addressType', message: 'Required value' },
    ]);
    assert.deepEqual(validateEndpointSlice(slice({ addressType: 'IP' })), [
      {
        reason: 'FieldValueNotSupported',
        field: 'addressType',
        message: 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
      },
    ]);
  });

  it('checks endpoints and their addresses', () => {
    assert.deepEqual(
      validateEndpointSlice(
        slice({
          addressType: 'IPv4',
          endpoints: [{ addresses: [] }, { addresses: ['fd00::1', '10.0.0.256'] }, { addresses: ['::ffff:10.0.0.1'] }],
        }),
      ),
      [
        {
          reason: 'FieldValueRequired',
          field: 'endpoints[0].addresses',
          message: 'Required value: must contain at least 1 address',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'endpoints[1].addresses[0]',
          message: 'Invalid value: "fd00::1": must be a valid IPv4 address',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'endpoints[1].addresses[1]',
          message: 'Invalid value: "10.0.0.256": must be a valid IPv4 address',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'endpoints[1].addresses[1]',
          message: 'Invalid value: "10.0.0.256": must be a valid IP address',
        },
      ],
    );
    assert.deepEqual(validateEndpointSlice(slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db'] }] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'endpoints[0].addresses[0]',
        message: 'Invalid value: "db": should be a domain with at least two segments separated by dots',
      },
    ]);
    const many = Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] }));
    assert.deepEqual(validateEndpointSlice(slice({ addressType: 'IPv4', endpoints: many })), [
      { reason: 'FieldValueTooMany', field: 'endpoints', message: 'Too many: 1001: must have at most 1000 items' },
    ]);
  });

  it('rejects special addresses as endpoints', () => {
    const messages = (addressType: string, address: string): string[] =>
      validateEndpointSlice(slice({ addressType, endpoints: [{ addresses: [address] }] })).map((c) => c.message);
    assert.deepEqual(messages('IPv4', '0.0.0.0'), ['Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)']);
    assert.deepEqual(messages('IPv4', '127.0.0.1'), [
      'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
    assert.deepEqual(messages('IPv4', '169.254.1.1'), [
      'Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
    assert.deepEqual(messages('IPv4', '224.0.0.5'), [
      'Invalid value: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
    assert.deepEqual(messages('IPv6', '::'), ['Invalid value: "::": may not be unspecified (::)']);
    assert.deepEqual(messages('IPv6', '::1'), [
      'Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
    assert.deepEqual(messages('IPv6', 'fe80::1'), [
      'Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
    assert.deepEqual(messages('IPv6', 'ff02::1'), [
      'Invalid value: "ff02::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
    assert.deepEqual(messages('IPv4', '::ffff:127.0.0.1'), [
      'Invalid value: "::ffff:127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
    assert.deepEqual(messages('IPv4', '10.1.2.3'), []);
    assert.deepEqual(messages('IPv6', 'fd00::1'), []);
  });

  it('checks ports', () => {
    assert.deepEqual(
      validateEndpointSlice(
        slice({ addressType: 'IPv4', ports: [{ name: 'a', protocol: 'ICMP', port: 0 }, { name: 'a' }] }),
      ),
      [
        {
          reason: 'FieldValueNotSupported',
          field: 'ports[0].protocol',
          message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'ports[0].port',
          message: 'Invalid value: 0: must be between 1 and 65535, inclusive',
        },
        { reason: 'FieldValueDuplicate', field: 'ports[1].name', message: 'Duplicate value: "a"' },
      ],
    );
  });

  it('keeps addressType on update', () => {
    const stored = slice({ addressType: 'IPv4' });
    assert.deepEqual(validateEndpointSlice(slice({ addressType: 'IPv4' }), stored), []);
    assert.deepEqual(validateEndpointSlice(slice({ addressType: 'IPv6' }), stored), [
      { reason: 'FieldValueInvalid', field: 'addressType', message: 'Invalid value: "IPv6": field is immutable' },
    ]);
  });
});

describe('validateNetworkPolicy', () => {
  it('accepts a typical policy, and one without podSelector (decoded as {})', () => {
    assert.deepEqual(
      validateNetworkPolicy(
        policy({
          podSelector: { matchLabels: { app: 'db' } },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [
            {
              from: [
                { podSelector: { matchLabels: { app: 'web' } }, namespaceSelector: {} },
                { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } },
              ],
              ports: [{ port: 5432 }, { port: 'pg', protocol: 'TCP' }],
            },
          ],
          egress: [{}],
        }),
      ),
      [],
    );
    assert.deepEqual(validateNetworkPolicy(policy({})), []);
  });

  it('checks policyTypes, peers and ports', () => {
    assert.deepEqual(
      validateNetworkPolicy(
        policy({
          podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] },
          policyTypes: ['Ingress', 'Sideways'],
          ingress: [
            {
              from: [{}, { ipBlock: { cidr: '10.0.0.0/33' }, podSelector: {} }],
              ports: [{ port: 0, protocol: 'ICMP' }],
            },
          ],
          egress: [{ to: [{ ipBlock: {} }] }],
        }),
      ),
      [
        {
          reason: 'FieldValueRequired',
          field: 'spec.podSelector.matchExpressions[0].values',
          message: "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        },
        {
          reason: 'FieldValueNotSupported',
          field: 'spec.ingress[0].ports[0].protocol',
          message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'spec.ingress[0].ports[0].port',
          message: 'Invalid value: 0: must be between 1 and 65535, inclusive',
        },
        {
          reason: 'FieldValueRequired',
          field: 'spec.ingress[0].from[0]',
          message: 'Required value: must specify a peer',
        },
        {
          reason: 'FieldValueInvalid',
          field: 'spec.ingress[0].from[1].ipBlock.cidr',
          message: 'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        },
        {
          reason: 'FieldValueForbidden',
          field: 'spec.ingress[0].from[1]',
          message: 'Forbidden: may not specify both ipBlock and another peer',
        },
        { reason: 'FieldValueRequired', field: 'spec.egress[0].to[0].ipBlock.cidr', message: 'Required value' },
        {
          reason: 'FieldValueNotSupported',
          field: 'spec.policyTypes[1]',
          message: 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
        },
      ],
    );
    assert.deepEqual(validateNetworkPolicy(policy({ policyTypes: ['Ingress', 'Egress', 'Ingress'] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.policyTypes',
        message: 'Invalid value: []string{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
      },
    ]);
  });
});
