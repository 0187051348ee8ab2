import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, silentLogger, type Logger } from '../../core/index.ts';

import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import type { ClusterConnection } from './connection.ts';
import { isInternalError, isNotFound, isServiceUnavailable, isUnauthorized, KubeTransportError } from './errors.ts';
import { resources } from './paths.ts';
import { KubeClient } from './rest.ts';

const NS = 'transport-test';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: {} });

interface Rule {
  path: string;
  method?: string;
  count: number;
}

describe('the transport: retries, rate limit, credentials, TLS', { timeout: 60_000 }, () => {
  let server: TestServer;
  let connection: ClusterConnection;
  let client: KubeClient;
  const signal = AbortSignal.timeout(55_000);

  async function addRule(rule: Record<string, unknown>): Promise<void> {
    const res = await server.request('/_raven/faults/rules', {
      method: 'POST',
      body: JSON.stringify(rule),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 201);
  }
  async function rules(): Promise<Rule[]> {
    return ((await (await server.request('/_raven/faults/rules')).json()) as { rules: Rule[] }).rules;
  }

  before(async () => {
    server = await startTestServer();
    connection = {
      server: server.url,
      ca: server.caPem!,
      source: 'test',
      credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
    };
    client = new KubeClient({ connection });
    await client.create(
      resources.namespaces,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { signal },
    );
    await client.create(resources.configmaps, cm('target'), { signal });
  });
  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('a GET failing twice with 503 + Retry-After succeeds on the third attempt', async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps/target`;
    await addRule({ path, method: 'GET', count: 2, status: 503, retryAfterSeconds: 1 });
    const got = await client.get(resources.configmaps, 'target', NS, { signal });
    assert.equal(got.metadata.name, 'target');
    // Both failures were consumed: the server saw three GETs.
    assert.deepEqual(
      (await rules()).filter((r) => r.path === path),
      [],
    );
  });

  it('a POST with the same fault fails at once (no retry)', async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps`;
    await addRule({ path, method: 'POST', count: 2, status: 503, retryAfterSeconds: 1 });
    await assert.rejects(client.create(resources.configmaps, cm('once'), { signal }), isServiceUnavailable);
    assert.deepEqual(
      (await rules()).filter((r) => r.path === path).map((r) => r.count),
      [1],
    );
    await server.request('/_raven/faults/rules', { method: 'DELETE' });
    await assert.rejects(client.get(resources.configmaps, 'once', NS, { signal }), isNotFound);
  });

  it('retries are bounded by maxAttempts', async () => {
    const bounded = new KubeClient({ connection, retry: { maxAttempts: 3, maxDelayMs: 20 } });
    try {
      const path = `/api/v1/namespaces/${NS}/configmaps/target`;
      await addRule({ path, method: 'GET', count: 10, status: 500 });
      await assert.rejects(bounded.get(resources.configmaps, 'target', NS, { signal }), isInternalError);
      assert.deepEqual(
        (await rules()).filter((r) => r.path === path).map((r) => r.count),
        [7],
      );
    } finally {
      await server.request('/_raven/faults/rules', { method: 'DELETE' });
      await bounded.close();
    }
  });

  it('every request takes a token first: with qps 1, burst 1 the second waits for the clock', async () => {
    const clock = new FakeClock(1_000_000);
    const limited = new KubeClient({ connection, qps: 1, burst: 1, clock });
    try {
      await assert.rejects(limited.get(resources.configmaps, 'late', NS, { signal }), isNotFound);
      const second = limited.get(resources.configmaps, 'late', NS, { signal });
      // The second request is parked on the bucket's timer, not sent: create the object meanwhile, then release it.
      assert.equal(clock.pending, 1);
      await client.create(resources.configmaps, cm('late'), { signal });
      clock.advance(999);
      assert.equal(clock.pending, 1);
      clock.advance(1);
      assert.equal((await second).metadata.name, 'late');
      assert.equal(limited.bucket.tryTake(), false);
    } finally {
      await limited.close();
    }
  });

  it('logs one debug line per request, without credentials', async () => {
    const lines: { obj: Record<string, unknown>; msg: string | undefined }[] = [];
    const logger: Logger = {
      ...silentLogger,
      debug: (obj, msg) => void lines.push({ obj: obj as Record<string, unknown>, msg }),
    };
    const logged = new KubeClient({ connection, logger });
    try {
      await logged.get(resources.configmaps, 'target', NS, { signal });
      assert.equal(lines.length, 1);
      assert.deepEqual(Object.keys(lines[0]!.obj).sort(), ['method', 'ms', 'path', 'status']);
      assert.equal(lines[0]!.obj.status, 200);
      assert.ok(!JSON.stringify(lines).includes(server.token));
    } finally {
      await logged.close();
    }
  });

  it('a wrong token is Unauthorized', async () => {
    const wrong = new KubeClient({
      connection: { ...connection, credentials: () => Promise.resolve({ kind: 'bearer', token: 'wrong' }) },
    });
    try {
      await assert.rejects(wrong.get(resources.configmaps, 'target', NS, { signal }), isUnauthorized);
    } finally {
      await wrong.close();
    }
  });

  it('an untrusted CA is KUBE_UNREACHABLE with the TLS error as cause; insecureSkipTlsVerify connects', async () => {
    const { ca: _ca, ...untrusted } = connection;
    const c1 = new KubeClient({ connection: untrusted });
    try {
      await assert.rejects(c1.get(resources.configmaps, 'target', NS, { signal }), (e) => {
        assert.ok(e instanceof KubeTransportError);
        assert.equal(e.code, 'KUBE_UNREACHABLE');
        assert.match(String((e.cause as { code?: string }).code), /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
        return true;
      });
    } finally {
      await c1.close();
    }
    const c2 = new KubeClient({ connection: { ...untrusted, insecureSkipTlsVerify: true } });
    try {
      assert.equal((await c2.get(resources.configmaps, 'target', NS, { signal })).metadata.name, 'target');
    } finally {
      await c2.close();
    }
  });

  it('a closed port is KUBE_UNREACHABLE after bounded retries', async () => {
    const c = new KubeClient({
      connection: { ...connection, server: 'https://127.0.0.1:1' },
      retry: { maxAttempts: 2, maxDelayMs: 10 },
    });
    try {
      await assert.rejects(
        c.get(resources.configmaps, 'target', NS, { signal }),
        (e) => e instanceof KubeTransportError && /ECONNREFUSED/.test(e.message + String((e.cause as Error).message)),
      );
    } finally {
      await c.close();
    }
  });

  it('goes through proxyUrl (an HTTP CONNECT proxy) when the connection names one', async () => {
    const tunnels: string[] = [];
    const proxy: Server = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: { url?: string }, socket: Duplex, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = new KubeClient({
      connection: { ...connection, proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    });
    try {
      assert.equal((await proxied.get(resources.configmaps, 'target', NS, { signal })).metadata.name, 'target');
      assert.deepEqual(tunnels, [new URL(server.url).host]);
    } finally {
      await proxied.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('an aborted signal rejects with the abort reason', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await assert.rejects(client.get(resources.configmaps, 'target', NS, { signal: ac.signal }), /stop/);
  });
});
