/**
 * The topology view's API as a browser or a tool reaches it: the ops server with the view on, over real HTTP on
 * loopback. Time is a FakeClock, so each change check runs when the test says (no timing is asserted).
 */
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { FakeClock } from '../core/index.ts';
import { HealthChecks } from '../controller/index.ts';
import {
  createTopologyApp,
  TOPOLOGY_VERSION,
  type TopologyApp,
  type TopologySnapshot,
  type TopologySource,
} from '../dashboard/index.ts';
import { crossFieldProblems } from './config/checks.ts';
import type { RunningHttpServer } from './http-server.ts';
import { createMetrics } from './metrics.ts';
import { listenOps } from './ops-server.ts';

const TOKEN = 'a-token-of-enough-length-0123456789';

/** A source whose pods the test changes: what the modules' records would hold. */
function source(clock: FakeClock): TopologySource & { pods: string[] } {
  const pods: string[] = ['web-1'];
  return {
    pods,
    snapshot: (): TopologySnapshot => ({
      version: TOPOLOGY_VERSION,
      generatedAt: new Date(clock.now()).toISOString(),
      cluster: { clusterId: 'c', ready: true, podSubnets: [], serviceSubnets: [], subnetStrategy: 'namespace' },
      namespaces: [
        {
          name: 'demo',
          uid: 'u',
          pods: pods.map((name) => ({ name, uid: `uid-${name}` })),
          services: [],
          policies: [],
        },
      ],
      securityGroups: [],
      pools: [],
      stuck: 0,
    }),
    detail: (kind, namespace, name) =>
      kind === 'pod' && namespace === 'demo' && pods.includes(name)
        ? { kind, kubernetes: { metadata: { name } }, record: { id: `port-${name}` } }
        : undefined,
  };
}

/** Reads Server-Sent Events from a response body, one `data` at a time. */
function events(res: Response): () => Promise<TopologySnapshot> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return async () => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        assert.match(event, /^event: snapshot\ndata: /);
        return JSON.parse(event.slice(event.indexOf('data: ') + 6)) as TopologySnapshot;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      buffer += value;
    }
  };
}

const podNames = (s: TopologySnapshot): string[] => s.namespaces[0]!.pods.map((p) => p.name);

async function serve(options: { token?: string; maxClients?: number }) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const src = source(clock);
  const topology: TopologyApp = createTopologyApp({
    source: src,
    assets: () => Promise.resolve({ 'index.html': '<html>page</html>', 'app.js': 'js', 'app.css': 'css' }),
    clock,
    intervalMs: 500,
    ...options,
  });
  const { registry } = createMetrics(new Registry(), { defaultMetrics: false });
  const server = await listenOps({ port: 0, health: new HealthChecks({ timeoutMs: 1_000 }), registry, topology });
  return { clock, src, topology, server };
}

