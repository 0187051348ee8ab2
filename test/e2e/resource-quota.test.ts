/**
 * ResourceQuota in the embedded API server (issue 26): enforced on create as upstream's quota admission is (403
 * `Forbidden`, "exceeded quota: <name>, requested: …, used: …, limited: …"), with `status.hard` and `status.used`
 * kept by the server as upstream's quota controller keeps them. Over a real connection, as kubectl and Raven's tests
 * talk to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject, Status } from '../../src/kube/api/index.ts';
import { call, ok } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'quota-test';
const base = `/api/v1/namespaces/${NS}`;

interface Quota extends KubeObject {
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

const service = (name: string, type: 'LoadBalancer' | 'ClusterIP') => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { type, selector: { app: name }, ports: [{ port: 80 }] },
});
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });

describe('ResourceQuota in the embedded API server', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    await ok(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await ok(server, 'POST', `${base}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'tenant' },
      spec: { hard: { 'services.loadbalancers': '1', 'count/configmaps': '2' } },
    });
  });
  after(async () => {
    await server?.stop();
  });

  const used = (want: Record<string, string>) =>
    waitFor(`status.used ${JSON.stringify(want)}`, async () => {
      const quota = await ok<Quota>(server, 'GET', `${base}/resourcequotas/tenant`);
      return JSON.stringify(quota.status?.used) === JSON.stringify(want) ? quota : undefined;
    });

  it('keeps status.hard and status.used', async () => {
    const quota = await used({ 'services.loadbalancers': '0', 'count/configmaps': '0' });
    assert.deepEqual(quota.status?.hard, { 'services.loadbalancers': '1', 'count/configmaps': '2' });
  });

  it('refuses a LoadBalancer Service past services.loadbalancers with 403, as upstream words it', async () => {
    assert.equal((await call(server, 'POST', `${base}/services`, service('lb1', 'LoadBalancer'))).status, 201);
    const refused = await call<Status>(server, 'POST', `${base}/services`, service('lb2', 'LoadBalancer'));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.reason, 'Forbidden');
    assert.equal(
      refused.body.message,
      'services "lb2" is forbidden: exceeded quota: tenant, requested: services.loadbalancers=1, ' +
        'used: services.loadbalancers=1, limited: services.loadbalancers=1',
    );
    // A ClusterIP Service is not a load balancer.
    assert.equal((await call(server, 'POST', `${base}/services`, service('plain', 'ClusterIP'))).status, 201);
    await used({ 'services.loadbalancers': '1', 'count/configmaps': '0' });
    // Deleted, its share is free again.
    await ok(server, 'DELETE', `${base}/services/lb1`);
    await used({ 'services.loadbalancers': '0', 'count/configmaps': '0' });
    assert.equal((await call(server, 'POST', `${base}/services`, service('lb2', 'LoadBalancer'))).status, 201);
  });

  it('refuses an object past count/<resource>, and a dry run too', async () => {
    for (const name of ['c1', 'c2']) await ok(server, 'POST', `${base}/configmaps`, configMap(name));
    for (const path of [`${base}/configmaps`, `${base}/configmaps?dryRun=All`]) {
      const refused = await call<Status>(server, 'POST', path, configMap('c3'));
      assert.equal(refused.status, 403, path);
      assert.equal(
        refused.body.message,
        'configmaps "c3" is forbidden: exceeded quota: tenant, requested: count/configmaps=1, ' +
          'used: count/configmaps=2, limited: count/configmaps=2',
      );
    }
    await used({ 'services.loadbalancers': '1', 'count/configmaps': '2' });
  });

  it('refuses a quota whose hard limit is not a quantity (422)', async () => {
    const bad = await call<Status>(server, 'POST', `${base}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'bad' },
      spec: { hard: { pods: 'many' } },
    });
    assert.equal(bad.status, 422);
  });

  it('kubectl shows it', async () => {
    const out = await server.kubectl(['get', 'quota', 'tenant', '-n', NS]);
    assert.match(out, /count\/configmaps: 2\/2, services\.loadbalancers: 1\/1/);
  });
});
