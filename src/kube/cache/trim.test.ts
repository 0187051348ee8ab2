import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import type { Service } from '../api/index.ts';
import { trimMetadata } from './trim.ts';

describe('trimMetadata', () => {
  it('drops managedFields and kubectl last-applied-configuration, and keeps every other field', () => {
    const service: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'shop',
        uid: 'u-1',
        resourceVersion: '42',
        labels: { app: 'web' },
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service"}',
          'raven.openstack.org/floating-ip': '203.0.113.7',
        },
        finalizers: ['raven.openstack.org/loadbalancer'],
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80 }] },
      status: { loadBalancer: {} },
    };
    const { managedFields: _, ...kept } = service.metadata;
    assert.deepEqual(trimMetadata(service), {
      ...service,
      metadata: { ...kept, annotations: { 'raven.openstack.org/floating-ip': '203.0.113.7' } },
    });
    assert.equal(service.metadata.managedFields?.length, 1, 'the object it was given is not changed');
  });

  it('leaves an object without them as it was', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', annotations: { a: 'b' } } };
    assert.deepEqual(trimMetadata(ns), ns);
  });
});
