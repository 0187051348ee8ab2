// Server-side apply over HTTP (PATCH with `application/apply-patch+yaml`) and metadata.managedFields, against a real
// embedded API server: field managers, conflicts and force, pruning, Update tracking, kubectl 1.20's
// `apply --server-side`, and custom resources whose schema declares associative lists.
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject, Status } from '../../src/kube/api/index.ts';
import { assertFailure, call, createNamespace, get, ok } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

const APPLY = 'application/apply-patch+yaml';

function entries(obj: KubeObject): Entry[] {
  return (obj.metadata.managedFields ?? []) as Entry[];
}

function entry(obj: KubeObject, manager: string, operation: 'Apply' | 'Update' = 'Apply'): Entry | undefined {
  return entries(obj).find((e) => e.manager === manager && e.operation === operation);
}

describe('server-side apply', () => {
  let server: TestServer;
  let ns: string;

  before(async () => {
    server = await startTestServer();
    ns = await createNamespace(server, 'ssa');
  });

  after(async () => {
    await server.stop();
  });

  const cmPath = (name: string, query = ''): string => `/api/v1/namespaces/${ns}/configmaps/${name}${query}`;

  /** A YAML apply of a ConfigMap, as a client sends it. */
  async function applyCm(name: string, manager: string, data: Record<string, string>, extra = '') {
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
      .map(([k, v]) => `  ${k}: "${v}"`)
      .join('\n')}\n`;
    return sendApply(cmPath(name, `?fieldManager=${manager}${extra}`), body);
  }

  async function sendApply(path: string, body: string) {
    const res = await server.request(path, {
      method: 'PATCH',
      body,
      headers: { 'content-type': APPLY },
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as KubeObject & { data?: Record<string, string> } & Status };
  }

  it('creates the object (201) and records an Apply entry; re-applying changes nothing', async () => {
    const created = await applyCm('first', 'alice', { a: '1', b: '2' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.data, { a: '1', b: '2' });
    const applied = entry(created.body, 'alice')!;
    assert.deepEqual(applied, {
      manager: 'alice',
      operation: 'Apply',
      apiVersion: 'v1',
      time: applied.time,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
    });
    assert.match(applied.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const again = await applyCm('first', 'alice', { a: '1', b: '2' });
    assert.equal(again.status, 200);
    assert.equal(again.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
    assert.deepEqual(again.body.metadata.managedFields, created.body.metadata.managedFields);
  });

  it('answers 409 with FieldManagerConflict causes; force takes the field over', async () => {
    await applyCm('contested', 'alice', { a: '1', b: '2' });
    const conflict = await applyCm('contested', 'bob', { a: 'mine' });
    const status = assertFailure(conflict, 409, 'Conflict');
    assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "alice": .data.a');
    assert.deepEqual(status.details?.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' },
    ]);
    assert.deepEqual((await get(server, cmPath('contested'))).body.data, { a: '1', b: '2' });

    const forced = await applyCm('contested', 'bob', { a: 'mine' }, '&force=true');
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.deepEqual(forced.body.data, { a: 'mine', b: '2' });
    assert.deepEqual(entry(forced.body, 'bob')?.fieldsV1, { 'f:data': { 'f:a': {} } });
    assert.deepEqual(entry(forced.body, 'alice')?.fieldsV1, { 'f:data': { 'f:b': {} } });
  });

  it('shares a field applied with the same value, and removes a field its only applier stops applying', async () => {
    await applyCm('shared', 'alice', { a: '1', b: '2' });
    const shared = await applyCm('shared', 'bob', { a: '1' });
    assert.equal(shared.status, 200);
    assert.deepEqual(entry(shared.body, 'bob')?.fieldsV1, { 'f:data': { 'f:a': {} } });
    assert.deepEqual(entry(shared.body, 'alice')?.fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} } });

    const dropped = await applyCm('shared', 'alice', { a: '1' });
    assert.deepEqual(dropped.body.data, { a: '1' });
    const both = await applyCm('shared', 'alice', { c: '3' });
    assert.deepEqual(both.body.data, { a: '1', c: '3' }, 'a stays: bob still applies it');
  });

  it('conflicts with the fields an Update (a merge patch by another manager) took', async () => {
    await applyCm('updated', 'alice', { a: '1' });
    const patched = await ok(
      server,
      'PATCH',
      cmPath('updated', '?fieldManager=editor'),
      { data: { a: 'edited', z: '26' } },
      'application/merge-patch+json',
    );
    assert.deepEqual(entry(patched, 'editor', 'Update')?.fieldsV1, { 'f:data': { 'f:a': {}, 'f:z': {} } });
    assert.equal(entry(patched, 'alice'), undefined, 'alice lost her only field');
    const conflict = await applyCm('updated', 'alice', { a: '2' });
    const status = assertFailure(conflict, 409, 'Conflict');
    assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a');
  });

  it('tracks every write: the manager comes from fieldManager, else the User-Agent', async () => {
    const created = await ok(server, 'POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=creator`, {
      metadata: { name: 'tracked', labels: { app: 'x' } },
      data: { k: 'v' },
    });
    assert.deepEqual(
      entries(created).map((e) => [e.manager, e.operation, e.fieldsV1]),
      [
        [
          'creator',
          'Update',
          { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
        ],
      ],
    );
    const res = await server.request(cmPath('tracked'), {
      method: 'PATCH',
      body: JSON.stringify({ data: { k2: 'v2' } }),
      headers: { 'content-type': 'application/merge-patch+json', 'user-agent': 'OpenAPI-Generator/31.0.0/python' },
    });
    const patched = (await res.json()) as KubeObject;
    assert.deepEqual(entry(patched, 'OpenAPI-Generator', 'Update')?.fieldsV1, { 'f:data': { 'f:k2': {} } });
    // A write that changes nothing writes nothing, managedFields included.
    const same = await ok(
      server,
      'PATCH',
      cmPath('tracked', '?fieldManager=someone'),
      { data: { k2: 'v2' } },
      'application/merge-patch+json',
    );
    assert.equal(same.metadata.resourceVersion, patched.metadata.resourceVersion);
    // `[{}]` resets tracking, as on the real server.
    const reset = await ok(
      server,
      'PATCH',
      cmPath('tracked'),
      { metadata: { managedFields: [{}] } },
      'application/merge-patch+json',
    );
    assert.equal(reset.metadata.managedFields, undefined);
  });

  it('validates the options and the body as upstream', async () => {
    const noManager = await sendApply(cmPath('x'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n');
    assert.equal(
      assertFailure(noManager, 422, 'Invalid').message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const force = await call(
      server,
      'PATCH',
      cmPath('first', '?force=true'),
      { data: {} },
      'application/merge-patch+json',
    );
    assert.equal(
      assertFailure(force, 422, 'Invalid').message,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    const long = await call(server, 'POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=${'m'.repeat(129)}`, {
      metadata: { name: 'long' },
    });
    assert.equal(
      assertFailure(long, 422, 'Invalid').message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most 128 bytes',
    );
    const wrongKind = await sendApply(
      cmPath('x', '?fieldManager=m'),
      'apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n',
    );
    assert.equal(assertFailure(wrongKind, 400, 'BadRequest').message, 'invalid object type: /v1, Kind=Secret');
    const managed = await sendApply(
      cmPath('x', '?fieldManager=m'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, managedFields: []}\n',
    );
    assert.equal(assertFailure(managed, 400, 'BadRequest').message, 'metadata.managedFields must be nil');
  });

  it('never persists a dryRun=All apply', async () => {
    const dry = await applyCm('dry', 'alice', { a: '1' }, '&dryRun=All');
    assert.equal(dry.status, 201);
    assert.equal(entry(dry.body, 'alice')?.operation, 'Apply');
    assert.equal((await get(server, cmPath('dry'))).status, 404);
  });

  it('applies associative lists by key on built-in kinds', async () => {
    const svc = (ports: string): string =>
      `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports:\n${ports}`;
    const path = `/api/v1/namespaces/${ns}/services/web?fieldManager=`;
    const created = await sendApply(`${path}alice`, svc('  - {name: http, port: 80, targetPort: 8080}\n'));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const bob = await sendApply(`${path}bob`, svc('  - {name: https, port: 443, targetPort: 8443}\n'));
    assert.equal(bob.status, 200, JSON.stringify(bob.body));
    const ports = (bob.body.spec as { ports: Array<{ port: number; targetPort: number }> }).ports;
    assert.deepEqual(
      ports.map((p) => [p.port, p.targetPort]),
      [
        [80, 8080],
        [443, 8443],
      ],
    );
    assert.deepEqual(entry(bob.body, 'bob')?.fieldsV1, {
      'f:spec': {
        'f:ports': { 'k:{"port":443,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} } },
        'f:selector': {},
      },
    });
    const conflict = await sendApply(`${path}bob`, svc('  - {port: 80, targetPort: 9090}\n'));
    assert.equal(
      assertFailure(conflict, 409, 'Conflict').details?.causes?.[0]?.field,
      '.spec.ports[port=80,protocol="TCP"].targetPort',
    );
  });

  it('applies to /status only the status, and only of an existing object', async () => {
    await server.kubectl(['apply', '-f', '-'], { input: crd });
    const path = `/apis/example.com/v1/namespaces/${ns}/gadgets/g1`;
    const missing = await sendApply(
      `${path}/status?fieldManager=ctl`,
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nstatus: {phase: Ready}\n',
    );
    assertFailure(missing, 404, 'NotFound');
    const created = await sendApply(
      `${path}?fieldManager=alice`,
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec:\n  size: 1\n  ports:\n  - {name: http, port: 80}\n',
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const status = await sendApply(
      `${path}/status?fieldManager=ctl`,
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 99}\nstatus: {phase: Ready}\n',
    );
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.deepEqual(
      [status.body.spec, status.body.status],
      [{ size: 1, ports: [{ name: 'http', port: 80 }] }, { phase: 'Ready' }],
    );
    const ctl = entries(status.body).find((e) => e.manager === 'ctl')!;
    assert.deepEqual(
      [ctl.operation, ctl.subresource, ctl.fieldsV1],
      ['Apply', 'status', { 'f:status': { 'f:phase': {} } }],
    );
  });

  it('merges a custom resource list declared x-kubernetes-list-type: map by its keys', async () => {
    const path = `/apis/example.com/v1/namespaces/${ns}/gadgets/g2?fieldManager=`;
    const gadget = (ports: string): string =>
      `apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g2}\nspec:\n  ports:\n${ports}`;
    assert.equal((await sendApply(`${path}alice`, gadget('  - {name: http, port: 80}\n'))).status, 201);
    const bob = await sendApply(`${path}bob`, gadget('  - {name: metrics, port: 9090}\n'));
    assert.deepEqual((bob.body.spec as { ports: unknown }).ports, [
      { name: 'http', port: 80 },
      { name: 'metrics', port: 9090 },
    ]);
    assert.deepEqual(entry(bob.body, 'bob')?.fieldsV1, {
      'f:spec': { 'f:ports': { 'k:{"name":"metrics"}': { '.': {}, 'f:name': {}, 'f:port': {} } } },
    });
    const conflict = await sendApply(`${path}bob`, gadget('  - {name: http, port: 8080}\n'));
    assert.equal(
      assertFailure(conflict, 409, 'Conflict').message,
      'Apply failed with 1 conflict: conflict with "alice": .spec.ports[name="http"].port',
    );
  });

  describe('kubectl 1.20 apply --server-side', () => {
    const manifest = (mode: string): string =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-ssa\n  namespace: ssa\ndata:\n  mode: ${mode}\n`;

    it('creates, re-applies, and reports conflicts until --force-conflicts', async () => {
      assert.equal(
        (await server.kubectl(['apply', '--server-side', '-f', '-'], { input: manifest('one') })).trim(),
        'configmap/kubectl-ssa serverside-applied',
      );
      const created = (await get(server, cmPath('kubectl-ssa'))).body;
      assert.deepEqual(entry(created, 'kubectl')?.fieldsV1, { 'f:data': { 'f:mode': {} } });
      await server.kubectl(['apply', '--server-side', '-f', '-'], { input: manifest('one') });
      assert.equal(
        (await get(server, cmPath('kubectl-ssa'))).body.metadata.resourceVersion,
        created.metadata.resourceVersion,
      );

      await ok(
        server,
        'PATCH',
        cmPath('kubectl-ssa', '?fieldManager=other'),
        { data: { mode: 'theirs' } },
        'application/merge-patch+json',
      );
      await assert.rejects(
        server.kubectl(['apply', '--server-side', '-f', '-'], { input: manifest('two') }),
        /conflict with "other" using v1: \.data\.mode/,
      );
      await server.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: manifest('two') });
      const forced = (await get(server, cmPath('kubectl-ssa'))).body as KubeObject & { data: Record<string, string> };
      assert.equal(forced.data.mode, 'two');
      assert.equal(entry(forced, 'other', 'Update'), undefined);
    });

    it('takes over from client-side apply: fields in last-applied-configuration do not conflict', async () => {
      const csa = manifest('csa').replace('kubectl-ssa', 'migrated');
      await server.kubectl(['apply', '-f', '-'], { input: csa });
      const before = (await get(server, cmPath('migrated'))).body;
      assert.ok(entry(before, 'kubectl-client-side-apply', 'Update'));
      await server.kubectl(['apply', '--server-side', '-f', '-'], { input: csa.replace('mode: csa', 'mode: ssa') });
      const after = (await get(server, cmPath('migrated'))).body as KubeObject & { data: Record<string, string> };
      assert.equal(after.data.mode, 'ssa');
      assert.deepEqual(entry(after, 'kubectl')?.fieldsV1, { 'f:data': { 'f:mode': {} } });
      const lastApplied = JSON.parse(
        after.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}',
      ) as { data?: unknown };
      assert.deepEqual(lastApplied.data, { mode: 'ssa' }, 'kubectl keeps the client-side annotation in step');
    });
  });
});

const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
`;
