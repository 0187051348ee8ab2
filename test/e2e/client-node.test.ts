// @kubernetes/client-node 1.4.0 (a devDependency, the official JavaScript client) against a real embedded API server
// over HTTPS, configured only from the kubeconfig the server wrote. Results are checked on the server with request().
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

/**
 * client-node 1.4 picks the first patch content type of its OpenAPI list (JSON patch) unless a header option says
 * otherwise.
 */
const as = (type: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', type);

const podBody = (name: string, labels: Record<string, string> = {}): k8s.V1Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36', ports: [{ containerPort: 8080, name: 'http' }] }] },
});

type Seen = Array<[verb: string, name: string, resourceVersion: string]>;

/**
 * An informer over one namespace's pods that records every callback. client-node 1.4's ListWatch relists by itself
 * on 410 Expired, but on any other error (a cut connection included) it calls the `error` handlers and stops for good
 * (upstream issues #596, #1933); its README says to call `start()` again from the `error` handler, which is done
 * here, after a short pause, unless the test is stopping it.
 */
function podInformer(kc: k8s.KubeConfig, core: k8s.CoreV1Api, namespace: string) {
  // What makeInformer builds, typed as the ListWatch it is (for latestResourceVersion()).
  const informer = new k8s.ListWatch<k8s.V1Pod>(
    `/api/v1/namespaces/${namespace}/pods`,
    new k8s.Watch(kc),
    () => core.listNamespacedPod({ namespace }),
    false,
  );
  const seen: Seen = [];
  const errors: unknown[] = [];
  let stopping = false;
  for (const verb of ['add', 'update', 'delete'] as const) {
    informer.on(verb, (pod) => seen.push([verb, pod.metadata?.name ?? '', pod.metadata?.resourceVersion ?? '']));
  }
  informer.on('error', (err) => {
    if (stopping) return;
    errors.push(err);
    setTimeout(() => {
      if (!stopping) void informer.start();
    }, 100);
  });
  return {
    informer,
    seen,
    errors,
    names: () =>
      informer
        .list(namespace)
        .map((p) => p.metadata?.name)
        .sort(),
    async stop() {
      stopping = true;
      await informer.stop();
    },
  };
}

