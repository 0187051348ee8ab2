import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { Manager } from '../../../src/controller/index.ts';
import { SharedInformerFactory } from '../../../src/kube/cache/index.ts';
import { KubeClient, isNotFound, resources } from '../../../src/kube/client/index.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { ClusterSimulator } from './index.ts';
import type { Pod } from '../../../src/kube/api/index.ts';
import { testConnection } from '../../../test/support/server.ts';

describe('ClusterSimulator run by a Manager (requireVif off, pods deleted at once)', { timeout: 60_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const stop = new AbortController();
  let managed: Promise<void>;

  before(async () => {
    server = await startTestServer();
    const connection = testConnection(server);
    client = new KubeClient({ connection, qps: 5000, burst: 5000 });
    const informers = new SharedInformerFactory({ client });
    const sim = new ClusterSimulator({ client, connection, informers, nodes: ['solo'], requireVif: false });
    const manager = new Manager({ informers });
    for (const runnable of sim.controllers()) manager.add(runnable, { leaderOnly: false });
    managed = manager.start(stop.signal);
  });
  after(async () => {
    stop.abort();
    await managed;
    await client.close();
    await server.stop();
  });

  it('schedules and runs a pod without waiting for a VIF, and the server removes it at once on delete', async () => {
    await client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'plain', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'busybox' }] },
    });
    const pod = await waitFor('Running', async () => {
      const p = await client.get<Pod>(resources.pods, 'plain', 'default');
      return p.status?.phase === 'Running' && p;
    });
    assert.equal(pod.spec?.nodeName, 'solo');
    assert.equal(pod.status?.hostIP, '127.0.1.1');
    assert.equal(pod.status?.podIP, undefined, 'no CNI, no IP');
    await client.delete(resources.pods, 'plain', 'default');
    await assert.rejects(client.get(resources.pods, 'plain', 'default'), (err: unknown) => isNotFound(err));
  });
});
