import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import type { KubeObject } from '../api/index.ts';
import { isAlreadyExists, isConflict, isGone, isInvalid, isNotFound, KubeStatusError } from './errors.ts';
import { resources } from './paths.ts';
import { KubeClient } from './rest.ts';

const NS = 'rest-test';
const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS, ...(labels ? { labels } : {}) },
  data,
});

describe('KubeClient against the embedded API server', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const signal = AbortSignal.timeout(110_000);

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({
      connection: {
        server: server.url,
        ca: server.caPem!,
        source: 'test',
        credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
      },
      qps: 5000,
      burst: 5000,
    });
    await client.create(
      resources.namespaces,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { signal },
    );
  });
  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('create, get, update, delete round trip', async () => {
    const created = await client.create(resources.configmaps, cm('crud', { a: '1' }), { signal });
    assert.ok(created.metadata.uid);
    assert.ok(created.metadata.resourceVersion);
    const got = await client.get(resources.configmaps, 'crud', NS, { signal });
    assert.deepEqual(got.data, { a: '1' });
    assert.equal(got.metadata.uid, created.metadata.uid);

    const updated = await client.update(resources.configmaps, { ...got, data: { a: '2' } }, { signal });
    assert.notEqual(updated.metadata.resourceVersion, got.metadata.resourceVersion);
    assert.deepEqual((await client.get(resources.configmaps, 'crud', NS, { signal })).data, { a: '2' });

    // A stale resourceVersion is a Conflict, and nothing changes.
    await assert.rejects(
      client.update(resources.configmaps, { ...got, data: { a: '3' } }, { signal }),
      (e) => isConflict(e) && !isAlreadyExists(e),
    );
    assert.deepEqual((await client.get(resources.configmaps, 'crud', NS, { signal })).data, { a: '2' });

    // A precondition on another uid refuses the delete.
    await assert.rejects(
      client.delete(resources.configmaps, 'crud', NS, { preconditions: { uid: 'not-the-uid' }, signal }),
      isConflict,
    );
    await client.delete(resources.configmaps, 'crud', NS, {
      propagationPolicy: 'Background',
      gracePeriodSeconds: 0,
      signal,
    });
    await assert.rejects(client.get(resources.configmaps, 'crud', NS, { signal }), isNotFound);
  });

  it('error guards: 404, 409 AlreadyExists, 422', async () => {
    await assert.rejects(client.get(resources.configmaps, 'absent', NS, { signal }), (e) => {
      assert.ok(e instanceof KubeStatusError);
      assert.equal(e.status.code, 404);
      assert.equal(e.status.reason, 'NotFound');
      assert.equal(e.method, 'GET');
      assert.equal(e.path, `/api/v1/namespaces/${NS}/configmaps/absent`);
      return isNotFound(e) && !isConflict(e);
    });
    await client.create(resources.configmaps, cm('twice'), { signal });
    await assert.rejects(
      client.create(resources.configmaps, cm('twice'), { signal }),
      (e) => isAlreadyExists(e) && !isConflict(e),
    );
    await assert.rejects(client.create(resources.configmaps, cm('Not_A_Name'), { signal }), (e) => {
      assert.ok(e instanceof KubeStatusError && e.status.code === 422);
      return isInvalid(e);
    });
  });

  it('updateStatus writes only the status subresource', async () => {
    const svc = await client.create(
      resources.services,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'lb', namespace: NS },
        spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
      },
      { signal },
    );
    const ingress = [{ ip: '203.0.113.7' }];
    const written = await client.updateStatus(
      resources.services,
      { ...svc, status: { loadBalancer: { ingress } } },
      { signal },
    );
    assert.deepEqual((written.status as { loadBalancer: unknown }).loadBalancer, { ingress });
    const got = await client.get(resources.services, 'lb', NS, { signal });
    assert.deepEqual((got.status as { loadBalancer: unknown }).loadBalancer, { ingress });
  });

  it('patch in each type', async () => {
    await client.create(resources.configmaps, cm('patched', { a: '1' }), { signal });
    await client.patch(
      resources.configmaps,
      'patched',
      NS,
      { metadata: { labels: { merged: 'yes' } }, data: { b: '2' } },
      'merge',
      { signal },
    );
    await client.patch(
      resources.configmaps,
      'patched',
      NS,
      [
        { op: 'replace', path: '/data/a', value: 'one' },
        { op: 'add', path: '/data/c', value: '3' },
      ],
      'json',
      { signal },
    );
    await client.patch(resources.configmaps, 'patched', NS, { data: { d: '4' } }, 'strategic', { signal });
    const applied = await client.patch(
      resources.configmaps,
      'patched',
      NS,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched', namespace: NS }, data: { e: '5' } },
      'apply',
      { fieldManager: 'raven-test', force: true, signal },
    );
    assert.ok(
      (applied.metadata.managedFields as { manager: string }[] | undefined)?.some((m) => m.manager === 'raven-test'),
    );
    const got = await client.get(resources.configmaps, 'patched', NS, { signal });
    assert.deepEqual(got.data, { a: 'one', b: '2', c: '3', d: '4', e: '5' });
    assert.equal(got.metadata.labels?.merged, 'yes');
    // A merge patch carrying a stale resourceVersion is a Conflict.
    await assert.rejects(
      client.patch(
        resources.configmaps,
        'patched',
        NS,
        { metadata: { resourceVersion: '1' }, data: { z: '0' } },
        'merge',
        { signal },
      ),
      isConflict,
    );
  });

  it('listAll follows continue: 1,200 objects in pages of 500, each once', async () => {
    const names = Array.from({ length: 1200 }, (_, i) => `page-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((n) => client.create(resources.configmaps, cm(n, {}, { set: 'paged' }), { signal })),
      );
    }
    const pages = [];
    for await (const page of client.listPages(resources.configmaps, {
      namespace: NS,
      labelSelector: 'set=paged',
      limit: 500,
      signal,
    }))
      pages.push(page.items.length);
    assert.deepEqual(pages, [500, 500, 200]);

    const all = await client.listAll(resources.configmaps, {
      namespace: NS,
      labelSelector: 'set=paged',
      limit: 500,
      signal,
    });
    const seen = all.items.map((o) => o.metadata.name!);
    assert.equal(seen.length, 1200);
    assert.equal(new Set(seen).size, 1200);
    assert.deepEqual([...seen].sort(), names);
    assert.ok(all.metadata.resourceVersion);
    assert.equal(all.metadata.continue, undefined);

    const page = await client.list(resources.configmaps, {
      namespace: NS,
      labelSelector: 'set=paged',
      fieldSelector: 'metadata.name=page-0007',
      signal,
    });
    assert.deepEqual(
      page.items.map((o) => o.metadata.name),
      ['page-0007'],
    );
  });

  it('a list at an expired continue token is Gone', async () => {
    const first = await client.list(resources.configmaps, {
      namespace: NS,
      labelSelector: 'set=paged',
      limit: 10,
      signal,
    });
    assert.ok(first.metadata.continue);
    await client.create(resources.configmaps, cm('after-snapshot'), { signal });
    const res = await server.request('/_raven/faults/compact', { method: 'POST' });
    assert.equal(res.status, 200);
    await assert.rejects(
      client.list(resources.configmaps, { namespace: NS, limit: 10, continue: first.metadata.continue, signal }),
      isGone,
    );
  });
});
