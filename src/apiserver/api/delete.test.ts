import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createApiServer, defaultApiServerOptions } from '../app.ts';

describe('DELETE of a namespace', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't' });
  after(() => app.close());
  const del = async (path: string) => {
    const res = await app.fetch(new Request(`http://x${path}`, { method: 'DELETE', headers: { authorization: 'Bearer t' } }));
    return { status: res.status, body: (await res.json()) as { reason?: string; message?: string; status?: { phase?: string } } };
  };

  it('refuses default, kube-system and kube-public with 403, as NamespaceLifecycle does', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const reply = await del(`/api/v1/namespaces/${name}`);
      assert.equal(reply.status, 403);
      assert.equal(reply.body.reason, 'Forbidden');
      assert.equal(reply.body.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      assert.equal(app.store.get('/namespaces', '', name)?.metadata.deletionTimestamp, undefined);
    }
  });

  it('terminates any other namespace, kube-node-lease included', async () => {
    const reply = await del('/api/v1/namespaces/kube-node-lease');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.status?.phase, 'Terminating');
  });
});
