import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { queryString, resourcePath, resources, type ResourceRef } from './paths.ts';

describe('resourcePath', () => {
  it('builds core-group paths, namespaced or not', () => {
    assert.equal(resourcePath(resources.pods), '/api/v1/pods');
    assert.equal(resourcePath(resources.pods, { namespace: 'default' }), '/api/v1/namespaces/default/pods');
    assert.equal(
      resourcePath(resources.pods, { namespace: 'default', name: 'web' }),
      '/api/v1/namespaces/default/pods/web',
    );
    assert.equal(resourcePath(resources.nodes, { name: 'n1' }), '/api/v1/nodes/n1');
    assert.equal(
      resourcePath(resources.namespaces, { name: 'kube-system', subresource: 'status' }),
      '/api/v1/namespaces/kube-system/status',
    );
  });

  it('builds named-group paths and subresources', () => {
    assert.equal(
      resourcePath(resources.endpointslices, { namespace: 'ns' }),
      '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices',
    );
    assert.equal(
      resourcePath(resources.leases, { namespace: 'kube-system', name: 'raven' }),
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/raven',
    );
    const crd: ResourceRef = { group: 'example.com', version: 'v1alpha1', resource: 'widgets', namespaced: false };
    assert.equal(
      resourcePath(crd, { name: 'w', subresource: 'status' }),
      '/apis/example.com/v1alpha1/widgets/w/status',
    );
  });

  it('escapes segments and refuses incomplete paths', () => {
    assert.equal(
      resourcePath(resources.configmaps, { namespace: 'a', name: 'x y' }),
      '/api/v1/namespaces/a/configmaps/x%20y',
    );
    assert.throws(() => resourcePath(resources.pods, { name: 'web' }), RangeError);
    assert.throws(() => resourcePath(resources.nodes, { name: '' }), RangeError);
    assert.throws(() => resourcePath(resources.nodes, { subresource: 'status' }), RangeError);
  });

  it('the built-in constants are frozen and complete', () => {
    assert.ok(Object.isFrozen(resources.pods));
    assert.deepEqual(Object.keys(resources).sort(), [
      'configmaps',
      'deployments',
      'endpoints',
      'endpointslices',
      'events',
      'leases',
      'namespaces',
      'networkpolicies',
      'nodes',
      'pods',
      'secrets',
      'services',
    ]);
    assert.equal(resources.networkpolicies.group, 'networking.k8s.io');
    assert.equal(resources.deployments.group, 'apps');
    assert.equal(resources.namespaces.namespaced, false);
  });
});

describe('queryString', () => {
  it('skips undefined and empty values, encodes the rest', () => {
    assert.equal(queryString({}), '');
    assert.equal(queryString({ a: undefined, b: '' }), '');
    assert.equal(
      queryString({ labelSelector: 'app=web,tier in (a,b)', limit: 500, watch: true }),
      '?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29&limit=500&watch=true',
    );
  });
});
