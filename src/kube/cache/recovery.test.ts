/**
 * The API server restarted with its state lost (its resourceVersion back near 1), on the same port, token and
 * certificate: the informers must notice, relist from "", report what vanished as deletes, see what is new, and say
 * meanwhile that they are failing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, testConnection, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import type { KubeObject } from '../api/index.ts';
import { KubeClient, resources } from '../client/index.ts';
import { SharedInformerFactory } from './factory.ts';

const cm = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
});
const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe('Informers after the API server lost its state', { timeout: 60_000 }, () => {
  const stop = new AbortController();
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    stop.abort();
    for (const c of cleanups.reverse()) await c();
  });

  it('relist from "", report the lost objects as deletes, see new ones, and are unhealthy meanwhile', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'raven-recovery-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    // A data dir keeps the token and certificate across the restart; the state is removed before it.
    let server: TestServer = await startTestServer({ dataDir });
    cleanups.push(() => server.stop());
    const client = new KubeClient({ connection: testConnection(server), retry: { maxAttempts: 1 } });
    cleanups.push(() => client.close());
    await client.create(resources.namespaces, ns('keep'));
    for (const name of ['a', 'b', 'c']) await client.create(resources.configmaps, cm('keep', name));
    // Writes elsewhere push the resourceVersion well past what the new server will start at.
    await client.create(resources.namespaces, ns('busy'));
    for (let i = 0; i < 30; i++) await client.create(resources.configmaps, cm('busy', `x${i}`));

    const factory = new SharedInformerFactory({ client, backoff: { initialMs: 20, maxMs: 200 } });
    const informer = factory.informerFor(resources.configmaps, { namespace: 'keep' });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    const run = factory.start(stop.signal);
    cleanups.push(() => run);
    assert.ok(await factory.waitForCacheSync(AbortSignal.timeout(10_000)));
    assert.deepEqual(factory.health(), [
      { informer: 'configmaps in keep', failingSince: undefined, failingForMs: 0, lastError: undefined },
    ]);
    const oldRv = Number(informer.lastSyncResourceVersion());
    seen.length = 0;

    const port = server.port;
    await server.stop();
    await rm(join(dataDir, 'cluster.json'));
    const down = await waitFor('the informer to report failing', () => {
      const [health] = factory.health();
      return health?.failingSince !== undefined && health;
    });
    assert.ok(down.lastError, 'names the failure');

    server = await startTestServer({ dataDir, port });
    await client.create(resources.namespaces, ns('keep'));
    await client.create(resources.configmaps, cm('keep', 'new'));
    await waitFor(
      'the cache to equal the new server',
      () => informer.lister().list().length === 1 && informer.lister().get('keep/new'),
      { timeoutMs: 15_000 },
    );
    assert.deepEqual(seen.sort(), ['add new', 'delete a', 'delete b', 'delete c']);
    assert.ok(Number(informer.lastSyncResourceVersion()) < oldRv, 'the resourceVersion of the new server');
    assert.ok(informer.reflector.listCount >= 2, 'relisted');
    assert.equal(factory.health()[0]!.failingSince, undefined, 'healthy again');
    // The watch is live on the new server.
    await client.create(resources.configmaps, cm('keep', 'later'));
    await waitFor('a live event', () => informer.lister().get('keep/later'));
  });
});
