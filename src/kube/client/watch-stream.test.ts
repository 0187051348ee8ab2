import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { isStatus, type KubeObject, type WatchEvent } from '../api/index.ts';
import { isWatchInterrupted } from './errors.ts';
import { resources } from './paths.ts';
import { KubeClient } from './rest.ts';

const NS = 'watch-test';
const cm = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data,
});

/** The next `n` events of a watch. */
async function next(it: AsyncIterator<WatchEvent>, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

const nameOf = (e: WatchEvent) => (isStatus(e.object) ? undefined : e.object.metadata.name);

describe('KubeClient.watch against the embedded API server', { timeout: 60_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const signal = AbortSignal.timeout(55_000);

  before(async () => {
    server = await startTestServer({ bookmarkIntervalMs: 200 });
    client = new KubeClient({
      connection: {
        server: server.url,
        ca: server.caPem!,
        source: 'test',
        credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
      },
    });
    await client.create(
      resources.namespaces,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { signal },
    );
  });
  const listRv = async () =>
    (await client.list(resources.configmaps, { namespace: NS, signal })).metadata.resourceVersion;
  /** Creates `name` and reads the watch up to its ADDED event: the watch is then surely connected. */
  async function connected(it: AsyncIterator<WatchEvent>, name: string): Promise<void> {
    await client.create(resources.configmaps, cm(name), { signal });
    for (;;) {
      const [e] = await next(it, 1);
      assert.ok(e, 'the watch ended early');
      if (e.type === 'ADDED' && nameOf(e) === name) return;
    }
  }

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('yields events in order, from a resourceVersion', async () => {
    await client.create(resources.configmaps, cm('before'), { signal });
    const rv = (await client.list(resources.configmaps, { namespace: NS, signal })).metadata.resourceVersion;
    const ac = new AbortController();
    const it = client.watch(resources.configmaps, {
      namespace: NS,
      resourceVersion: rv,
      signal: AbortSignal.any([ac.signal, signal]),
    });
    const first = client.create(resources.configmaps, cm('w1'), { signal });
    const events = next(it, 4);
    const w1 = await first;
    await client.create(resources.configmaps, cm('w2'), { signal });
    await client.update(resources.configmaps, { ...w1, data: { v: '2' } }, { signal });
    await client.delete(resources.configmaps, 'w2', NS, { signal });
    const got = await events;
    assert.deepEqual(
      got.map((e) => `${e.type} ${nameOf(e)}`),
      ['ADDED w1', 'ADDED w2', 'MODIFIED w1', 'DELETED w2'],
    );
    ac.abort();
    assert.deepEqual(await it.next(), { done: true, value: undefined });
  });

  it('sends bookmarks when asked', async () => {
    const rv = (await client.list(resources.configmaps, { namespace: NS, signal })).metadata.resourceVersion;
    const ac = new AbortController();
    const it = client.watch(resources.configmaps, {
      namespace: NS,
      resourceVersion: rv,
      allowWatchBookmarks: true,
      signal: AbortSignal.any([ac.signal, signal]),
    });
    const [bookmark] = await next(it, 1);
    assert.equal(bookmark?.type, 'BOOKMARK');
    assert.ok((bookmark?.object as KubeObject).metadata.resourceVersion);
    ac.abort();
    await it.return(undefined);
  });

  it('aborting the signal ends the iterator cleanly, even while waiting', async () => {
    const ac = new AbortController();
    const it = client.watch(resources.configmaps, {
      namespace: NS,
      resourceVersion: await listRv(),
      signal: AbortSignal.any([ac.signal, signal]),
    });
    await connected(it, 'abort-marker');
    const pending = it.next();
    ac.abort();
    assert.deepEqual(await pending, { done: true, value: undefined });
  });

  it('ends when timeoutSeconds runs out', async () => {
    const rv = (await client.list(resources.configmaps, { namespace: NS, signal })).metadata.resourceVersion;
    const events = await next(
      client.watch(resources.configmaps, { namespace: NS, resourceVersion: rv, timeoutSeconds: 1, signal }),
      100,
    );
    assert.deepEqual(events, []);
  });

  it('a cut connection throws WATCH_INTERRUPTED', async () => {
    const it = client.watch(resources.configmaps, { namespace: NS, resourceVersion: await listRv(), signal });
    await connected(it, 'cut-marker');
    const res = await server.request('/_raven/faults/drop-watches', {
      method: 'POST',
      body: JSON.stringify({ mode: 'abort' }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 200);
    await assert.rejects(next(it, 1), (e) => {
      assert.equal((e as { code?: string }).code, 'WATCH_INTERRUPTED');
      return isWatchInterrupted(e);
    });
  });

  it('a watch from a compacted resourceVersion yields an ERROR event with 410', async () => {
    const old = (await client.create(resources.configmaps, cm('old'), { signal })).metadata.resourceVersion;
    await client.create(resources.configmaps, cm('newer'), { signal });
    assert.equal((await server.request('/_raven/faults/compact', { method: 'POST' })).status, 200);
    const events = await next(client.watch(resources.configmaps, { namespace: NS, resourceVersion: old, signal }), 1);
    assert.equal(events[0]?.type, 'ERROR');
    const status = events[0].object;
    assert.ok(isStatus(status));
    assert.equal(status.code, 410);
    assert.match(status.reason ?? '', /Expired|Gone/);
  });
});
