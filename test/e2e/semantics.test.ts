/**
 * The API contract over real HTTPS connections (docs/kube-api.md): optimistic concurrency, identity and validation,
 * dryRun, selectors, consistent pagination, authentication.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import { Agent, fetch } from 'undici';
import type { KubeList, KubeObject } from '../../src/kube/api/index.ts';
import { assertFailure, call, configMap, createNamespace, get, listItems, ok, pod, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openWatch } from '../support/watch.ts';

const cmPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

describe('API semantics over HTTP', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  describe('optimistic concurrency', () => {
    it('two PUTs with the same resourceVersion: exactly one wins, the other gets 409 Conflict', async () => {
      const ns = await createNamespace(server, 'occ-put');
      // A ConfigMap, and a Lease: leader election relies on exactly this compare-and-swap.
      const cases = [
        {
          path: cmPath(ns),
          body: configMap('race'),
          change: (writer: string) => ({ data: { writer } }),
          field: 'data',
        },
        {
          path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
          body: { metadata: { name: 'race' }, spec: { holderIdentity: 'none' } },
          change: (writer: string) => ({ spec: { holderIdentity: writer } }),
          field: 'spec',
        },
      ];
      for (const { path, body, change, field } of cases) {
        const created = await ok(server, 'POST', path, body);
        const attempt = (writer: string) =>
          call(server, 'PUT', `${path}/race`, { ...structuredClone(created), ...change(writer) });
        const replies = await Promise.all([attempt('a'), attempt('b')]);
        const winners = replies.filter((r) => r.status === 200);
        const losers = replies.filter((r) => r.status !== 200);
        assert.equal(winners.length, 1, JSON.stringify(replies.map((r) => r.status)));
        assert.equal(losers.length, 1);
        const status = assertFailure(losers[0]!, 409, 'Conflict');
        assert.match(
          status.message ?? '',
          /the object has been modified; please apply your changes to the latest version and try again/,
        );
        const stored = (await get(server, `${path}/race`)).body;
        assert.deepEqual(stored[field], winners[0]!.body[field]);
        assert.ok(rv(stored) > rv(created));
      }
    });

    it('PATCH carrying a stale metadata.resourceVersion → 409, and nothing changes', async () => {
      const ns = await createNamespace(server, 'occ-patch');
      const created = await ok(server, 'POST', cmPath(ns), configMap('p'));
      const current = await ok(
        server,
        'PATCH',
        cmPath(ns, 'p'),
        { data: { step: '1' } },
        'application/merge-patch+json',
      );
      const stale = await call(
        server,
        'PATCH',
        cmPath(ns, 'p'),
        { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { step: '2' } },
        'application/merge-patch+json',
      );
      assertFailure(stale, 409, 'Conflict');
      const stored = (await get(server, cmPath(ns, 'p'))).body;
      assert.deepEqual(stored.data, { key: 'value', step: '1' });
      assert.equal(stored.metadata.resourceVersion, current.metadata.resourceVersion);
      // The same patch with the current resourceVersion is accepted.
      await ok(
        server,
        'PATCH',
        cmPath(ns, 'p'),
        { metadata: { resourceVersion: current.metadata.resourceVersion }, data: { step: '2' } },
        'application/merge-patch+json',
      );
      assert.deepEqual((await get(server, cmPath(ns, 'p'))).body.data, { key: 'value', step: '2' });
    });

    it('create of an existing name → 409 AlreadyExists, the original untouched', async () => {
      const ns = await createNamespace(server, 'occ-exists');
      const first = await ok(server, 'POST', cmPath(ns), configMap('dup', { data: { v: 'first' } }));
      const reply = await call(server, 'POST', cmPath(ns), configMap('dup', { data: { v: 'second' } }));
      const status = assertFailure(reply, 409, 'AlreadyExists');
      assert.equal(status.details?.name, 'dup');
      assert.equal(status.details?.kind, 'configmaps');
      const stored = (await get(server, cmPath(ns, 'dup'))).body;
      assert.equal(stored.metadata.uid, first.metadata.uid);
      assert.deepEqual(stored.data, { v: 'first' });
      // Deleted and created again: a new uid, never the old one.
      await ok(server, 'DELETE', cmPath(ns, 'dup'));
      const again = await ok(server, 'POST', cmPath(ns), configMap('dup'));
      assert.notEqual(again.metadata.uid, first.metadata.uid);
    });
  });

  describe('identity and validation', () => {
    it('invalid names → 422 Invalid naming metadata.name, and nothing is stored', async () => {
      const ns = await createNamespace(server, 'names');
      for (const name of ['UpperCase', `a${'b'.repeat(253)}`, 'under_score']) {
        const status = assertFailure(await call(server, 'POST', cmPath(ns), configMap(name)), 422, 'Invalid');
        assert.ok(
          status.details?.causes?.some((c) => c.field === 'metadata.name'),
          JSON.stringify(status.details),
        );
        assert.equal(status.details?.kind, 'ConfigMap');
      }
      // Services are DNS labels: no dots (which a ConfigMap name may have).
      const dotted = assertFailure(
        await call(server, 'POST', `/api/v1/namespaces/${ns}/services`, {
          metadata: { name: 'a.b' },
          spec: { ports: [{ port: 80 }] },
        }),
        422,
        'Invalid',
      );
      assert.ok(dotted.details?.causes?.some((c) => c.field === 'metadata.name'));
      await ok(server, 'POST', cmPath(ns), configMap('a.b'));
      await ok(server, 'DELETE', cmPath(ns, 'a.b'));
      // Namespaces are DNS-1123 labels: 63 characters at most.
      const long = assertFailure(
        await call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'n'.repeat(64) } }),
        422,
        'Invalid',
      );
      assert.ok(long.details?.causes?.some((c) => c.field === 'metadata.name'));
      assert.deepEqual(await listItems(server, cmPath(ns)), []);
      assert.equal((await get(server, `/api/v1/namespaces/${'n'.repeat(64)}`)).status, 404);
    });

    it('a pod without containers → 422 naming spec.containers', async () => {
      const ns = await createNamespace(server, 'podval');
      const reply = await call(server, 'POST', `/api/v1/namespaces/${ns}/pods`, {
        metadata: { name: 'empty' },
        spec: { containers: [] },
      });
      const status = assertFailure(reply, 422, 'Invalid');
      assert.ok(
        status.details?.causes?.some((c) => c.field === 'spec.containers'),
        JSON.stringify(status.details),
      );
      assert.equal((await get(server, `/api/v1/namespaces/${ns}/pods/empty`)).status, 404);
    });

    it('generateName: prefix plus 5 characters, a fresh uid and creationTimestamp from the server', async () => {
      const ns = await createNamespace(server, 'genname');
      const before = Date.now() - 2_000;
      const a = await ok(server, 'POST', cmPath(ns), {
        metadata: { generateName: 'web-', uid: 'client-chosen', creationTimestamp: '2000-01-01T00:00:00Z' },
        data: {},
      });
      const b = await ok(server, 'POST', cmPath(ns), { metadata: { generateName: 'web-' }, data: {} });
      for (const obj of [a, b]) {
        assert.match(obj.metadata.name ?? '', /^web-[a-z0-9]{5}$/);
        assert.match(obj.metadata.uid ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        const created = Date.parse(obj.metadata.creationTimestamp ?? '');
        assert.ok(created >= before && created <= Date.now() + 2_000, String(obj.metadata.creationTimestamp));
        assert.equal((await get(server, cmPath(ns, obj.metadata.name))).body.metadata.uid, obj.metadata.uid);
      }
      assert.notEqual(a.metadata.name, b.metadata.name);
      assert.notEqual(a.metadata.uid, b.metadata.uid);
    });

    it('metadata.uid changed by update or patch → 422 Invalid naming it, and nothing changes; left out, it is kept', async () => {
      const ns = await createNamespace(server, 'uidfix');
      const created = await ok(server, 'POST', cmPath(ns), { metadata: { name: 'cm' }, data: { a: '1' } });
      const other = '00000000-0000-4000-8000-000000000000';
      const put = await call(server, 'PUT', cmPath(ns, 'cm'), {
        ...created,
        metadata: { ...created.metadata, uid: other },
        data: { a: '2' },
      });
      const patches = [
        ['application/merge-patch+json', { metadata: { uid: other }, data: { a: '3' } }],
        ['application/strategic-merge-patch+json', { metadata: { uid: other }, data: { a: '4' } }],
        ['application/json-patch+json', [{ op: 'replace', path: '/metadata/uid', value: other }]],
      ] as const;
      for (const reply of [
        put,
        ...(await Promise.all(patches.map(([type, body]) => call(server, 'PATCH', cmPath(ns, 'cm'), body, type)))),
      ]) {
        const status = assertFailure(reply, 422, 'Invalid');
        assert.ok(
          status.details?.causes?.some((c) => c.field === 'metadata.uid' && /field is immutable/.test(c.message ?? '')),
          JSON.stringify(status.details),
        );
      }
      const stored = (await get(server, cmPath(ns, 'cm'))).body;
      assert.deepEqual([stored.metadata.uid, stored.data], [created.metadata.uid, { a: '1' }]);
      const { uid: _uid, ...withoutUid } = created.metadata;
      const updated = await ok(server, 'PUT', cmPath(ns, 'cm'), { ...created, metadata: withoutUid, data: { a: '5' } });
      assert.equal(updated.metadata.uid, created.metadata.uid);
    });

    it('a body namespace that disagrees with the URL → 400; a missing namespace → 404', async () => {
      const ns = await createNamespace(server, 'nsmatch');
      const mismatch = await call(server, 'POST', cmPath(ns), {
        metadata: { name: 'x', namespace: 'default' },
        data: {},
      });
      assertFailure(mismatch, 400, 'BadRequest');
      assert.equal((await get(server, cmPath(ns, 'x'))).status, 404);
      assert.equal((await get(server, cmPath('default', 'x'))).status, 404);
      const missing = assertFailure(await call(server, 'POST', cmPath('no-such-ns'), configMap('x')), 404, 'NotFound');
      assert.equal(missing.details?.kind, 'namespaces');
      assert.equal(missing.details?.name, 'no-such-ns');
      // A matching body namespace is fine.
      await ok(server, 'POST', cmPath(ns), { metadata: { name: 'x', namespace: ns }, data: {} });
    });
  });

  describe('dryRun=All', () => {
    it('create, update, patch and delete never persist nor emit watch events', async () => {
      const ns = await createNamespace(server, 'dryrun');
      const original = await ok(server, 'POST', cmPath(ns), configMap('kept', { data: { v: 'orig' } }));
      const watch = await openWatch(
        server,
        `${cmPath(ns)}?watch=true&resourceVersion=${original.metadata.resourceVersion}`,
      );
      try {
        const created = await call(server, 'POST', `${cmPath(ns)}?dryRun=All`, configMap('ghost'));
        assert.equal(created.status, 201);
        assert.equal(created.body.metadata.name, 'ghost');
        assert.equal((await get(server, cmPath(ns, 'ghost'))).status, 404);

        const updated = await call(server, 'PUT', `${cmPath(ns, 'kept')}?dryRun=All`, {
          ...original,
          data: { v: 'put' },
        });
        assert.equal(updated.status, 200);
        assert.deepEqual(updated.body.data, { v: 'put' });
        const patched = await call(
          server,
          'PATCH',
          `${cmPath(ns, 'kept')}?dryRun=All`,
          { data: { v: 'patch' } },
          'application/merge-patch+json',
        );
        assert.equal(patched.status, 200);
        assert.deepEqual(patched.body.data, { v: 'patch' });
        assert.equal((await call(server, 'DELETE', `${cmPath(ns, 'kept')}?dryRun=All`)).status, 200);

        const stored = (await get(server, cmPath(ns, 'kept'))).body;
        assert.deepEqual(stored.data, { v: 'orig' });
        assert.equal(stored.metadata.resourceVersion, original.metadata.resourceVersion);
        // A real write afterwards is the first event the watch sees.
        const marker = await ok(server, 'POST', cmPath(ns), configMap('marker'));
        const [event] = await watch.take(1);
        assert.equal(event!.type, 'ADDED');
        assert.equal(event!.object.metadata.name, 'marker');
        assert.equal(event!.object.metadata.resourceVersion, marker.metadata.resourceVersion);
        assert.equal(rv(marker), rv(original) + 1, 'dry runs must not consume resourceVersions');
        // A dry-run Service does not keep its cluster IP.
        const svc = { metadata: { name: 'dry' }, spec: { clusterIP: '10.96.0.77', ports: [{ port: 80 }] } };
        assert.equal((await call(server, 'POST', `/api/v1/namespaces/${ns}/services?dryRun=All`, svc)).status, 201);
        const real = await ok(server, 'POST', `/api/v1/namespaces/${ns}/services`, svc);
        assert.equal((real.spec as { clusterIP?: string }).clusterIP, '10.96.0.77');
      } finally {
        watch.close();
      }
    });
  });

  describe('selectors on lists', () => {
    it('label selectors (equality and set-based) and field selectors filter; an unsupported field → 400', async () => {
      const ns = await createNamespace(server, 'selectors');
      await ok(server, 'POST', cmPath(ns), configMap('a1', { labels: { app: 'a', tier: 'web' } }));
      await ok(server, 'POST', cmPath(ns), configMap('a2', { labels: { app: 'a', tier: 'db' } }));
      await ok(server, 'POST', cmPath(ns), configMap('b1', { labels: { app: 'b' } }));
      await ok(server, 'POST', cmPath(ns), configMap('none'));
      const names = async (query: string) =>
        (await listItems(server, `${cmPath(ns)}?${query}`)).map((o) => o.metadata.name).sort();
      assert.deepEqual(await names('labelSelector=app%3Da'), ['a1', 'a2']);
      assert.deepEqual(await names('labelSelector=app!%3Da'), ['b1', 'none']);
      assert.deepEqual(await names(`labelSelector=${encodeURIComponent('app in (a,b),tier notin (db)')}`), [
        'a1',
        'b1',
      ]);
      assert.deepEqual(await names('labelSelector=!app'), ['none']);
      assert.deepEqual(await names('fieldSelector=metadata.name%3Db1'), ['b1']);
      assert.deepEqual(await names(`fieldSelector=${encodeURIComponent('metadata.name!=b1')}&labelSelector=app`), [
        'a1',
        'a2',
      ]);
      await ok(server, 'POST', `/api/v1/namespaces/${ns}/pods`, pod('p1'));
      assert.deepEqual(
        (await listItems(server, `/api/v1/namespaces/${ns}/pods?fieldSelector=status.phase%3DPending`)).map(
          (p) => p.metadata.name,
        ),
        ['p1'],
      );
      assert.deepEqual(
        await listItems(server, `/api/v1/namespaces/${ns}/pods?fieldSelector=status.phase%3DRunning`),
        [],
      );
      assertFailure(await call(server, 'GET', `${cmPath(ns)}?fieldSelector=data.key%3Dvalue`), 400, 'BadRequest');
      assertFailure(
        await call(server, 'GET', `${cmPath(ns)}?watch=true&fieldSelector=spec.foo%3Dbar`),
        400,
        'BadRequest',
      );
    });
  });

  describe('pagination', () => {
    it('limit + continue walks every object exactly once from one snapshot, despite writes between pages', async () => {
      const ns = await createNamespace(server, 'pages');
      const names = Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
      for (const name of names) await ok(server, 'POST', cmPath(ns), configMap(name));
      const first = await ok<KubeList>(server, 'GET', `${cmPath(ns)}?limit=10`);
      assert.equal(first.items.length, 10);
      assert.ok(first.metadata.continue);
      assert.equal(first.metadata.remainingItemCount, names.length - 10);
      // Writes between pages: a new object that sorts last, and the deletion of one not yet returned.
      await ok(server, 'POST', cmPath(ns), configMap('cm-99'));
      await ok(server, 'DELETE', cmPath(ns, 'cm-20'));
      const seen = first.items.map((o) => o.metadata.name);
      let token: string | undefined = first.metadata.continue;
      let pages = 1;
      while (token) {
        const page: KubeList = await ok<KubeList>(
          server,
          'GET',
          `${cmPath(ns)}?limit=10&continue=${encodeURIComponent(token)}`,
        );
        assert.equal(
          page.metadata.resourceVersion,
          first.metadata.resourceVersion,
          'every page comes from the first page snapshot',
        );
        seen.push(...page.items.map((o) => o.metadata.name));
        token = page.metadata.continue;
        assert.ok(++pages <= 5, 'pagination does not terminate');
      }
      assert.equal(pages, 3);
      assert.deepEqual(seen, names);
      // A fresh list sees the current state.
      const now = (await listItems(server, cmPath(ns))).map((o) => o.metadata.name);
      assert.ok(now.includes('cm-99') && !now.includes('cm-20'));
    });

    it('a resourceVersion newer than the store waits up to 3 s for it, then 504 ResourceVersionTooLarge', async () => {
      const ns = await createNamespace(server, 'too-new');
      const made = await ok(server, 'POST', cmPath(ns), configMap('a'));
      // Reached within the wait: the list answers as soon as the store gets there (the watch cache's semantics).
      const soon = rv(made) + 1;
      const waiting = call<KubeList>(server, 'GET', `${cmPath(ns)}?resourceVersion=${soon}`);
      await ok(server, 'POST', cmPath(ns), configMap('b'));
      const reached = await waiting;
      assert.equal(reached.status, 200, JSON.stringify(reached.body));
      assert.ok(Number(reached.body.metadata.resourceVersion) >= soon);
      assert.deepEqual(reached.body.items.map((o) => o.metadata.name).sort(), ['a', 'b']);
      // Never reached: after about 3 s, kube-apiserver's NewTooLargeResourceVersionError.
      const far = rv(made) + 1_000_000;
      const started = Date.now();
      const reply = await call(server, 'GET', `${cmPath(ns)}?resourceVersion=${far}`);
      const waited = Date.now() - started;
      const status = assertFailure(reply, 504, 'Timeout');
      assert.match(status.message ?? '', new RegExp(`^Too large resource version: ${far}, current: \\d+$`));
      assert.deepEqual(status.details?.causes, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
      assert.equal(status.details?.retryAfterSeconds, 1);
      assert.ok(waited >= 2_900, `answered after ${waited} ms, before the 3 s wait`);
    });

    it('a continue token older than the history window → 410 Expired', async () => {
      const small = await startTestServer({ historyLimit: 5 });
      try {
        const ns = await createNamespace(small, 'pages-expired');
        for (let i = 0; i < 4; i++) await ok(small, 'POST', cmPath(ns), configMap(`c${i}`));
        const first = await ok<KubeList>(small, 'GET', `${cmPath(ns)}?limit=2`);
        assert.ok(first.metadata.continue);
        for (let i = 0; i < 6; i++) await ok(small, 'POST', cmPath(ns), configMap(`later${i}`));
        const reply = await call(
          small,
          'GET',
          `${cmPath(ns)}?limit=2&continue=${encodeURIComponent(first.metadata.continue)}`,
        );
        assertFailure(reply, 410, 'Expired');
      } finally {
        await small.stop();
      }
    });
  });

  describe('authentication', () => {
    let agent: Agent;
    before(() => {
      agent = new Agent({ connect: { ca: server.caPem } });
    });
    after(async () => {
      await agent.close();
    });
    const raw = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}${path}`, {
        headers,
        dispatcher: agent,
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: await res.text() };
    };

    it('no token or a wrong token → 401 Status; /healthz needs none', async () => {
      const attempts: Array<Record<string, string>> = [
        {},
        { authorization: `Bearer ${server.token}x` },
        { authorization: server.token },
      ];
      for (const headers of attempts) {
        const reply = await raw('/api/v1/namespaces', headers);
        assertFailure({ status: reply.status, body: JSON.parse(reply.body) as unknown }, 401, 'Unauthorized');
      }
      const healthz = await raw('/healthz');
      assert.equal(healthz.status, 200);
      assert.equal(healthz.body, 'ok');
      assert.equal((await raw('/api/v1/namespaces', { authorization: `Bearer ${server.token}` })).status, 200);
    });

    it('a failed authentication never writes', async () => {
      const res = await fetch(`${server.url}${cmPath('default')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(configMap('anon')),
        dispatcher: agent,
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(res.status, 401);
      await res.text();
      assert.equal((await get<KubeObject>(server, cmPath('default', 'anon'))).status, 404);
    });
  });
});
