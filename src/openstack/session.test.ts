import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from '../../test/support/node-test.ts';
import { FakeClock, RavenError, errorMessage, type Logger } from '../core/index.ts';
import type { CloudConfig } from './config/types.ts';
import { OpenStackError } from './errors.ts';
import { OpenStackSession } from './session.ts';

const PASSWORD = 'pa55-w0rd-secret';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A small real HTTP server playing Keystone (`/identity/v3/auth/tokens`) and a service (`/network/...`) whose answers
 * each test scripts, so the transport's rules are checked on the wire.
 */
describe('OpenStackSession over real HTTP', () => {
  let server: Server;
  let base = '';
  const seen: Seen[] = [];
  let tokens = 0;
  let tokenLifetimeMs = 3_600_000;
  let script: ((req: Seen, res: ServerResponse) => void) | undefined;
  let inFlight = 0;
  let maxInFlight = 0;

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        seen.push(s);
        if (s.url === '/identity/v3/auth/tokens') {
          const auth = (JSON.parse(body) as { auth: { identity: { password?: { user: { password: string } } } } }).auth;
          if (auth.identity.password?.user.password !== PASSWORD)
            return json(res, 401, {
              error: {
                code: 401,
                title: 'Unauthorized',
                message: 'The request you have made requires authentication.',
              },
            });
          const now = Date.now();
          res.setHeader('x-subject-token', `tok-${++tokens}`);
          return json(res, 201, {
            token: {
              issued_at: new Date(now).toISOString(),
              expires_at: new Date(now + tokenLifetimeMs).toISOString(),
              project: { id: 'p1' },
              user: { id: 'u1' },
              catalog: [
                {
                  type: 'network',
                  endpoints: [
                    { interface: 'public', region_id: 'RegionOne', region: 'RegionOne', url: `${base}/network/` },
                    {
                      interface: 'internal',
                      region_id: 'RegionOne',
                      region: 'RegionOne',
                      url: `${base}/internal-network`,
                    },
                  ],
                },
              ],
            },
          });
        }
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        res.on('close', () => inFlight--);
        if (script) script(s, res);
        else json(res, 200, { ok: true });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    seen.length = 0;
    script = undefined;
    tokenLifetimeMs = 3_600_000;
    maxInFlight = 0;
  });

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-openstack-request-id': `req-${seen.length}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  }

  const cloud = (over: Partial<CloudConfig> = {}): CloudConfig => ({
    name: 'test',
    source: 'test',
    interface: 'public',
    endpointOverrides: {},
    insecure: false,
    regionName: 'RegionOne',
    auth: {
      type: 'password',
      authUrl: `${base}/identity/v3`,
      username: 'admin',
      password: PASSWORD,
      userDomainName: 'Default',
      projectName: 'admin',
      projectDomainName: 'Default',
    },
    ...over,
  });
  const serviceCalls = () => seen.filter((s) => !s.url.startsWith('/identity'));

  it('authenticates once, sends the token and user agent, and uses the catalog endpoint for the interface', async () => {
    const session = new OpenStackSession({ cloud: cloud() });
    const [a, b] = await Promise.all([
      session.request({
        service: 'network',
        method: 'GET',
        path: '/v2.0/ports',
        query: { fields: ['id', 'name'], device_id: 'uid-1' },
      }),
      session.request({ service: 'network', method: 'GET', path: '/v2.0/networks' }),
    ]);
    assert.deepEqual(a.body, { ok: true });
    assert.equal(b.status, 200);
    assert.equal(
      seen.filter((s) => s.url.startsWith('/identity')).length,
      1,
      'concurrent callers share one token request',
    );
    const call = serviceCalls().find((s) => s.url.startsWith('/network/v2.0/ports'))!;
    assert.equal(call.url, '/network/v2.0/ports?fields=id&fields=name&device_id=uid-1');
    assert.match(String(call.headers['x-auth-token']), /^tok-\d+$/);
    assert.match(String(call.headers['user-agent']), /^raven\/\d+\.\d+\.\d+/);
    const internal = new OpenStackSession({ cloud: cloud({ interface: 'internal' }) });
    await internal.request({ service: 'network', method: 'GET', path: '/v2.0/ports' });
    assert.ok(seen.some((s) => s.url === '/internal-network/v2.0/ports'));
    await Promise.all([session.close(), internal.close()]);
  });

  it('renews the token before it expires, and re-authenticates once on a 401', async () => {
    tokenLifetimeMs = 4_000; // renewed at half its life
    const clock = new FakeClock(Date.now());
    const session = new OpenStackSession({ cloud: cloud(), clock });
    await session.request({ service: 'network', method: 'GET', path: '/v2.0/a' });
    clock.advance(1_900);
    await session.request({ service: 'network', method: 'GET', path: '/v2.0/b' });
    clock.advance(200);
    await session.request({ service: 'network', method: 'GET', path: '/v2.0/c' });
    const tokensUsed = serviceCalls().map((s) => s.headers['x-auth-token']);
    assert.equal(tokensUsed[0], tokensUsed[1]);
    assert.notEqual(tokensUsed[1], tokensUsed[2], 'the token was not renewed before expiry');
    // A revoked token: the service says 401 once, the session gets a new token and sends the request again.
    let rejected = 0;
    script = (s, res) =>
      rejected++ === 0
        ? json(res, 401, { error: { code: 401, title: 'Unauthorized', message: 'expired' } })
        : json(res, 201, { port: { id: 'p' } });
    const res = await session.request({ service: 'network', method: 'POST', path: '/v2.0/ports', body: { port: {} } });
    assert.equal(res.status, 201);
    const posts = serviceCalls().filter((s) => s.method === 'POST');
    assert.equal(posts.length, 2);
    assert.notEqual(posts[0]!.headers['x-auth-token'], posts[1]!.headers['x-auth-token']);
    // Always 401: one re-authentication, then the error.
    script = (s, res) => json(res, 401, { error: { code: 401, title: 'Unauthorized', message: 'nope' } });
    await assert.rejects(
      session.request({ service: 'network', method: 'GET', path: '/v2.0/x' }),
      (err: OpenStackError) => err.code === 'OPENSTACK_UNAUTHORIZED',
    );
    await session.close();
  });

  it('retries idempotent requests on 5xx/429 honouring Retry-After, and never retries a POST', async () => {
    const clock = new FakeClock(Date.now());
    const session = new OpenStackSession({ cloud: cloud(), clock, retry: { maxAttempts: 3 } });
    let n = 0;
    script = (s, res) =>
      ++n < 3
        ? json(
            res,
            n === 1 ? 429 : 503,
            { NeutronError: { type: 'Busy', message: 'try later', detail: '' } },
            { 'retry-after': '7' },
          )
        : json(res, 200, { ports: [] });
    const pending = session.request({ service: 'network', method: 'GET', path: '/v2.0/ports' });
    // Real time passes for the loopback round trips; only the retry delays run on the fake clock.
    const until = async (cond: () => boolean) => {
      for (const deadline = Date.now() + 10_000; !cond(); await new Promise((r) => setTimeout(r, 2)))
        assert.ok(Date.now() < deadline, 'timed out waiting for the session');
    };
    await until(() => clock.pending > 0);
    assert.equal(serviceCalls().length, 1);
    clock.advance(6_999);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(serviceCalls().length, 1, 'retried before Retry-After');
    clock.advance(1);
    await until(() => serviceCalls().length === 2 && clock.pending > 0);
    clock.advance(7_000);
    assert.equal((await pending).status, 200);
    assert.equal(serviceCalls().length, 3);

    seen.length = 0;
    script = (s, res) => json(res, 503, { NeutronError: { type: 'ServiceUnavailable', message: 'busy', detail: '' } });
    await assert.rejects(
      session.request({ service: 'network', method: 'POST', path: '/v2.0/ports', body: { port: {} } }),
      (err: OpenStackError) => err.status === 503 && err.code === 'OPENSTACK_UNAVAILABLE' && err.outage,
    );
    assert.equal(serviceCalls().length, 1, 'a POST was retried');
    await session.close();
  });

  it('turns error bodies into typed errors with the service type, message and request id', async () => {
    const session = new OpenStackSession({ cloud: cloud() });
    script = (s, res) =>
      json(res, 409, {
        NeutronError: {
          type: 'IpAddressAlreadyAllocated',
          message: 'IP address 10.10.0.50 already allocated in subnet S',
          detail: '',
        },
      });
    const err = await session
      .request({ service: 'network', method: 'POST', path: '/v2.0/ports', body: {} })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.code, 'OPENSTACK_CONFLICT');
    assert.equal(err.outage, false, 'a 409 is an answer, not an outage');
    assert.equal(err.type, 'IpAddressAlreadyAllocated');
    assert.equal(err.service, 'network');
    assert.match(err.requestId ?? '', /^req-/);
    assert.equal(
      err.message,
      'network POST /v2.0/ports: 409 IpAddressAlreadyAllocated: IP address 10.10.0.50 already allocated in subnet S',
      'the request id stays out of the message (Events show it; repeats of one failure must read the same)',
    );
    // Logs get it, also through a wrapping error.
    assert.equal(errorMessage(err), `${err.message} (request ${err.requestId})`);
    const wrapped = new RavenError('WRAPPED', `creating the port: ${err.message}`, { cause: err });
    assert.equal(errorMessage(wrapped), `creating the port: ${err.message} (request ${err.requestId})`);
    script = (s, res) =>
      json(res, 409, {
        faultcode: 'Client',
        faultstring: 'Invalid state PENDING_UPDATE of loadbalancer resource x',
        debuginfo: null,
      });
    const octavia = (await session
      .request({ service: 'network', method: 'PUT', path: '/v2.0/x', body: {}, idempotent: false })
      .catch((e: unknown) => e)) as OpenStackError;
    assert.match(octavia.message, /Invalid state PENDING_UPDATE/);
    const wrong = new OpenStackSession({
      cloud: cloud({ auth: { type: 'password', authUrl: `${base}/identity`, username: 'admin', password: 'wrong' } }),
    });
    await assert.rejects(
      wrong.request({ service: 'network', method: 'GET', path: '/v2.0/ports' }),
      /Keystone refused password authentication .*: The request you have made requires authentication/,
    );
    await Promise.all([session.close(), wrong.close()]);
  });

  it('ends a call without a complete answer at its deadline, and at once when the caller aborts', async () => {
    const session = new OpenStackSession({ cloud: cloud(), timeoutMs: 200 });
    const held: ServerResponse[] = [];
    script = (s, res) => void held.push(res); // never answers
    const post = { service: 'network' as const, method: 'POST' as const, path: '/v2.0/ports', body: {} };
    await assert.rejects(
      session.request(post),
      (err: OpenStackError) =>
        err.code === 'OPENSTACK_TIMEOUT' && /no complete response within 200 ms/.test(err.message),
    );
    const caller = new AbortController();
    const aborted = session.request({ ...post, signal: caller.signal });
    const reason = new Error('the reconcile ended');
    setTimeout(() => caller.abort(reason), 20);
    await assert.rejects(aborted, (err) => err === reason);
    // An answer within the deadline is an answer.
    script = (s, res) => setTimeout(() => json(res, 200, { ports: [] }), 50);
    assert.equal((await session.request({ ...post, method: 'GET' })).status, 200);
    for (const res of held) res.destroy();
    await session.close();
  });

  it('caps requests in flight per service, and with auth_type none sends Octavia the project header', async () => {
    const session = new OpenStackSession({
      cloud: cloud({
        auth: { type: 'none' },
        endpointOverrides: { network: `${base}/network`, 'load-balancer': `${base}/lb/` },
        projectId: 'proj-9',
      }),
      concurrency: { network: 3 },
    });
    script = (s, res) => setTimeout(() => json(res, 200, {}), 20);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        session.request({ service: 'network', method: 'GET', path: `/v2.0/ports/${i}` }),
      ),
    );
    assert.equal(maxInFlight, 3);
    script = undefined;
    await session.request({ service: 'load-balancer', method: 'GET', path: '/v2/lbaas/loadbalancers' });
    const lb = serviceCalls().at(-1)!;
    assert.equal(lb.url, '/lb/v2/lbaas/loadbalancers');
    assert.equal(lb.headers['x-project-id'], 'proj-9');
    assert.equal(lb.headers['x-auth-token'], undefined);
    assert.equal(seen.filter((s) => s.url.startsWith('/identity')).length, 0);
    await session.close();
  });

  it('never logs a password or token', async () => {
    const lines: string[] = [];
    const logger: Logger = {
      debug: (o, m) => lines.push(JSON.stringify([o, m])),
      info: (o, m) => lines.push(JSON.stringify([o, m])),
      warn: (o, m) => lines.push(JSON.stringify([o, m])),
      error: (o, m) => lines.push(JSON.stringify([o, m])),
      child: () => logger,
    };
    const session = new OpenStackSession({ cloud: cloud(), logger });
    await session.request({ service: 'network', method: 'GET', path: '/v2.0/ports' });
    script = (s, res) => json(res, 500, { NeutronError: { type: 'X', message: 'boom', detail: '' } });
    await session.request({ service: 'network', method: 'GET', path: '/v2.0/ports' }).catch(() => undefined);
    assert.ok(lines.length >= 3);
    const all = lines.join('\n');
    assert.doesNotMatch(all, new RegExp(PASSWORD));
    assert.doesNotMatch(all, /tok-\d/);
    await session.close();
  });
});