describe('@kubernetes/client-node 1.4.0 against the embedded API server', () => {
  let server: TestServer;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;

  before(async () => {
    server = await startTestServer();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  after(async () => {
    await server.stop();
  });

  async function serverGet(
    path: string,
  ): Promise<{ status: number; body: k8s.KubernetesObject & { spec?: unknown; data?: unknown; status?: unknown } }> {
    const res = await server.request(path, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as k8s.KubernetesObject };
  }

  /** The ApiException a call fails with, and the `Status` it carries (client-node 1.4 keeps the body as text). */
  async function apiError(promise: Promise<unknown>): Promise<{ code: number; status: k8s.V1Status }> {
    try {
      await promise;
    } catch (err) {
      assert.ok(err instanceof k8s.ApiException, `an ApiException, got ${String(err)}`);
      const { code, body } = err as k8s.ApiException<unknown>;
      return { code, status: (typeof body === 'string' ? JSON.parse(body) : body) as k8s.V1Status };
    }
    assert.fail('the request should have failed');
  }

  it('creates, reads, lists, patches and deletes namespaces', async () => {
    const created = await core.createNamespace({ body: { metadata: { name: 'cn-ns', labels: { team: 'a' } } } });
    assert.equal(created.metadata?.name, 'cn-ns');
    assert.equal(created.status?.phase, 'Active');
    assert.ok(
      created.metadata?.creationTimestamp instanceof Date &&
        !Number.isNaN(created.metadata.creationTimestamp.getTime()),
    );

    const read = await core.readNamespace({ name: 'cn-ns' });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    const list = await core.listNamespace({ labelSelector: 'team=a' });
    assert.deepEqual(
      list.items.map((n) => n.metadata?.name),
      ['cn-ns'],
    );
    assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);
    const all = await core.listNamespace();
    for (const name of ['default', 'kube-system', 'kube-public', 'cn-ns'])
      assert.ok(
        all.items.some((n) => n.metadata?.name === name),
        name,
      );

    const patched = await core.patchNamespace(
      { name: 'cn-ns', body: { metadata: { labels: { env: 'test' } } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(patched.metadata?.labels, { team: 'a', env: 'test', 'kubernetes.io/metadata.name': 'cn-ns' });
    assert.deepEqual((await serverGet('/api/v1/namespaces/cn-ns')).body.metadata?.labels, patched.metadata?.labels);

    const conflict = await apiError(core.createNamespace({ body: { metadata: { name: 'cn-ns' } } }));
    assert.deepEqual([conflict.code, conflict.status.reason], [409, 'AlreadyExists']);

    await core.deleteNamespace({ name: 'cn-ns' });
    await waitFor('namespace cn-ns to go', async () => (await serverGet('/api/v1/namespaces/cn-ns')).status === 404);
    const gone = await apiError(core.readNamespace({ name: 'cn-ns' }));
    assert.equal(gone.code, 404);
  });

  it('creates, reads, lists, patches (json, merge, strategic) and deletes pods', async () => {
    await core.createNamespace({ body: { metadata: { name: 'cn-pods' } } });
    const created = await core.createNamespacedPod({ namespace: 'cn-pods', body: podBody('web', { app: 'web' }) });
    assert.equal(created.metadata?.namespace, 'cn-pods');
    assert.equal(created.status?.phase, 'Pending');
    assert.equal(created.spec?.restartPolicy, 'Always');
    await core.createNamespacedPod({ namespace: 'cn-pods', body: podBody('db', { app: 'db' }) });

    assert.equal(
      (await core.readNamespacedPod({ name: 'web', namespace: 'cn-pods' })).metadata?.uid,
      created.metadata?.uid,
    );
    const list = await core.listNamespacedPod({ namespace: 'cn-pods', labelSelector: 'app in (web)' });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['web'],
    );
    const page = await core.listNamespacedPod({ namespace: 'cn-pods', limit: 1 });
    assert.equal(page.items.length, 1);
    assert.ok(page.metadata?._continue, 'a continue token');
    const rest = await core.listNamespacedPod({ namespace: 'cn-pods', limit: 1, _continue: page.metadata._continue });
    assert.deepEqual([...page.items, ...rest.items].map((p) => p.metadata?.name).sort(), ['db', 'web']);

    // The default content type is JSON patch (the first of the generated client's list).
    await core.patchNamespacedPod({
      name: 'web',
      namespace: 'cn-pods',
      body: [{ op: 'add', path: '/metadata/labels/json', value: 'yes' }],
    });
    await core.patchNamespacedPod(
      { name: 'web', namespace: 'cn-pods', body: { metadata: { labels: { merge: 'yes', app: null } } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    const strategic = await core.patchNamespacedPod(
      { name: 'web', namespace: 'cn-pods', body: { spec: { containers: [{ name: 'main', image: 'busybox:1.37' }] } } },
      as(k8s.PatchStrategy.StrategicMergePatch),
    );
    assert.equal(strategic.spec?.containers.length, 1);
    const stored = (await serverGet('/api/v1/namespaces/cn-pods/pods/web')).body as k8s.V1Pod;
    assert.deepEqual(stored.metadata?.labels, { json: 'yes', merge: 'yes' });
    assert.equal(stored.spec?.containers[0]?.image, 'busybox:1.37');
    assert.deepEqual(stored.spec?.containers[0]?.ports, [{ containerPort: 8080, name: 'http', protocol: 'TCP' }]);

    // A stale resourceVersion is a 409 Conflict.
    const stale = await apiError(
      core.replaceNamespacedPod({
        name: 'web',
        namespace: 'cn-pods',
        body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } },
      }),
    );
    assert.equal(stale.code, 409);
    assert.equal(stale.status.reason, 'Conflict');

    const deleted = await core.deleteNamespacedPod({ name: 'web', namespace: 'cn-pods' });
    assert.equal(deleted.metadata?.name, 'web');
    assert.equal((await serverGet('/api/v1/namespaces/cn-pods/pods/web')).status, 404);
    const missing = await apiError(core.readNamespacedPod({ name: 'web', namespace: 'cn-pods' }));
    assert.equal(missing.code, 404);
    const { status } = missing;
    assert.deepEqual(
      [status.kind, status.reason, status.details?.name, status.details?.kind],
      ['Status', 'NotFound', 'web', 'pods'],
    );
  });

  it('creates, reads, lists, patches and deletes configmaps', async () => {
    await core.createNamespace({ body: { metadata: { name: 'cn-cm' } } });
    const created = await core.createNamespacedConfigMap({
      namespace: 'cn-cm',
      body: { metadata: { name: 'settings' }, data: { mode: 'one', keep: 'x' } },
    });
    assert.deepEqual(created.data, { mode: 'one', keep: 'x' });
    assert.deepEqual((await core.readNamespacedConfigMap({ name: 'settings', namespace: 'cn-cm' })).data, created.data);
    assert.deepEqual(
      (await core.listNamespacedConfigMap({ namespace: 'cn-cm', fieldSelector: 'metadata.name=settings' })).items.map(
        (c) => c.metadata?.name,
      ),
      ['settings'],
    );
    await core.patchNamespacedConfigMap(
      { name: 'settings', namespace: 'cn-cm', body: { data: { mode: 'two', keep: null } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    await core.patchNamespacedConfigMap({
      name: 'settings',
      namespace: 'cn-cm',
      body: [{ op: 'add', path: '/data/extra', value: '3' }],
    });
    assert.deepEqual((await serverGet('/api/v1/namespaces/cn-cm/configmaps/settings')).body.data, {
      mode: 'two',
      extra: '3',
    });
    await core.deleteNamespacedConfigMap({ name: 'settings', namespace: 'cn-cm' });
    assert.equal((await serverGet('/api/v1/namespaces/cn-cm/configmaps/settings')).status, 404);
  });

  it("serves a CRD's objects to the generic KubernetesObjectApi (found through discovery) and CustomObjectsApi", async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    await waitFor('the CRD to be Established', async () =>
      (await ext.readCustomResourceDefinition({ name: 'gadgets.example.com' })).status?.conditions?.some(
        (c) => c.type === 'Established' && c.status === 'True',
      ),
    );
    await core.createNamespace({ body: { metadata: { name: 'cn-crd' } } });

    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const gadget: k8s.KubernetesObject & { spec: object } = {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g1', namespace: 'cn-crd' },
      spec: { size: 1, keep: true },
    };
    const created = await objects.create(gadget);
    assert.ok(created.metadata?.uid);
    // Custom resources have no strategic merge patch: a merge patch is the way.
    await objects.patch(
      { ...gadget, spec: { size: 2 } },
      undefined,
      undefined,
      undefined,
      undefined,
      k8s.PatchStrategy.MergePatch,
    );
    const listed = await objects.list('example.com/v1', 'Gadget', 'cn-crd');
    assert.deepEqual(
      listed.items.map((o) => o.metadata?.name),
      ['g1'],
    );

    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const read = (await custom.getNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'cn-crd',
      plural: 'gadgets',
      name: 'g1',
    })) as { spec: unknown };
    assert.deepEqual(read.spec, { size: 2, keep: true });
    assert.deepEqual((await serverGet('/apis/example.com/v1/namespaces/cn-crd/gadgets/g1')).body.spec, {
      size: 2,
      keep: true,
    });

    await objects.delete(gadget);
    assert.equal((await serverGet('/apis/example.com/v1/namespaces/cn-crd/gadgets/g1')).status, 404);
  });

  it('an informer sees pods added, updated and deleted', async () => {
    await core.createNamespace({ body: { metadata: { name: 'cn-informer' } } });
    await core.createNamespacedPod({ namespace: 'cn-informer', body: podBody('existing') });
    const inf = podInformer(kc, core, 'cn-informer');
    try {
      await inf.informer.start();
      await waitFor('the listed pod', () => inf.names().includes('existing'));
      const created = await core.createNamespacedPod({ namespace: 'cn-informer', body: podBody('p1') });
      await waitFor('add p1', () => inf.seen.some(([v, n]) => v === 'add' && n === 'p1'));
      const patched = await core.patchNamespacedPod(
        { name: 'p1', namespace: 'cn-informer', body: { metadata: { labels: { v: '2' } } } },
        as(k8s.PatchStrategy.MergePatch),
      );
      await waitFor('update p1', () => inf.seen.some(([v, n]) => v === 'update' && n === 'p1'));
      assert.deepEqual(inf.informer.get('p1', 'cn-informer')?.metadata?.labels, { v: '2' });
      await core.deleteNamespacedPod({ name: 'p1', namespace: 'cn-informer' });
      await waitFor('delete p1', () => inf.seen.some(([v, n]) => v === 'delete' && n === 'p1'));

      assert.deepEqual(
        inf.seen.filter(([, n]) => n === 'p1'),
        [
          ['add', 'p1', created.metadata?.resourceVersion],
          ['update', 'p1', patched.metadata?.resourceVersion],
          ['delete', 'p1', inf.seen.find(([v]) => v === 'delete')?.[2]],
        ],
      );
      assert.ok(
        Number(inf.seen.at(-1)?.[2]) > Number(patched.metadata?.resourceVersion),
        'the DELETED event carries a newer resourceVersion',
      );
      assert.deepEqual(inf.names(), ['existing']);
      assert.deepEqual(inf.errors, []);
    } finally {
      await inf.stop();
    }
  });

  for (const mode of ['clean', 'abort'] as const) {
    it(`an informer recovers after compaction and dropped watches (${mode})`, async () => {
      const ns = `cn-recover-${mode}`;
      await core.createNamespace({ body: { metadata: { name: ns } } });
      await core.createNamespacedPod({ namespace: ns, body: podBody('before') });
      const inf = podInformer(kc, core, ns);
      try {
        await inf.informer.start();
        await waitFor('the listed pod', () => inf.names().includes('before'));
        // Something elsewhere moves the global resourceVersion past the informer's, then history is forgotten.
        await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'bump-' } } });
        const lastSeen = Number(inf.informer.latestResourceVersion());
        const compacted = (await (
          await server.request('/_raven/faults/compact', { method: 'POST', signal: AbortSignal.timeout(10_000) })
        ).json()) as { compactedResourceVersion: string };
        assert.ok(Number(compacted.compactedResourceVersion) > lastSeen);
        const dropped = await server.request('/_raven/faults/drop-watches', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ mode }),
          signal: AbortSignal.timeout(10_000),
        });
        assert.equal(((await dropped.json()) as { dropped: number }).dropped, 1);

        // Changes made while its watch is gone: its re-watch from the old resourceVersion gets 410, so it must relist.
        await core.deleteNamespacedPod({ name: 'before', namespace: ns });
        await core.createNamespacedPod({ namespace: ns, body: podBody('during') });
        await waitFor('the relist to drop "before" and add "during"', () => inf.names().join() === 'during', {
          timeoutMs: 15_000,
        });
        assert.ok(
          inf.seen.some(([v, n]) => v === 'delete' && n === 'before'),
          'delete callback for the pod that vanished',
        );

        // Then it watches again: a pod created after the compaction arrives as an event.
        const after = await core.createNamespacedPod({ namespace: ns, body: podBody('after') });
        await waitFor('add "after"', () => inf.seen.some(([v, n]) => v === 'add' && n === 'after'), {
          timeoutMs: 15_000,
        });
        assert.deepEqual(inf.names(), ['after', 'during']);
        assert.equal(inf.informer.latestResourceVersion(), after.metadata?.resourceVersion);
        if (mode === 'abort') {
          assert.ok(
            inf.errors.length >= 1,
            'a cut connection reaches the error handler (and the informer is restarted there)',
          );
        } else {
          assert.deepEqual(inf.errors, [], 'a clean end is handled by the informer itself');
        }
      } finally {
        await inf.stop();
      }
    });
  }
});
