import assert from 'node:assert/strict';
import { after, describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { createApiServer, defaultApiServerOptions } from '../app.ts';
import { managerFromUserAgent } from './dispatch.ts';

describe('managerFromUserAgent', () => {
  it('takes what precedes the first slash, printable characters only, at most 128 bytes, else unknown', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.20.0 (linux/amd64) kubernetes/af46c47'), 'kubectl');
    assert.equal(managerFromUserAgent('OpenAPI-Generator/31.0.0/python'), 'OpenAPI-Generator');
    assert.equal(managerFromUserAgent('ctl\u0007x/1'), 'ctlx');
    assert.equal(managerFromUserAgent('é'.repeat(100)), 'é'.repeat(64));
    assert.equal(managerFromUserAgent(null), 'unknown');
    assert.equal(managerFromUserAgent('/1.0'), 'unknown');
  });
});

describe('managedFields on writes', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't' });
  after(() => app.close());
  const send = async (method: string, path: string, body: unknown, contentType = 'application/json') => {
    const res = await app.fetch(
      new Request(`http://x${path}`, {
        method,
        body: JSON.stringify(body),
        headers: { authorization: 'Bearer t', 'content-type': contentType },
      }),
    );
    return (await res.json()) as KubeObject;
  };
  const managers = (obj: KubeObject): string[] =>
    ((obj.metadata.managedFields ?? []) as Array<{ manager: string; operation: string; subresource?: string }>).map(
      (e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`,
    );

  it('records a create by the User-Agent fallback (unknown here), and status writes as their subresource', async () => {
    const created = await send('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    assert.deepEqual(managers(created), ['unknown/Update']);
    const fields = (created.metadata.managedFields as Array<{ fieldsV1: Record<string, Record<string, unknown>> }>)[0]!
      .fieldsV1;
    assert.equal(fields['f:status'], undefined, 'the status the server initialises is nobody’s');
    assert.ok(fields['f:spec']!['f:dnsPolicy'], 'defaults count as the creator’s, as upstream');
    const status = await send('PUT', '/api/v1/namespaces/default/pods/p/status?fieldManager=kubelet', {
      ...created,
      status: { phase: 'Running' },
    });
    assert.deepEqual(managers(status).sort(), ['kubelet/Update/status', 'unknown/Update']);
  });

  it('honours valid managedFields a client writes, ignores invalid ones, and stops tracking after a reset', async () => {
    const created = await send('POST', '/api/v1/namespaces/default/configmaps?fieldManager=a', {
      metadata: { name: 'c' },
      data: { k: '1' },
    });
    const replaced = await send('PUT', '/api/v1/namespaces/default/configmaps/c?fieldManager=a', {
      ...created,
      metadata: {
        ...created.metadata,
        managedFields: [
          {
            manager: 'z',
            operation: 'Update',
            apiVersion: 'v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:k': {} } },
          },
        ],
      },
    });
    assert.deepEqual(managers(replaced), ['z/Update']);
    const invalid = await send('PUT', '/api/v1/namespaces/default/configmaps/c?fieldManager=b', {
      ...replaced,
      metadata: { ...replaced.metadata, managedFields: [{ manager: 'y', operation: 'Patch' }] },
      data: { k: '2' },
    });
    assert.deepEqual(managers(invalid), ['b/Update']);
    const reset = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/c',
      { metadata: { managedFields: [] } },
      'application/merge-patch+json',
    );
    assert.equal(reset.metadata.managedFields, undefined);
    const untracked = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/c?fieldManager=c',
      { data: { k: '3' } },
      'application/merge-patch+json',
    );
    assert.equal(
      untracked.metadata.managedFields,
      undefined,
      'only an apply starts tracking again (skipNonAppliedManager)',
    );
    const applied = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/c?fieldManager=d',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: '3' } },
      'application/apply-patch+yaml',
    );
    assert.deepEqual(managers(applied), ['d/Apply']);
  });
});
