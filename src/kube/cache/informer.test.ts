import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import type { KubeObject } from '../api/index.ts';
import { KubeClient, resources, type ClusterConnection } from '../client/index.ts';
import { SharedInformer, type SharedInformerOptions } from './informer.ts';

const cm = (ns: string, name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});

describe('SharedInformer against the embedded API server', { timeout: 90_000 }, () => {
  let server: TestServer;
  let admin: KubeClient;
  let client: KubeClient;
  const signal = AbortSignal.timeout(85_000);
  const stop = new AbortController();
  const runs: Promise<void>[] = [];

  before(async () => {
    server = await startTestServer({ bookmarkIntervalMs: 200 });
    const connection: ClusterConnection = {
      server: server.url,
      ca: server.caPem!,
      credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
      source: 'test',
    };
    admin = new KubeClient({ connection });
    // No client-side retries: the reflector itself must ride out 5xx.
    client = new KubeClient({ connection, retry: { maxAttempts: 1 } });
  });

  after(async () => {
    stop.abort();
    await Promise.all(runs);
    await client?.close();
    await admin?.close();
    await server?.stop();
  });

  async function namespace(name: string): Promise<string> {
    await admin.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { signal });
    return name;
  }

  function start(ns: string, extra: Partial<SharedInformerOptions<KubeObject>> = {}): SharedInformer<KubeObject> {
    const informer = new SharedInformer<KubeObject>({
      client,
      resource: resources.configmaps,
      namespace: ns,
      backoff: { initialMs: 20, maxMs: 200 },
      ...extra,
    });
    runs.push(informer.run(AbortSignal.any([stop.signal, signal])));
    return informer;
  }

  const fault = async (path: string, body: unknown) => {
    const res = await server.request(`/_raven/faults/${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    assert.ok(res.ok, `fault ${path}: ${res.status} ${await res.text()}`);
  };
  const clearRules = async () => {
    await (await server.request('/_raven/faults/rules', { method: 'DELETE' })).text();
  };

  /**
   * The server's state of a namespace's ConfigMaps as key → resourceVersion (read across namespaces: fault rules target
   * the namespaced path).
   */
  async function serverState(ns: string): Promise<Record<string, string>> {
    const list = await admin.listAll(resources.configmaps, { fieldSelector: `metadata.namespace=${ns}`, signal });
    return Object.fromEntries(list.items.map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion!]));
  }
  const cacheState = (inf: SharedInformer<KubeObject>) =>
    Object.fromEntries(
      inf
        .lister()
        .list()
        .map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion!]),
    );
  /** Waits until the cache equals the server's state. */
  async function converged(inf: SharedInformer<KubeObject>, ns: string): Promise<void> {
    let want: Record<string, string> = {};
    try {
      await waitFor(
        'cache == server',
        async () => {
          want = await serverState(ns);
          return (
            JSON.stringify(cacheState(inf), Object.keys(want).sort()) ===
              JSON.stringify(want, Object.keys(want).sort()) &&
            Object.keys(cacheState(inf)).length === Object.keys(want).length
          );
        },
        { timeoutMs: 15_000 },
      );
    } catch (err) {
      assert.deepEqual(cacheState(inf), want, String(err));
    }
  }

  it('lists, syncs, then delivers live events in order to every handler', async () => {
    const ns = await namespace('inf-live');
    await admin.create(resources.configmaps, cm(ns, 'a'), { signal });
    await admin.create(resources.configmaps, cm(ns, 'b'), { signal });
    const informer = start(ns);
    const seen: string[] = [];
    const second: string[] = [];
    informer.addEventHandler({
      onAdd: (o, initial) => seen.push(`add:${o.metadata.name}:${initial}`),
      onUpdate: (old, o) =>
        seen.push(`update:${o.metadata.name}:${old.data ? JSON.stringify(old.data) : ''}->${JSON.stringify(o.data)}`),
      onDelete: (o) => seen.push(`delete:${o.metadata.name}`),
    });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('a broken handler');
      },
    });
    informer.addEventHandler({
      onAdd: (o) => second.push(o.metadata.name!),
      onDelete: (o) => second.push(`-${o.metadata.name}`),
    });
    assert.equal(await informer.waitForSync(AbortSignal.timeout(10_000)), true);
    assert.deepEqual(seen.sort(), ['add:a:true', 'add:b:true']);
    seen.length = 0;
    const c = await admin.create(resources.configmaps, cm(ns, 'c'), { signal });
    await admin.update(resources.configmaps, { ...c, data: { v: '2' } }, { signal });
    await admin.delete(resources.configmaps, 'a', ns, { signal });
    await waitFor('3 live events', () => seen.length >= 3);
    assert.deepEqual(seen, ['add:c:false', 'update:c:{}->{"v":"2"}', 'delete:a']);
    assert.deepEqual(second.slice(2), ['c', '-a']);
    assert.ok(Object.isFrozen(informer.lister().get(`${ns}/c`)));
    // A handler added after sync first gets the cached objects.
    const late: string[] = [];
    const off = informer.addEventHandler({ onAdd: (o, initial) => late.push(`${o.metadata.name}:${initial}`) });
    assert.deepEqual(late.sort(), ['b:true', 'c:true']);
    off();
    await admin.create(resources.configmaps, cm(ns, 'd'), { signal });
    await converged(informer, ns);
    assert.equal(late.length, 2, 'an unsubscribed handler hears nothing');
    assert.equal(informer.reflector.listCount, 1);
  });

  for (const mode of ['abort', 'clean'] as const) {
    it(`resumes a dropped watch (${mode}) from the last RV without relisting`, async () => {
      const ns = await namespace(`inf-drop-${mode}`);
      const informer = start(ns);
      await informer.waitForSync(AbortSignal.timeout(10_000));
      await admin.create(resources.configmaps, cm(ns, 'before'), { signal });
      await waitFor('watch live', () => informer.lister().get(`${ns}/before`));
      const watches = informer.reflector.watchCount;
      await fault('drop-watches', { mode });
      await admin.create(resources.configmaps, cm(ns, 'after'), { signal });
      await admin.delete(resources.configmaps, 'before', ns, { signal });
      await converged(informer, ns);
      assert.ok(informer.reflector.watchCount > watches, 'a new watch was opened');
      assert.equal(informer.reflector.listCount, 1, 'no relist');
    });
  }

  it('relists after a 410 and delivers deletes for objects removed in the gap', async () => {
    const ns = await namespace('inf-gone');
    for (const n of ['a', 'b', 'c']) await admin.create(resources.configmaps, cm(ns, n), { signal });
    const informer = start(ns);
    const deleted: string[] = [];
    informer.addEventHandler({ onDelete: (o) => deleted.push(`${o.metadata.name}@${o.metadata.resourceVersion}`) });
    await informer.waitForSync(AbortSignal.timeout(10_000));
    const rvOfB = informer.lister().get(`${ns}/b`)!.metadata.resourceVersion;
    // Keep the informer off the server while objects change and history is forgotten.
    await fault('rules', { path: `/api/v1/namespaces/${ns}/configmaps`, method: 'GET', count: 100_000, status: 503 });
    await fault('drop-watches', { mode: 'abort' });
    await admin.delete(resources.configmaps, 'b', ns, { signal });
    await admin.create(resources.configmaps, cm(ns, 'd'), { signal });
    await fault('compact', {});
    await clearRules();
    await converged(informer, ns);
    assert.deepEqual(deleted, [`b@${rvOfB}`], 'the delete carries the last known object');
    assert.ok(informer.reflector.listCount >= 2, 'relisted');
  });

  it('rides out an unreachable API server (503 on LIST and WATCH) with backoff, then recovers fully', async () => {
    const ns = await namespace('inf-503');
    await admin.create(resources.configmaps, cm(ns, 'a'), { signal });
    await fault('rules', { path: `/api/v1/namespaces/${ns}/configmaps`, method: 'GET', count: 5, status: 503 });
    const informer = start(ns);
    await waitFor('synced after 5 failed lists', () => informer.hasSynced(), { timeoutMs: 15_000 });
    assert.equal(informer.reflector.listCount, 6);
    await fault('rules', { path: `/api/v1/namespaces/${ns}/configmaps`, method: 'GET', count: 5, status: 503 });
    await fault('drop-watches', { mode: 'abort' });
    await admin.create(resources.configmaps, cm(ns, 'b'), { signal });
    await converged(informer, ns);
    assert.equal(informer.reflector.listCount, 6, 'failed watches re-watch, they do not relist');
    const rules = (await (await server.request('/_raven/faults/rules')).json()) as { rules: unknown[] };
    assert.deepEqual(rules.rules, []);
  });

  it('moves its resourceVersion on bookmarks alone', async () => {
    const ns = await namespace('inf-bookmark');
    const informer = start(ns);
    await informer.waitForSync(AbortSignal.timeout(10_000));
    const other = await namespace('inf-bookmark-other');
    const elsewhere = await admin.create(resources.configmaps, cm(other, 'x'), { signal });
    const target = Number(elsewhere.metadata.resourceVersion);
    await waitFor('a bookmark past the other write', () => Number(informer.lastSyncResourceVersion()) >= target, {
      timeoutMs: 15_000,
    });
    assert.equal(informer.lister().list().length, 0);
    assert.equal(informer.reflector.listCount, 1);
  });

  it('restarts a watch that stays silent past idleTimeoutMs, without relisting', async () => {
    // Its own server with the default 60 s bookmark interval, so an idle watch really is silent.
    const quiet = await startTestServer();
    const connection: ClusterConnection = {
      server: quiet.url,
      ca: quiet.caPem!,
      credentials: () => Promise.resolve({ kind: 'bearer', token: quiet.token }),
      source: 'test',
    };
    const qc = new KubeClient({ connection, retry: { maxAttempts: 1 } });
    const ac = new AbortController();
    const informer = new SharedInformer<KubeObject>({
      client: qc,
      resource: resources.configmaps,
      namespace: 'default',
      backoff: { initialMs: 20, maxMs: 200 },
      idleTimeoutMs: 300,
    });
    const run = informer.run(AbortSignal.any([ac.signal, signal]));
    try {
      await informer.waitForSync(AbortSignal.timeout(10_000));
      await waitFor('several watches', () => informer.reflector.watchCount >= 3, { timeoutMs: 15_000 });
      await qc.create(resources.configmaps, cm('default', 'x'), { signal });
      await waitFor('the object', () => informer.lister().get('default/x'));
      assert.equal(informer.reflector.listCount, 1);
    } finally {
      ac.abort();
      await run;
      await qc.close();
      await quiet.stop();
    }
  });
});
