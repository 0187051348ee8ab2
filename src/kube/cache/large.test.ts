import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import type { KubeObject } from '../api/index.ts';
import {
  KubeClient,
  resources,
  type ClusterConnection,
  type ListOptions,
  type ResourceRef,
  type WatchOptions,
} from '../client/index.ts';
import { SharedInformerFactory } from './factory.ts';
import type { ListerWatcher } from './reflector.ts';
import { indexByNamespace } from './store.ts';

const NS = 'big';
const COUNT = 10_000;

describe('SharedInformerFactory with 10,000 objects', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const signal = AbortSignal.timeout(115_000);
  const stop = new AbortController();
  let started: Promise<void> | undefined;

  before(async () => {
    server = await startTestServer();
    const connection: ClusterConnection = {
      server: server.url,
      ca: server.caPem!,
      credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
      source: 'test',
    };
    client = new KubeClient({ connection, qps: 10_000, burst: 10_000 });
    await client.create(
      resources.namespaces,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { signal },
    );
    // In-process creates: no sockets, 10,000 objects in a few seconds.
    const post = (i: number) =>
      server.app.fetch(
        new Request(`https://in-process/api/v1/namespaces/${NS}/configmaps`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `cm-${i}`, namespace: NS, labels: { shard: String(i % 10) } },
            data: { i: String(i) },
          }),
        }),
      );
    for (let i = 0; i < COUNT; i += 500) {
      const batch = await Promise.all(Array.from({ length: 500 }, (_, j) => post(i + j)));
      for (const res of batch) assert.equal(res.status, 201, await res.text());
    }
  });

  after(async () => {
    stop.abort();
    await started;
    await client?.close();
    await server?.stop();
  });

  it('lists page by page (limit 500), syncs, shares one informer per resource and scope, and matches the server', async () => {
    let pages = 0;
    const counting: ListerWatcher = {
      async *listPages<T extends KubeObject>(ref: ResourceRef<T>, options?: ListOptions) {
        for await (const page of client.listPages(ref, options)) {
          pages++;
          yield page;
        }
      },
      watch<T extends KubeObject>(ref: ResourceRef<T>, options?: WatchOptions) {
        return client.watch(ref, options);
      },
    };
    const factory = new SharedInformerFactory({ client: counting, pageSize: 500 });
    const informer = factory.informerFor(resources.configmaps, { namespace: NS });
    assert.equal(
      factory.informerFor(resources.configmaps, { namespace: NS }),
      informer,
      'one informer per resource and scope',
    );
    assert.notEqual(factory.informerFor(resources.configmaps, { namespace: NS, labelSelector: 'shard=3' }), informer);
    informer.addIndexers({ byNamespace: indexByNamespace, byShard: (o) => [o.metadata.labels?.shard ?? ''] });
    let adds = 0;
    informer.addEventHandler({ onAdd: () => adds++ });
    started = factory.start(AbortSignal.any([stop.signal, signal]));
    assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(60_000)), true);
    assert.equal(adds, COUNT);
    assert.equal(pages, COUNT / 500 + COUNT / 10 / 500, `paged: ${pages} pages for both informers`);
    assert.equal(informer.lister().byIndex('byShard', '3').length, COUNT / 10);
    assert.equal(informer.lister().byIndex('byNamespace', NS).length, COUNT);
    const shard3 = factory.informerFor(resources.configmaps, { namespace: NS, labelSelector: 'shard=3' });
    assert.equal(shard3.lister().list().length, COUNT / 10);

    const list = await client.listAll(resources.configmaps, { namespace: NS, limit: 500, signal });
    const want = new Map(list.items.map((o) => [`${NS}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const got = new Map(
      informer
        .lister()
        .list()
        .map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]),
    );
    assert.deepEqual(got, want);
  });
});
