import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { isTrueParam, parseRequestInfo } from './request-info.ts';

const parse = (method: string, path: string) => {
  const url = new URL(`http://x${path}`);
  return parseRequestInfo(method, url.pathname, url.searchParams);
};

describe('parseRequestInfo', () => {
  it('parses core and group paths, namespaced and cluster-scoped', () => {
    assert.deepEqual(parse('GET', '/api/v1/namespaces/ns/pods/p'), {
      group: '',
      version: 'v1',
      namespace: 'ns',
      resource: 'pods',
      name: 'p',
      verb: 'get',
    });
    assert.deepEqual(parse('GET', '/api/v1/pods'), { group: '', version: 'v1', resource: 'pods', verb: 'list' });
    assert.deepEqual(parse('POST', '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices'), {
      group: 'discovery.k8s.io',
      version: 'v1',
      namespace: 'ns',
      resource: 'endpointslices',
      verb: 'create',
    });
    assert.deepEqual(parse('PUT', '/api/v1/namespaces/ns/pods/p/status'), {
      group: '',
      version: 'v1',
      namespace: 'ns',
      resource: 'pods',
      name: 'p',
      subresource: 'status',
      verb: 'update',
    });
    assert.deepEqual(parse('DELETE', '/api/v1/namespaces/ns/configmaps'), {
      group: '',
      version: 'v1',
      namespace: 'ns',
      resource: 'configmaps',
      verb: 'deletecollection',
    });
  });

  it('treats the namespace object and its subresources as the namespaces resource', () => {
    assert.deepEqual(parse('GET', '/api/v1/namespaces/ns'), {
      group: '',
      version: 'v1',
      resource: 'namespaces',
      name: 'ns',
      verb: 'get',
    });
    assert.deepEqual(parse('PUT', '/api/v1/namespaces/ns/status'), {
      group: '',
      version: 'v1',
      resource: 'namespaces',
      name: 'ns',
      subresource: 'status',
      verb: 'update',
    });
    assert.deepEqual(parse('GET', '/api/v1/namespaces'), {
      group: '',
      version: 'v1',
      resource: 'namespaces',
      verb: 'list',
    });
  });

  it('recognises watches by query (leniently) and by the legacy /watch/ prefix', () => {
    assert.equal(parse('GET', '/api/v1/namespaces/ns/pods?watch=True')?.verb, 'watch');
    assert.equal(parse('GET', '/api/v1/pods?watch=1')?.verb, 'watch');
    assert.equal(parse('GET', '/api/v1/pods?watch=false')?.verb, 'list');
    assert.equal(parse('GET', '/api/v1/pods?watch=yes')?.verb, 'watch');
    assert.equal(parse('GET', '/api/v1/namespaces/ns/pods/p?watch=true')?.verb, 'get', 'a named GET stays a GET');
    assert.deepEqual(parse('GET', '/api/v1/watch/namespaces/ns/pods/p'), {
      group: '',
      version: 'v1',
      namespace: 'ns',
      resource: 'pods',
      name: 'p',
      verb: 'watch',
    });
    assert.deepEqual(['0', 'false', 'False', null].map(isTrueParam), [false, false, false, false]);
    assert.deepEqual(['1', 'true', 'True', ''].map(isTrueParam), [true, true, true, true]);
  });

  it('returns undefined for non-resource paths', () => {
    for (const path of [
      '/api',
      '/api/v1',
      '/apis',
      '/apis/g',
      '/apis/g/v1',
      '/version',
      '/healthz',
      '/api/v1/a/b/c/d',
    ]) {
      assert.equal(parse('GET', path), undefined, path);
    }
  });
});
