/**
 * Object lifecycles over real HTTPS connections (docs/kube-api.md): finalizers and deletionTimestamp, namespace
 * termination, Service address allocation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { assertFailure, call, configMap, createNamespace, get, listItems, ok, pod, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { openWatch } from '../support/watch.ts';

const cmPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const svcPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/services${name ? `/${name}` : ''}`;
const merge = 'application/merge-patch+json';

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: Array<{ name?: string; port: number; targetPort?: number | string; nodePort?: number }>;
}
const specOf = (svc: KubeObject) => svc.spec as ServiceSpec;
const service = (name: string, spec: ServiceSpec = {}): KubeObject => ({
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});

describe('object lifecycles over HTTP', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ serviceCidr: '10.200.0.0/24', nodePortRange: '31000-31099' });
  });
  after(async () => {
    await server.stop();
  });

  it('finalizers: DELETE marks, a new finalizer is refused, removing the last one deletes', async () => {
    const ns = await createNamespace(server, 'finalizers');
    const created = await ok(server, 'POST', cmPath(ns), configMap('held', { finalizers: ['example.com/hold'] }));
    const watch = await openWatch(
      server,
      `${cmPath(ns)}?watch=true&resourceVersion=${created.metadata.resourceVersion}`,
    );
    try {
      const deleting = await ok(server, 'DELETE', cmPath(ns, 'held'));
      assert.ok(deleting.metadata.deletionTimestamp, 'DELETE returns the object marked for deletion');
      const marked = (await get(server, cmPath(ns, 'held'))).body;
      assert.ok(Date.parse(marked.metadata.deletionTimestamp ?? '') > 0);
      assert.equal(marked.metadata.deletionGracePeriodSeconds, 0);
      assert.deepEqual(marked.metadata.finalizers, ['example.com/hold']);
      const [modified] = await watch.take(1);
      assert.equal(modified!.type, 'MODIFIED');
      assert.equal(modified!.object.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
      assert.equal(modified!.object.metadata.resourceVersion, marked.metadata.resourceVersion);

      // A second DELETE changes nothing.
      await ok(server, 'DELETE', cmPath(ns, 'held'));
      const refused = await call(
        server,
        'PATCH',
        cmPath(ns, 'held'),
        { metadata: { finalizers: ['example.com/hold', 'example.com/other'] } },
        merge,
      );
      const status = assertFailure(refused, 422, 'Invalid');
      assert.ok(status.details?.causes?.some((c) => c.field === 'metadata.finalizers'));
      const still = (await get(server, cmPath(ns, 'held'))).body;
      assert.deepEqual(still.metadata.finalizers, ['example.com/hold']);
      assert.equal(still.metadata.resourceVersion, marked.metadata.resourceVersion);
      // Other changes to an object being deleted are still allowed.
      await ok(server, 'PATCH', cmPath(ns, 'held'), { data: { note: 'draining' } }, merge);

      const last = await ok(server, 'PATCH', cmPath(ns, 'held'), { metadata: { finalizers: null } }, merge);
      assert.equal((await get(server, cmPath(ns, 'held'))).status, 404);
      const events = await watch.take(2);
      assert.deepEqual(
        events.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
      assert.deepEqual(events[1]!.object.data, { key: 'value', note: 'draining' });
      assert.equal(events[1]!.object.metadata.resourceVersion, last.metadata.resourceVersion);
      assert.deepEqual(await watch.drain(200), []);
    } finally {
      watch.close();
    }
  });

  it('a pod without finalizers is removed at once: DELETED event, then 404', async () => {
    const ns = await createNamespace(server, 'pod-delete');
    const created = await ok(server, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('p'));
    const watch = await openWatch(
      server,
      `/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${created.metadata.resourceVersion}`,
    );
    try {
      await ok(server, 'DELETE', `/api/v1/namespaces/${ns}/pods/p`);
      assert.equal((await get(server, `/api/v1/namespaces/${ns}/pods/p`)).status, 404);
      const [deleted] = await watch.take(1);
      assert.equal(deleted!.type, 'DELETED');
      assert.equal(deleted!.object.metadata.uid, created.metadata.uid);
      assert.ok(rv(deleted!.object) > rv(created));
    } finally {
      watch.close();
    }
  });

  it('namespace termination: Terminating, contents deleted, then the namespace is gone and its addresses free', async () => {
    const ns = await createNamespace(server, 'doomed');
    await ok(server, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('p'));
    await ok(server, 'POST', cmPath(ns), configMap('c'));
    const svc = await ok(server, 'POST', svcPath(ns), service('s'));
    const ip = specOf(svc).clusterIP!;
    const nsObj = (await get(server, `/api/v1/namespaces/${ns}`)).body;
    const watch = await openWatch(
      server,
      `/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3D${ns}&resourceVersion=${nsObj.metadata.resourceVersion}`,
    );
    try {
      const deleting = await ok(server, 'DELETE', `/api/v1/namespaces/${ns}`);
      assert.equal((deleting.status as { phase?: string }).phase, 'Terminating');
      assert.ok(deleting.metadata.deletionTimestamp);
      const events = await watch.until((e) => e.type === 'DELETED');
      assert.equal(events[0]!.type, 'MODIFIED');
      assert.equal((events[0]!.object.status as { phase?: string }).phase, 'Terminating');
      assert.equal((await get(server, `/api/v1/namespaces/${ns}`)).status, 404);
      for (const resource of ['pods', 'configmaps', 'services', 'serviceaccounts']) {
        assert.deepEqual(await listItems(server, `/api/v1/namespaces/${ns}/${resource}`), [], resource);
      }
      // The service's cluster IP went back to the pool.
      await ok(server, 'POST', svcPath('default'), service('reuses-doomed-ip', { clusterIP: ip }));
      await ok(server, 'DELETE', svcPath('default', 'reuses-doomed-ip'));
    } finally {
      watch.close();
    }
  });

  it('default, kube-system and kube-public cannot be deleted (403), even as a dry run', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      for (const query of ['', '?dryRun=All']) {
        const status = assertFailure(
          await call(server, 'DELETE', `/api/v1/namespaces/${name}${query}`),
          403,
          'Forbidden',
        );
        assert.match(status.message ?? '', /this namespace may not be deleted/);
      }
      const ns = (await get(server, `/api/v1/namespaces/${name}`)).body;
      assert.equal(ns.metadata.deletionTimestamp, undefined);
      assert.equal((ns.status as { phase?: string }).phase, 'Active');
    }
    assert.equal((await get(server, svcPath('default', 'kubernetes'))).status, 200);
  });

  it('a namespace whose content has a finalizer stays Terminating, refusing new content (403), until it is removed', async () => {
    const ns = await createNamespace(server, 'held-ns');
    await ok(server, 'POST', cmPath(ns), configMap('held', { finalizers: ['example.com/hold'] }));
    await ok(server, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('p'));
    await ok(server, 'DELETE', `/api/v1/namespaces/${ns}`);
    await waitFor(
      'the pod to be deleted',
      async () => (await get(server, `/api/v1/namespaces/${ns}/pods/p`)).status === 404,
      { timeoutMs: 15_000 },
    );
    const terminating = (await get(server, `/api/v1/namespaces/${ns}`)).body;
    assert.equal((terminating.status as { phase?: string }).phase, 'Terminating');
    const held = (await get(server, cmPath(ns, 'held'))).body;
    assert.ok(held.metadata.deletionTimestamp, 'the held configmap is marked for deletion');

    const refused = assertFailure(await call(server, 'POST', cmPath(ns), configMap('late')), 403, 'Forbidden');
    assert.match(refused.message ?? '', /because it is being terminated/);
    assert.equal((await get(server, cmPath(ns, 'late'))).status, 404);
    // Still there a moment later.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await get(server, `/api/v1/namespaces/${ns}`)).status, 200);

    await ok(server, 'PATCH', cmPath(ns, 'held'), { metadata: { finalizers: [] } }, merge);
    await waitFor(
      'the namespace to be gone',
      async () => (await get(server, `/api/v1/namespaces/${ns}`)).status === 404,
      { timeoutMs: 15_000 },
    );
    assert.equal((await get(server, cmPath(ns, 'held'))).status, 404);
  });

  describe('services', () => {
    const inRange = (ip: string) =>
      /^10\.200\.0\.(\d+)$/.exec(ip) !== null && Number(ip.split('.')[3]) >= 1 && Number(ip.split('.')[3]) <= 254;

    it('clusterIP comes from the service CIDR; a taken one → 422; released on delete', async () => {
      const ns = await createNamespace(server, 'svc-ips');
      const kubernetes = (await get(server, svcPath('default', 'kubernetes'))).body;
      assert.equal(specOf(kubernetes).clusterIP, '10.200.0.1');
      const a = await ok(server, 'POST', svcPath(ns), service('a'));
      const ip = specOf(a).clusterIP!;
      assert.ok(inRange(ip), ip);
      assert.deepEqual(specOf(a).clusterIPs, [ip]);
      assert.equal(specOf(a).ports![0]!.targetPort, 80, 'targetPort defaults to port');
      assert.equal(specOf(a).ports![0]!.nodePort, undefined);

      const taken = assertFailure(
        await call(server, 'POST', svcPath(ns), service('b', { clusterIP: ip })),
        422,
        'Invalid',
      );
      assert.ok(
        taken.details?.causes?.some((c) => c.field?.startsWith('spec.clusterIP')),
        JSON.stringify(taken.details),
      );
      assert.equal((await get(server, svcPath(ns, 'b'))).status, 404);
      assertFailure(
        await call(server, 'POST', svcPath(ns), service('outside', { clusterIP: '10.201.0.5' })),
        422,
        'Invalid',
      );

      await ok(server, 'DELETE', svcPath(ns, 'a'));
      const b = await ok(server, 'POST', svcPath(ns), service('b', { clusterIP: ip }));
      assert.equal(specOf(b).clusterIP, ip);
      // An update keeps the address.
      const updated = await ok(server, 'PATCH', svcPath(ns, 'b'), { metadata: { labels: { x: 'y' } } }, merge);
      assert.equal(specOf(updated).clusterIP, ip);
    });

    it('NodePort services get node ports in range; headless services get no address', async () => {
      const ns = await createNamespace(server, 'svc-ports');
      const np = await ok(
        server,
        'POST',
        svcPath(ns),
        service('np', {
          type: 'NodePort',
          ports: [
            { name: 'http', port: 80 },
            { name: 'https', port: 443 },
          ],
        }),
      );
      const ports = specOf(np).ports!.map((p) => p.nodePort!);
      assert.equal(ports.length, 2);
      for (const p of ports) assert.ok(Number.isInteger(p) && p >= 31000 && p <= 31099, String(p));
      assert.notEqual(ports[0], ports[1]);
      assert.ok(inRange(specOf(np).clusterIP!));
      const clash = await call(
        server,
        'POST',
        svcPath(ns),
        service('clash', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] }),
      );
      assertFailure(clash, 422, 'Invalid');

      const headless = await ok(server, 'POST', svcPath(ns), service('headless', { clusterIP: 'None' }));
      assert.equal(specOf(headless).clusterIP, 'None');
      assert.deepEqual(specOf(headless).clusterIPs, ['None']);
      assert.equal(specOf(headless).ports![0]!.nodePort, undefined);

      const lb = await ok(server, 'POST', svcPath(ns), service('lb', { type: 'LoadBalancer' }));
      const lbPort = specOf(lb).ports![0]!.nodePort!;
      assert.ok(lbPort >= 31000 && lbPort <= 31099 && !ports.includes(lbPort), String(lbPort));

      await ok(server, 'DELETE', svcPath(ns, 'np'));
      const again = await ok(
        server,
        'POST',
        svcPath(ns),
        service('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] }),
      );
      assert.equal(specOf(again).ports![0]!.nodePort, ports[0], 'node ports are released on delete');
    });
  });

  it('resourceVersion: one global counter, bumped by every write, carried by lists', async () => {
    const ns = await createNamespace(server, 'rv');
    const a = await ok(server, 'POST', cmPath(ns), configMap('a'));
    const s = await ok(server, 'POST', svcPath(ns), service('s'));
    const a2 = await ok(server, 'PATCH', cmPath(ns, 'a'), { data: { v: '2' } }, merge);
    assert.ok(rv(a) < rv(s) && rv(s) < rv(a2));
    const list = await ok<{ metadata: { resourceVersion?: string } }>(server, 'GET', cmPath(ns));
    assert.ok(rv(list) >= rv(a2));
    // A no-op update does not write.
    const same = await ok(server, 'PATCH', cmPath(ns, 'a'), { data: { v: '2' } }, merge);
    assert.equal(same.metadata.resourceVersion, a2.metadata.resourceVersion);
  });
});
