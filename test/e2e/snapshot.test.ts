/**
 * `--data-dir` over real restarts: the cluster, its resourceVersion counter, its allocations, its token and its
 * certificate survive a stop and a start; watch history does not (old resourceVersions get 410).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import { Agent } from 'undici';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { assertFailure, call, configMap, createNamespace, get, ok, requester, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openWatch } from '../support/watch.ts';

describe('snapshots in --data-dir', { timeout: 60_000 }, () => {
  let dataDir: string;
  const servers: TestServer[] = [];
  const agents: Agent[] = [];
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'raven-data-'));
  });
  after(async () => {
    for (const s of servers) await s.stop();
    for (const a of agents) await a.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a restarted server has the same objects, resourceVersions, uids, allocations, token and certificate', async () => {
    const first = await startTestServer({ dataDir, serviceCidr: '10.210.0.0/24' });
    servers.push(first);
    const kubeconfig = await readFile(first.kubeconfig, 'utf8');
    const ns = await createNamespace(first, 'kept');
    const cm = await ok(first, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('c', { data: { v: '1' } }));
    const svc = await ok(first, 'POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    });
    const ip = (svc.spec as { clusterIP: string }).clusterIP;
    const oldRv = rv(cm);
    const lastRv = rv(svc);
    await first.stop();
    servers.splice(servers.indexOf(first), 1);

    const second = await startTestServer({ dataDir, serviceCidr: '10.210.0.0/24' });
    servers.push(second);
    assert.equal(second.token, first.token);
    // The old kubeconfig's credentials (token and CA) work against the new server.
    assert.ok(kubeconfig.includes(first.token));
    const agent = new Agent({ connect: { ca: first.caPem } });
    agents.push(agent);
    const oldClient = requester(second.url, first.token, agent);

    const cmAgain = (await get(oldClient, `/api/v1/namespaces/${ns}/configmaps/c`)).body;
    assert.equal(cmAgain.metadata.uid, cm.metadata.uid);
    assert.equal(cmAgain.metadata.resourceVersion, cm.metadata.resourceVersion);
    assert.deepEqual(cmAgain.data, { v: '1' });
    const svcAgain = (await get(oldClient, `/api/v1/namespaces/${ns}/services/s`)).body;
    assert.equal(svcAgain.metadata.uid, svc.metadata.uid);
    assert.equal((svcAgain.spec as { clusterIP: string }).clusterIP, ip);
    const nsAgain = (await get(oldClient, `/api/v1/namespaces/${ns}`)).body;
    assert.equal((nsAgain.status as { phase: string }).phase, 'Active');

    // New writes continue the counter.
    const next = await ok(oldClient, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('after-restart'));
    assert.ok(rv(next) > lastRv, `${rv(next)} > ${lastRv}`);
    // The history did not survive: a watch from an old resourceVersion gets 410.
    const watch = await openWatch(oldClient, `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${oldRv}`);
    const events = await watch.rest();
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'ERROR');
    assert.equal(events[0]!.object.code, 410);
    assert.equal(events[0]!.object.reason, 'Expired');
    // A client that relists after the 410 can watch from the list's resourceVersion (no relist loop).
    const list = (
      await get<{ metadata: { resourceVersion: string } }>(oldClient, `/api/v1/namespaces/${ns}/configmaps`)
    ).body;
    const resumed = await openWatch(
      oldClient,
      `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
    );
    try {
      const later = await ok(oldClient, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('later'));
      const [added] = await resumed.take(1);
      assert.equal(added!.type, 'ADDED');
      assert.equal(added!.object.metadata.resourceVersion, later.metadata.resourceVersion);
    } finally {
      resumed.close();
    }
    // The cluster IP is still allocated.
    const clash = await call<KubeObject>(oldClient, 'POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'clash' },
      spec: { clusterIP: ip, ports: [{ port: 80 }] },
    });
    assertFailure(clash, 422, 'Invalid');
    // The bootstrap objects were not duplicated or recreated.
    assert.equal((await get(oldClient, '/api/v1/namespaces/default/services/kubernetes')).status, 200);
  });
});
