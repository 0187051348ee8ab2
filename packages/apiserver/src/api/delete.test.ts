import assert from 'node:assert/strict';
import { after, describe, it } from '../../../../test/support/node-test.ts';
import { createApiServer, defaultApiServerOptions } from '../app.ts';

describe('DELETE of a namespace', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't' });
  after(() => app.close());
  const del = async (path: string) => {
    const res = await app.fetch(
      new Request(`http://x${path}`, { method: 'DELETE', headers: { authorization: 'Bearer t' } }),
    );
    return {
      status: res.status,
      body: (await res.json()) as { reason?: string; message?: string; status?: { phase?: string } },
    };
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

  it('answers a second DELETE of a terminating namespace with 409, as the real server does', async () => {
    const held = await app.fetch(
      new Request('http://x/api/v1/namespaces', {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'held', finalizers: ['example.com/hold'] } }),
      }),
    );
    assert.equal(held.status, 201);
    assert.equal((await del('/api/v1/namespaces/held')).status, 200);
    const again = await del('/api/v1/namespaces/held');
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'Conflict');
    assert.match(again.body.message ?? '', /ensuring all content is removed/);
  });
});

describe('DELETE of a pod with graceful deletion simulated', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't', podGracefulDeletion: true });
  after(() => app.close());
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.fetch(
      new Request(`http://x${path}`, {
        method,
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return {
      status: res.status,
      body: (await res.json()) as { metadata: { deletionTimestamp?: string; deletionGracePeriodSeconds?: number } },
    };
  };
  const pod = (name: string, nodeName?: string) => ({
    metadata: { name },
    spec: {
      containers: [{ name: 'c', image: 'nginx' }],
      terminationGracePeriodSeconds: 20,
      ...(nodeName ? { nodeName } : {}),
    },
  });

  it('gives a scheduled pod its grace period, then removes it on a grace-0 delete', async () => {
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod('bound', 'node-1'))).status, 201);
    const first = await call('DELETE', '/api/v1/namespaces/default/pods/bound');
    assert.equal(first.status, 200);
    assert.equal(first.body.metadata.deletionGracePeriodSeconds, 20);
    const remaining = Date.parse(first.body.metadata.deletionTimestamp!) - Date.now();
    assert.ok(remaining > 15_000 && remaining <= 20_000, `deletionTimestamp is about 20 s ahead (${remaining} ms)`);
    assert.ok(app.store.get('/pods', 'default', 'bound'), 'still there while it stops');
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/bound')).status, 200);
    assert.ok(app.store.get('/pods', 'default', 'bound'), 'a second plain DELETE does not cut the grace period');
    await call('DELETE', '/api/v1/namespaces/default/pods/bound', { gracePeriodSeconds: 0 });
    assert.equal(app.store.get('/pods', 'default', 'bound'), undefined);
  });

  it('removes a pod that was never scheduled at once', async () => {
    await call('POST', '/api/v1/namespaces/default/pods', pod('pending'));
    await call('DELETE', '/api/v1/namespaces/default/pods/pending');
    assert.equal(app.store.get('/pods', 'default', 'pending'), undefined);
  });
});
