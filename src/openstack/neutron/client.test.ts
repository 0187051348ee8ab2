import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from '../../../test/support/node-test.ts';
import type { CloudConfig } from '../config/types.ts';
import { isOpenStackError } from '../errors.ts';
import { OpenStackSession } from '../session.ts';
import { NeutronClient } from './client.ts';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * The wire rules the contract suite cannot provoke on a well-behaved Neutron: a scripted HTTP server on port 0 whose
 * answers each test sets, so that marker following, the tag fallback's rollback and the no-retry PUTs are checked.
 * Behaviour against Neutron itself is in test/contract/openstack/neutron-*.test.ts.
 */
describe('NeutronClient wire rules', () => {
  let server: Server;
  let session: OpenStackSession;
  let neutron: NeutronClient;
  const seen: Seen[] = [];
  let handle: (req: Seen, res: ServerResponse) => void = (_req, res) => send(res, 404, {});
  let extensions: string[] = [];

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  }
  const neutronError = (res: ServerResponse, status: number, type: string): void =>
    send(res, status, { NeutronError: { type, message: type, detail: '' } });

  before(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const s: Seen = {
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: text ? JSON.parse(text) : undefined,
        };
        if (s.path === '/v2.0/extensions')
          return send(res, 200, { extensions: extensions.map((alias) => ({ alias, name: alias, description: '' })) });
        seen.push(s);
        handle(s, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const cloud: CloudConfig = {
      name: 't',
      source: 'test',
      auth: { type: 'none' },
      interface: 'public',
      insecure: false,
      endpointOverrides: { network: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` },
    };
    session = new OpenStackSession({ cloud, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } });
  });
  after(async () => {
    await session.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => {
    seen.length = 0;
    extensions = [];
    neutron = new NeutronClient(session);
  });

  it('follows next markers with the original query until the last page', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    handle = (req, res) => {
      const marker = req.query.get('marker');
      const start = marker ? ids.indexOf(marker) + 1 : 0;
      const page = ids.slice(start, start + 2).map((id) => ({ id, name: `n-${id}` }));
      const links =
        page.length === 2
          ? [{ rel: 'next', href: `http://elsewhere:1/v2.0/networks?limit=2&marker=${page[1]!.id}` }]
          : [];
      send(res, 200, { networks: page, networks_links: links });
    };
    const nets = await neutron.networks.list(
      { 'tags-any': ['x', 'y'] },
      { fields: ['id', 'name'], limit: 2, sortKey: 'name' },
    );
    assert.deepEqual(
      nets.map((n) => n.id),
      ids,
    );
    assert.deepEqual(
      seen.map((s) => s.query.get('marker')),
      [null, 'b', 'd'],
    );
    for (const s of seen) {
      assert.equal(s.path, '/v2.0/networks');
      assert.equal(s.query.get('tags-any'), 'x,y');
      assert.deepEqual(s.query.getAll('fields'), ['id', 'name']);
      assert.equal(s.query.get('limit'), '2');
      assert.equal(s.query.get('sort_key'), 'name');
    }
  });

  it('sends If-Match for a conditional update and surfaces the 412', async () => {
    handle = (req, res) =>
      req.headers['if-match'] === 'revision_number=3'
        ? send(res, 200, { port: { id: 'p', revision_number: 4 } })
        : neutronError(res, 412, 'RevisionNumberConstraintFailed');
    assert.equal((await neutron.ports.update('p', { name: 'x' }, { ifRevision: 3 })).revision_number, 4);
    await assert.rejects(
      neutron.ports.update('p', { name: 'x' }, { ifRevision: 2 }),
      (err) => isOpenStackError(err, 'RevisionNumberConstraintFailed') && err.status === 412,
    );
    assert.deepEqual(seen[0]!.body, { port: { name: 'x' } });
  });

  it('delete: true when deleted, false when already gone, conflicts still throw', async () => {
    handle = (req, res) =>
      req.path.endsWith('/gone')
        ? neutronError(res, 404, 'NetworkNotFound')
        : req.path.endsWith('/busy')
          ? neutronError(res, 409, 'NetworkInUse')
          : send(res, 204, undefined);
    assert.equal(await neutron.networks.delete('n'), true);
    assert.equal(await neutron.networks.delete('gone'), false);
    await assert.rejects(neutron.networks.delete('busy'), (err) => isOpenStackError(err, 'NetworkInUse'));
  });

  it('never retries a router interface PUT, but retries a plain update', async () => {
    handle = (_req, res) =>
      send(res, 503, { NeutronError: { type: 'ServiceUnavailable', message: 'busy', detail: '' } });
    await assert.rejects(
      neutron.routers.addInterface('r', { subnetId: 's' }),
      (err) => isOpenStackError(err) && err.status === 503,
    );
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]!.body, { subnet_id: 's' });
    await assert.rejects(neutron.routers.removeInterface('r', { portId: 'p' }));
    assert.equal(seen.length, 2);
    await assert.rejects(neutron.routers.clearGateway('r'));
    assert.equal(seen.length, 5);
    assert.deepEqual(seen[4]!.body, { router: { external_gateway_info: {} } });
  });

  /** Neutron without tags-on-create: a bulk POST makes untagged ports p0, p1… at revision 1; `reread` answers GETs. */
  const tagsAfterCreate =
    (reread: typeof handle): typeof handle =>
    (req, res) => {
      if (req.method === 'POST')
        return send(res, 201, {
          ports: (req.body as { ports: object[] }).ports.map((p, i) => ({
            ...p,
            id: `p${i}`,
            tags: [],
            revision_number: 1,
          })),
        });
      if (req.method === 'PUT') return send(res, 200, { tags: (req.body as { tags: string[] }).tags });
      reread(req, res);
    };

  it('without the extension: creates untagged, tags after, returns the re-read ports', async () => {
    handle = tagsAfterCreate((req, res) => {
      const ids = req.query.getAll('id');
      send(res, 200, {
        ports: ids.map((id) => ({ id, tags: id === 'p0' ? ['a'] : [], revision_number: id === 'p0' ? 2 : 1 })),
      });
    });
    const ports = await neutron.ports.createBulk([{ network_id: 'n', tags: ['a'] }, { network_id: 'n' }]);
    assert.deepEqual(
      ports.map((p) => [p.id, p.tags, p.revision_number]),
      [
        ['p0', ['a'], 2],
        ['p1', [], 1],
      ],
    );
    assert.deepEqual(seen[0]!.body, { ports: [{ network_id: 'n' }, { network_id: 'n' }] });
    assert.deepEqual(
      seen.slice(1).map((s) => `${s.method} ${s.path}`),
      ['PUT /v2.0/ports/p0/tags', 'GET /v2.0/ports'],
    );
    assert.ok(Number(seen[0]!.headers['content-length']) > 0);
  });

  it('without the extension, the re-read failing: the tagged ports come back all the same, one revision on', async () => {
    handle = tagsAfterCreate((_req, res) =>
      send(res, 503, { NeutronError: { type: 'ServiceUnavailable', message: 'busy', detail: '' } }),
    );
    const ports = await neutron.ports.createBulk([{ network_id: 'n', tags: ['a'] }, { network_id: 'n' }]);
    assert.deepEqual(
      ports.map((p) => [p.id, p.tags, p.revision_number]),
      [
        ['p0', ['a'], 2],
        ['p1', [], 1],
      ],
    );
    // The GET retried as a read does, then given up; nothing deleted.
    assert.deepEqual(
      [...new Set(seen.map((s) => `${s.method} ${s.path}`))],
      ['POST /v2.0/ports', 'PUT /v2.0/ports/p0/tags', 'GET /v2.0/ports'],
    );
  });

  it('without the extension and reread: false: tags after, no re-read', async () => {
    handle = (req, res) => {
      if (req.method === 'POST')
        return send(res, 201, {
          port: { ...(req.body as { port: object }).port, id: 'p7', tags: [], revision_number: 1 },
        });
      send(res, 200, { tags: (req.body as { tags: string[] }).tags });
    };
    const port = await neutron.ports.create({ network_id: 'n', tags: ['a', 'b'] }, { reread: false });
    assert.deepEqual([port.id, port.tags, port.revision_number], ['p7', ['a', 'b'], 1]);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      ['POST /v2.0/ports', 'PUT /v2.0/ports/p7/tags'],
    );
  });

  it('without the extension: a failed tagging deletes the new ports and rethrows', async () => {
    handle = (req, res) => {
      if (req.method === 'POST')
        return send(res, 201, { port: { ...(req.body as { port: object }).port, id: 'p9', tags: [] } });
      if (req.method === 'PUT') return neutronError(res, 400, 'HTTPBadRequest');
      send(res, 204, undefined);
    };
    await assert.rejects(
      neutron.ports.create({ network_id: 'n', tags: ['x'.repeat(300)] }),
      (err) => isOpenStackError(err) && err.status === 400,
    );
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      ['POST /v2.0/ports', 'PUT /v2.0/ports/p9/tags', 'DELETE /v2.0/ports/p9'],
    );
  });

  it('with tag-ports-during-bulk-creation: tags go in the POST, nothing else is sent', async () => {
    extensions = ['standard-attr-tag', 'tag-ports-during-bulk-creation'];
    handle = (req, res) => send(res, 201, { port: { ...(req.body as { port: object }).port, id: 'p1' } });
    const port = await neutron.ports.create({ network_id: 'n', name: 'p', tags: ['a', 'b'] });
    assert.deepEqual(port.tags, ['a', 'b']);
    assert.deepEqual(
      seen.map((s) => s.body),
      [{ port: { network_id: 'n', name: 'p', tags: ['a', 'b'] } }],
    );
    assert.equal(await neutron.supports('tag-ports-during-bulk-creation'), true);
    assert.equal(await neutron.supports('nope'), false);
  });

  it('reports an answer of the wrong shape as OPENSTACK_BAD_RESPONSE', async () => {
    handle = (_req, res) => send(res, 200, { something: [] });
    await assert.rejects(
      neutron.subnets.list(),
      (err) => isOpenStackError(err) && err.code === 'OPENSTACK_BAD_RESPONSE',
    );
    await assert.rejects(
      neutron.quotas.get('p'),
      (err) => isOpenStackError(err) && err.code === 'OPENSTACK_BAD_RESPONSE',
    );
  });

  it('tags: has/remove are false for a missing tag, but a missing resource still throws', async () => {
    handle = (req, res) =>
      req.path.includes('/gone/')
        ? neutronError(res, 404, 'TagResourceNotFound')
        : neutronError(res, 404, 'TagNotFound');
    assert.equal(await neutron.tags.has('networks', 'n', 'k8s-ns=a'), false);
    assert.equal(await neutron.tags.remove('networks', 'n', 'k8s-ns=a'), false);
    await assert.rejects(neutron.tags.has('networks', 'gone', 't'), (err) =>
      isOpenStackError(err, 'TagResourceNotFound'),
    );
    assert.equal(seen[0]!.path, '/v2.0/networks/n/tags/k8s-ns=a');
  });

  it("a priority flows to the session's limit: a claim is answered while refills' tag PUTs fill every slot they may", async () => {
    const held: ServerResponse[] = [];
    let created = 0;
    handle = (req, res) => {
      if (req.method === 'POST') {
        const ports = (req.body as { ports: object[] }).ports.map((p) => ({ ...p, id: `pool${created++}` }));
        return send(res, 201, { ports });
      }
      if (req.path.endsWith('/tags')) return void held.push(res);
      if (req.method === 'PUT') return send(res, 200, { port: { id: 'claimed', revision_number: 4 } });
      send(res, 200, { ports: [] });
    };
    // Ten refills of the default limit of 8: their tag PUTs hold 6 slots (2 are kept for critical requests), 4 wait.
    const refills = Array.from({ length: 10 }, () =>
      neutron.ports.createBulk([{ network_id: 'n', tags: ['raven'] }], { priority: 'background', reread: false }),
    );
    while (held.length < 6) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(held.length, 6, 'background requests in flight stop at 8 − 2');
    const claim = neutron.ports.update('claimed', { device_id: 'pod' }, { ifRevision: 3, priority: 'critical' });
    const timeout = new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 10_000).unref());
    const outcome = await Promise.race([claim.then((p) => p.id), timeout]);
    assert.equal(outcome, 'claimed', 'the claim did not queue behind the refills');
    assert.equal(held.length, 6);
    // The refills finish once their tag PUTs are answered.
    let done = false;
    const all = Promise.all(refills).then((ports) => ((done = true), ports));
    while (!done) {
      for (const res of held.splice(0)) send(res, 200, { tags: ['raven'] });
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal((await all).length, 10);
    assert.equal(seen.filter((r) => r.path.endsWith('/tags')).length, 10);
  });
});
