import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import type { CloudConfig } from '../config/types.ts';
import { OpenStackError } from '../errors.ts';
import { OpenStackSession } from '../session.ts';
import { OctaviaClient, isImmutable, parseVersionDocument, provisioningState } from './index.ts';

function octaviaError(
  status: number,
  message: string,
  service: 'load-balancer' | 'network' = 'load-balancer',
): OpenStackError {
  return new OpenStackError(
    { service, method: 'PUT', path: '/v2/lbaas/loadbalancers/x', status, type: '', requestId: undefined },
    message,
  );
}

describe('provisioningState', () => {
  it('folds Octavia statuses into what a reconciler acts on', () => {
    assert.deepEqual(provisioningState({ provisioning_status: 'ACTIVE' }), { state: 'ACTIVE', status: 'ACTIVE' });
    for (const s of ['PENDING_CREATE', 'PENDING_UPDATE', 'PENDING_DELETE', 'SOMETHING_NEW'])
      assert.equal(provisioningState({ provisioning_status: s }).state, 'PENDING');
    assert.deepEqual(provisioningState({ provisioning_status: 'ERROR' }), { state: 'ERROR', status: 'ERROR' });
    assert.deepEqual(provisioningState({ provisioning_status: 'DELETED' }), { state: 'DELETED', status: 'DELETED' });
    assert.deepEqual(provisioningState(undefined), { state: 'DELETED', status: 'DELETED' });
  });
});

describe('isImmutable', () => {
  it('recognises both "busy" 409s and nothing else', () => {
    assert.ok(isImmutable(octaviaError(409, 'Invalid state PENDING_UPDATE of loadbalancer resource 0b0c')));
    assert.ok(isImmutable(octaviaError(409, 'Load Balancer 0b0c is immutable and cannot be updated.')));
    assert.ok(isImmutable(octaviaError(409, 'Pool 0b0c is immutable and cannot be updated.')));
    assert.ok(
      !isImmutable(octaviaError(409, 'Another Listener on this Load Balancer is already using protocol_port 80')),
    );
    assert.ok(!isImmutable(octaviaError(400, 'Invalid state PENDING_UPDATE of loadbalancer resource 0b0c')));
    assert.ok(!isImmutable(octaviaError(409, 'Invalid state PENDING_UPDATE of loadbalancer resource 0b0c', 'network')));
    assert.ok(!isImmutable(new Error('Invalid state PENDING_UPDATE of loadbalancer resource')));
  });
});

describe('parseVersionDocument', () => {
  it('takes the CURRENT v2 minor version and gates features on it', () => {
    const doc = {
      versions: ['v2.0', 'v2.4', 'v2.5', 'v2.26'].map((id, i, all) => ({
        id,
        status: i === all.length - 1 ? 'CURRENT' : 'SUPPORTED',
        links: [],
      })),
    };
    const v = parseVersionDocument(doc);
    assert.ok(v);
    assert.equal(v.current.id, 'v2.26');
    assert.equal(v.minor, 26);
    assert.ok(v.supports('tags') && v.supports('additionalVips'));
    const old = parseVersionDocument({
      versions: [
        { id: 'v2.0', status: 'SUPPORTED' },
        { id: 'v2.4', status: 'CURRENT' },
        { id: 'v1', status: 'DEPRECATED' },
      ],
    });
    assert.equal(old?.minor, 4);
    assert.equal(old?.supports('tags'), false);
    assert.equal(parseVersionDocument({ versions: [{ id: 'v1', status: 'CURRENT' }] }), undefined);
    assert.equal(parseVersionDocument('nope'), undefined);
  });
});

