/**
 * Protobuf over a real HTTPS connection, decoded with this repository's decoder (kubectl-versions.test.ts proves the
 * same wire with kubectl 1.32 and 1.33): create from a protobuf body, objects, lists, discovery and `Status` errors in
 * protobuf, and a protobuf watch stream of length-delimited frames with bookmarks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import { decodeObject, decodeWatchFrames, encodeObject, PROTOBUF } from '@raven/apiserver';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

type Json = Record<string, unknown>;
const accept = `${PROTOBUF},application/json`;

describe('protobuf over HTTPS', { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ bookmarkIntervalMs: 200 });
  });
  after(async () => {
    await server.stop();
  });

  const protoGet = async (path: string): Promise<{ status: number; type: string | null; body: Json }> => {
    const res = await server.request(path, { headers: { accept } });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: decodeObject(new Uint8Array(await res.arrayBuffer())),
    };
  };

  it('creates from a protobuf body and answers objects, lists and discovery in protobuf', async () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'proto' } };
    const created = await server.request('/api/v1/namespaces', {
      method: 'POST',
      body: encodeObject(ns),
      headers: { 'content-type': PROTOBUF, accept },
    });
    assert.equal(created.status, 201);
    const obj = decodeObject(new Uint8Array(await created.arrayBuffer()));
    assert.equal((obj.metadata as { name: string }).name, 'proto');
    assert.deepEqual(obj.status, { phase: 'Active' });
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      },
    };
    const res = await server.request('/apis/apps/v1/namespaces/proto/deployments', {
      method: 'POST',
      body: encodeObject(deployment),
      headers: { 'content-type': PROTOBUF, accept: 'application/json' },
    });
    assert.equal(res.status, 201);
    const stored = (await res.json()) as { spec: Json };
    assert.equal(stored.spec.replicas, 0, 'a pointer zero survives');
    assert.deepEqual(stored.spec.strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });

    const list = await protoGet('/apis/apps/v1/namespaces/proto/deployments');
    assert.equal(list.type, PROTOBUF);
    assert.equal(list.body.kind, 'DeploymentList');
    assert.equal((list.body.items as unknown[]).length, 1);
    const resources = await protoGet('/apis/apps/v1');
    assert.equal(resources.body.kind, 'APIResourceList');
    assert.ok((resources.body.resources as Array<{ name: string }>).some((r) => r.name === 'deployments'));
    const missing = await protoGet('/api/v1/namespaces/proto/configmaps/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual([missing.body.kind, missing.body.reason, missing.body.code], ['Status', 'NotFound', 404]);
    // A Table is JSON only: asked for in protobuf first, it comes as the next clause allows.
    const table = await server.request('/api/v1/namespaces', {
      headers: { accept: `${PROTOBUF};as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io` },
    });
    assert.equal(((await table.json()) as { kind: string }).kind, 'Table');
  });

  it('streams a watch as length-delimited WatchEvent frames, bookmarks included', async () => {
    const abort = new AbortController();
    const res = await server.request('/api/v1/namespaces/proto/configmaps?watch=1&allowWatchBookmarks=true', {
      headers: { accept: `${PROTOBUF};stream=watch` },
      signal: abort.signal,
    });
    assert.equal(res.headers.get('content-type'), `${PROTOBUF};stream=watch`);
    let bytes = new Uint8Array(0);
    const read = (async () => {
      try {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) bytes = Uint8Array.from([...bytes, ...chunk]);
      } catch {
        // The watch is cut by the abort below.
      }
    })();
    const complete = () => {
      // Only whole frames decode; a partial tail waits for the next read.
      let pos = 0;
      while (pos + 4 <= bytes.length && pos + 4 + new DataView(bytes.buffer).getUint32(pos) <= bytes.length)
        pos += 4 + new DataView(bytes.buffer).getUint32(pos);
      return decodeWatchFrames(bytes.subarray(0, pos));
    };
    try {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, data: { a: '1' } };
      const created = await server.request('/api/v1/namespaces/proto/configmaps', {
        method: 'POST',
        body: JSON.stringify(cm),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(created.status, 201);
      const events = await waitFor('ADDED and a BOOKMARK', () => {
        const got = complete();
        return got.some((e) => e.type === 'ADDED') && got.some((e) => e.type === 'BOOKMARK') ? got : undefined;
      });
      const added = events.find((e) => e.type === 'ADDED')!;
      assert.deepEqual([added.object.kind, added.object.data], ['ConfigMap', { a: '1' }]);
      const bookmark = events.find((e) => e.type === 'BOOKMARK')!;
      assert.ok((bookmark.object.metadata as { resourceVersion: string }).resourceVersion);
    } finally {
      abort.abort();
      await read;
    }
  });
});
