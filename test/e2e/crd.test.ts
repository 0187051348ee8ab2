/**
 * CustomResourceDefinitions over real HTTPS connections: served and discoverable once created, custom objects
 * behave like the real server's (no unconditional PUT, /status, merge patch but no strategic merge patch), and
 * deleting the CRD removes its objects and its discovery entry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeList, KubeObject } from '../../src/kube/api/index.ts';
import { assertFailure, call, createNamespace, get, listItems, ok, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openWatch } from '../support/watch.ts';

const group = 'example.com';
const crdsPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(plural: string, kind: string, scope: 'Namespaced' | 'Cluster', withStatus: boolean): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          ...(withStatus ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}

interface ResourceList {
  resources: Array<{ name: string; namespaced: boolean; kind: string; verbs: string[] }>;
}

describe('custom resources over HTTP', { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  it('a namespaced CRD with status and a cluster-scoped one: discovery, CRUD, watch, /status, patches, deletion', async () => {
    assert.equal((await get(server, `/apis/${group}/v1`)).status, 404);
    await ok(server, 'POST', crdsPath, crd('widgets', 'Widget', 'Namespaced', true));
    await ok(server, 'POST', crdsPath, crd('gadgets', 'Gadget', 'Cluster', false));
    const established = (await get(server, `${crdsPath}/widgets.${group}`)).body;
    assert.ok(
      (established.status as { conditions: Array<{ type: string; status: string }> }).conditions.some(
        (c) => c.type === 'Established' && c.status === 'True',
      ),
    );

    // Discovery.
    const groups = (
      await get<{ groups: Array<{ name: string; versions: Array<{ groupVersion: string }> }> }>(server, '/apis')
    ).body.groups;
    assert.deepEqual(
      groups.find((g) => g.name === group)?.versions.map((v) => v.groupVersion),
      [`${group}/v1`],
    );
    const resources = (await get<ResourceList>(server, `/apis/${group}/v1`)).body.resources;
    const byName = new Map(resources.map((r) => [r.name, r]));
    assert.deepEqual([...byName.keys()].sort(), ['gadgets', 'widgets', 'widgets/status']);
    assert.equal(byName.get('widgets')!.namespaced, true);
    assert.equal(byName.get('widgets')!.kind, 'Widget');
    assert.ok(byName.get('widgets')!.verbs.includes('watch'));
    assert.equal(byName.get('gadgets')!.namespaced, false);

    // Namespaced custom objects.
    const ns = await createNamespace(server, 'crs');
    const widgets = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    const created = await ok(server, 'POST', widgets, {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 1 },
    });
    assert.equal(created.metadata.generation, 1);
    const watch = await openWatch(server, `${widgets}?watch=true&resourceVersion=${created.metadata.resourceVersion}`);
    try {
      assert.deepEqual(
        (await listItems(server, widgets)).map((o) => o.metadata.name),
        ['w1'],
      );
      assert.deepEqual(
        (await listItems(server, `/apis/${group}/v1/widgets`)).map((o) => o.metadata.name),
        ['w1'],
      );

      const noRv = structuredClone(created);
      delete noRv.metadata.resourceVersion;
      const unconditional = assertFailure(
        await call(server, 'PUT', `${widgets}/w1`, { ...noRv, spec: { size: 2 } }),
        422,
        'Invalid',
      );
      assert.ok(unconditional.details?.causes?.some((c) => c.field === 'metadata.resourceVersion'));

      // PUT of the main resource ignores status; /status changes only status.
      const put = await ok(server, 'PUT', `${widgets}/w1`, { ...created, spec: { size: 2 }, status: { ready: true } });
      assert.deepEqual(put.spec, { size: 2 });
      assert.equal(put.status, undefined);
      assert.equal(put.metadata.generation, 2);
      const status = await ok(server, 'PUT', `${widgets}/w1/status`, {
        ...put,
        spec: { size: 99 },
        status: { ready: true },
      });
      assert.deepEqual(status.spec, { size: 2 });
      assert.deepEqual(status.status, { ready: true });
      assert.equal(status.metadata.generation, 2);

      assertFailure(
        await call(server, 'PATCH', `${widgets}/w1`, { spec: { size: 3 } }, 'application/strategic-merge-patch+json'),
        415,
        'UnsupportedMediaType',
      );
      const patched = await ok(
        server,
        'PATCH',
        `${widgets}/w1`,
        { spec: { color: 'red' } },
        'application/merge-patch+json',
      );
      assert.deepEqual(patched.spec, { size: 2, color: 'red' });
      assert.deepEqual(patched.status, { ready: true });

      const events = await watch.take(3);
      assert.deepEqual(
        events.map((e) => `${e.type}@${rv(e.object)}`),
        [`MODIFIED@${rv(put)}`, `MODIFIED@${rv(status)}`, `MODIFIED@${rv(patched)}`],
      );
      assert.ok(events.every((e) => e.object.kind === 'Widget' && e.object.apiVersion === `${group}/v1`));

      // Cluster-scoped custom objects.
      const gadget = await ok(server, 'POST', `/apis/${group}/v1/gadgets`, { metadata: { name: 'g1' }, spec: {} });
      assert.equal(gadget.metadata.namespace, undefined);
      assert.equal((await get(server, `/apis/${group}/v1/namespaces/${ns}/gadgets/g1`)).status, 404);
      assert.equal((await get(server, `/apis/${group}/v1/gadgets/g1/status`)).status, 404, 'no status subresource');

      // Deleting the CRD removes its objects and its discovery entry.
      await ok(server, 'DELETE', `${crdsPath}/widgets.${group}`);
      const deleted = await watch.until((e) => e.type === 'DELETED');
      assert.equal(deleted.at(-1)!.object.metadata.name, 'w1');
      assert.equal((await get(server, widgets)).status, 404);
      const after = (await get<ResourceList>(server, `/apis/${group}/v1`)).body.resources.map((r) => r.name);
      assert.deepEqual(after, ['gadgets']);
      await ok(server, 'DELETE', `${crdsPath}/gadgets.${group}`);
      assert.equal((await get(server, `/apis/${group}/v1`)).status, 404);
      assert.equal(
        (await get<{ groups: Array<{ name: string }> }>(server, '/apis')).body.groups.some((g) => g.name === group),
        false,
      );

      // Recreated, the CRD serves an empty collection: the old objects are gone, not hidden.
      await ok(server, 'POST', crdsPath, crd('widgets', 'Widget', 'Namespaced', true));
      assert.deepEqual((await ok<KubeList>(server, 'GET', widgets)).items, []);
    } finally {
      watch.close();
    }
  });
});