describe('topology API on the ops server, over HTTP', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let server: RunningHttpServer;
  const streams: AbortController[] = [];
  before(async () => {
    s = await serve({ maxClients: 2 });
    server = s.server;
  });
  after(async () => {
    for (const c of streams) c.abort();
    s.topology.close();
    await server.close();
  });
  const open = async (): Promise<Response> => {
    const c = new AbortController();
    streams.push(c);
    return fetch(`${server.url}/topology/api/events`, { signal: c.signal });
  };

  it('serves the page and its bundle, and the snapshot as JSON', async () => {
    const page = await fetch(`${server.url}/topology/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(await page.text(), '<html>page</html>');
    assert.equal((await fetch(`${server.url}/topology`, { redirect: 'manual' })).headers.get('location'), '/topology/');
    const snap = await fetch(`${server.url}/topology/api/snapshot`);
    assert.equal(snap.headers.get('content-type'), 'application/json; charset=utf-8');
    const body = (await snap.json()) as TopologySnapshot;
    assert.equal(body.version, TOPOLOGY_VERSION);
    assert.deepEqual(podNames(body), ['web-1']);
  });

  it('streams a snapshot at once, then one per change, coalesced; nothing when nothing changed', async () => {
    const res = await open();
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const next = events(res);
    assert.deepEqual(podNames(await next()), ['web-1']);
    // Two changes within one interval: one event, with both.
    s.src.pods.push('web-2');
    s.src.pods.push('web-3');
    s.clock.advance(500);
    assert.deepEqual(podNames(await next()), ['web-1', 'web-2', 'web-3']);
    // An interval without a change sends nothing: the next event is the next change's.
    s.clock.advance(500);
    s.src.pods.splice(0, 1);
    s.clock.advance(500);
    assert.deepEqual(podNames(await next()), ['web-2', 'web-3']);
  });

  it('refuses a stream past maxClients (503), and takes one again once a client left', async () => {
    assert.equal((await open()).status, 200);
    const full = await fetch(`${server.url}/topology/api/events`);
    assert.equal(full.status, 503);
    assert.equal(full.headers.get('retry-after'), '5');
    streams.shift()!.abort();
    const again = await waitStatus(() => open(), 200);
    assert.equal(again, 200);
  });

  it('shows one object and its record; 404 for unknown objects, kinds, names and paths; 405 for writes', async () => {
    const pod = await fetch(`${server.url}/topology/api/object/pod/demo/web-2`);
    assert.deepEqual(await pod.json(), {
      kind: 'pod',
      kubernetes: { metadata: { name: 'web-2' } },
      record: { id: 'port-web-2' },
    });
    for (const path of [
      'api/object/pod/demo/nope',
      'api/object/secret/demo/web-2',
      'api/object/pod/demo/UPPER',
      `api/object/pod/demo/${'a'.repeat(300)}`,
      'api/object/pod/demo/web-2/extra',
      'api/object/namespace/demo/x',
      'api/nothing',
      'app.js/x',
      'secrets',
    ]) {
      const res = await fetch(`${server.url}/topology/${path}`);
      assert.equal(res.status, 404, path);
      assert.deepEqual(await res.json(), { error: 'not found' }, path);
    }
    const post = await fetch(`${server.url}/topology/api/snapshot`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    // The ops endpoints are unchanged beside it.
    assert.equal((await fetch(`${server.url}/metrics/`)).status, 404);
  });
});

describe('topology API behind a bearer token', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    s = await serve({ token: TOKEN });
  });
  after(async () => {
    s.topology.close();
    await s.server.close();
  });

  it('answers the API only with the token; the page (no data in it) without', async () => {
    const url = `${s.server.url}/topology/api/snapshot`;
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, 'Bearer ']) {
      const res = await fetch(url, { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, authorization);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assert.doesNotMatch(await res.text(), /web-1/);
    }
    for (const path of ['api/events', 'api/object/pod/demo/web-1']) {
      assert.equal((await fetch(`${s.server.url}/topology/${path}`)).status, 401, path);
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.deepEqual(podNames((await ok.json()) as TopologySnapshot), ['web-1']);
    assert.equal((await fetch(`${s.server.url}/topology/`)).status, 200);
  });

  it('is required by the configuration when the view is served off loopback', () => {
    const problems = (ops: object) =>
      crossFieldProblems({ ops }).filter((p) => p.path.join('.') === 'ops.topologyTokenFile');
    assert.equal(problems({ topology: true, host: '0.0.0.0' }).length, 1);
    assert.equal(problems({ topology: true, host: '0.0.0.0', topologyTokenFile: '/run/token' }).length, 0);
    assert.equal(problems({ topology: true, host: '127.0.0.1' }).length, 0);
    assert.equal(problems({ topology: false, host: '0.0.0.0' }).length, 0);
  });
});

/** The status `attempt` answers, retried while it is not `want` (a client that left is dropped asynchronously). */
async function waitStatus(attempt: () => Promise<Response>, want: number): Promise<number> {
  let status = 0;
  for (let i = 0; i < 100 && status !== want; i++) {
    const res = await attempt();
    status = res.status;
    if (status !== want) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return status;
}