/** A scripted Octavia on port 0: the client's paging and wire shapes, checked on a real socket. */
describe('OctaviaClient on the wire', () => {
  let server: Server;
  let client: OctaviaClient;
  let session: OpenStackSession;
  const urls: string[] = [];
  const bodies: string[] = [];
  const projects: (string | undefined)[] = [];

  before(async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        urls.push(`${req.method} ${req.url}`);
        bodies.push(body);
        projects.push(req.headers['x-project-id'] as string | undefined);
        const url = new URL(req.url ?? '/', 'http://x');
        const send = (status: number, value?: unknown): void => {
          res
            .writeHead(status, { 'content-type': 'application/json' })
            .end(value === undefined ? '' : JSON.stringify(value));
        };
        if (url.pathname === '/')
          return send(200, {
            versions: [
              { id: 'v2.0', status: 'SUPPORTED' },
              { id: 'v2.26', status: 'CURRENT' },
            ],
          });
        if (url.pathname === '/v2/lbaas/loadbalancers' && req.method === 'GET') {
          // Like Octavia: the next link keeps limit but drops the filters.
          const limit = Number(url.searchParams.get('limit') ?? 1000);
          const marker = url.searchParams.get('marker');
          const start = marker ? ids.indexOf(marker) + 1 : 0;
          const page = ids.slice(start, start + limit).map((id) => ({ id, provisioning_status: 'ACTIVE' }));
          const links =
            page.length >= limit
              ? [{ rel: 'next', href: `http://x/v2/lbaas/loadbalancers?limit=${limit}&marker=${page.at(-1)?.id}` }]
              : [];
          return send(200, { loadbalancers: page, loadbalancers_links: links });
        }
        if (url.pathname === '/v2/lbaas/loadbalancers/gone')
          return send(404, { faultcode: 'Client', faultstring: 'Load Balancer gone not found.', debuginfo: null });
        if (url.pathname === '/v2/lbaas/pools/p1/members' && req.method === 'PUT') return send(202);
        if (url.pathname === '/v2/lbaas/loadbalancers/busy')
          return send(409, {
            faultcode: 'Client',
            faultstring: 'Invalid state PENDING_UPDATE of loadbalancer resource busy',
            debuginfo: null,
          });
        send(500, { faultstring: 'unexpected' });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const cloud: CloudConfig = {
      name: 'wire',
      source: 'test',
      auth: { type: 'none' },
      interface: 'public',
      insecure: false,
      projectId: 'proj-1',
      endpointOverrides: { 'load-balancer': `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2.0/` },
    };
    session = new OpenStackSession({ cloud, retry: { maxAttempts: 1 } });
    client = new OctaviaClient(session);
  });

  after(async () => {
    await session.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('follows next links by marker, keeping its own filters', async () => {
    urls.length = 0;
    const all = await client.loadBalancers.list({ tags: ['a', 'b'], limit: 2, fields: ['id', 'provisioning_status'] });
    assert.deepEqual(
      all.map((lb) => lb.id),
      ['a', 'b', 'c', 'd', 'e'],
    );
    assert.equal(urls.length, 3);
    for (const u of urls) assert.match(u, /tags=a%2Cb&limit=2&fields=id&fields=provisioning_status/);
    assert.match(urls[2] ?? '', /marker=d$/);
  });

  it('reads the version document once, at the endpoint root without its version suffix', async () => {
    urls.length = 0;
    projects.length = 0;
    const v = await client.versions();
    assert.equal(v.current.id, 'v2.26');
    await client.versions();
    assert.deepEqual(urls, ['GET /']);
    assert.deepEqual(projects, ['proj-1'], 'without Keystone the project goes in X-Project-Id');
  });

  it('maps 404 to find → undefined and delete → false, and keeps other errors', async () => {
    assert.equal(await client.loadBalancers.find('gone'), undefined);
    assert.equal(await client.loadBalancers.delete('gone', { cascade: true }), false);
    await assert.rejects(
      client.loadBalancers.get('gone'),
      (err: unknown) =>
        err instanceof OpenStackError && err.status === 404 && /Load Balancer gone not found/.test(err.message),
    );
    await assert.rejects(client.loadBalancers.update('busy', { name: 'x' }), (err: unknown) => isImmutable(err));
  });

  it('sends a batch member update as PUT {"members": [...]} and accepts 202 without a body', async () => {
    urls.length = 0;
    bodies.length = 0;
    await client.members.batchUpdate('p1', [{ address: '10.0.0.5', protocol_port: 80 }], { additiveOnly: true });
    assert.deepEqual(urls, ['PUT /v2/lbaas/pools/p1/members?additive_only=true']);
    assert.deepEqual(JSON.parse(bodies[0] ?? ''), { members: [{ address: '10.0.0.5', protocol_port: 80 }] });
  });
});
