import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { Registry } from 'prom-client';
import { HealthChecks } from '../controller/index.ts';
import type { RunningHttpServer } from './http-server.ts';
import { createMetrics } from './metrics.ts';
import { listenOps } from './ops-server.ts';

describe('ops server, as a kubelet or Prometheus sees it', () => {
  const state = { leading: false };
  const health = new HealthChecks({ timeoutMs: 1_000 });
  health.add('healthz', 'ping', () => undefined);
  health.add('healthz', 'workers', () => undefined);
  health.add('readyz', 'informers-synced', () => undefined);
  health.add('readyz', 'leader', () => (state.leading ? undefined : 'not leading'));
  health.add('readyz', 'openstack', () => {
    throw new Error('keystone unreachable');
  });
  const { registry } = createMetrics(new Registry(), { defaultMetrics: false });
  let server: RunningHttpServer;
  before(async () => {
    server = await listenOps({ port: 0, health, registry });
  });
  after(() => server.close());

  async function get(path: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
    const res = await fetch(`${server.url}${path}`, init);
    return { status: res.status, body: await res.text(), headers: res.headers };
  }

  it('binds loopback by default', () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers 200 ok on /healthz and /livez when every check passes, as plain text', async () => {
    for (const path of ['/healthz', '/livez']) {
      const res = await get(path);
      assert.equal(res.status, 200);
      assert.equal(res.body, 'ok');
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    }
  });

  it('lists every check with ?verbose', async () => {
    assert.deepEqual(await pick(get('/healthz?verbose')), [200, '[+]ping ok\n[+]workers ok\nhealthz check passed\n']);
    assert.deepEqual(await pick(get('/livez?verbose=1')), [200, '[+]ping ok\n[+]workers ok\nlivez check passed\n']);
  });

  it('answers 500 listing the checks, with the failing ones and why, when any fails', async () => {
    const res = await get('/readyz');
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(
      res.body,
      '[+]informers-synced ok\n[-]leader failed: not leading\n[-]openstack failed: keystone unreachable\nreadyz check failed\n',
    );
  });

  it('skips the checks named by ?exclude (repeatable), and says which it skipped and which matched nothing', async () => {
    assert.equal((await get('/readyz?exclude=openstack')).status, 500, 'leader still fails');
    const res = await get('/readyz?exclude=openstack&exclude=leader');
    assert.deepEqual([res.status, res.body], [200, 'ok']);
    const verbose = await get('/readyz?exclude=leader&exclude=openstack&exclude=nope&verbose');
    assert.equal(verbose.status, 200);
    assert.equal(
      verbose.body,
      '[+]informers-synced ok\n[+]leader excluded: ok\n[+]openstack excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n',
    );
  });

  it('runs one check at /<endpoint>/<name>, and 404s a name that is not registered', async () => {
    assert.deepEqual(await pick(get('/readyz/informers-synced')), [200, 'ok']);
    assert.deepEqual(await pick(get('/readyz/leader')), [500, 'internal server error: not leading\n']);
    state.leading = true;
    assert.deepEqual(await pick(get('/readyz/leader')), [200, 'ok']);
    assert.deepEqual(await pick(get('/healthz/ping')), [200, 'ok']);
    assert.deepEqual(await pick(get('/livez/workers')), [200, 'ok']);
    assert.deepEqual(
      await pick(get('/healthz/leader')),
      [404, '404 page not found\n'],
      'a readyz check is not a healthz check',
    );
    assert.deepEqual(await pick(get('/readyz/nope')), [404, '404 page not found\n']);
    assert.deepEqual(await pick(get('/readyz/%zz')), [404, '404 page not found\n']);
  });

  it('serves the registry at /metrics in the Prometheus text format', async () => {
    const res = await get('/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), registry.contentType);
    assert.match(res.body, /^# TYPE workqueue_adds_total counter$/m);
  });

  it('404s other paths, 405s other methods, and answers HEAD without a body', async () => {
    for (const path of ['/', '/nope', '/healthz/', '/metrics/', '/metrics/x', '/readyz/leader/x', '/healthzz']) {
      assert.deepEqual(await pick(get(path)), [404, '404 page not found\n'], path);
    }
    const post = await get('/healthz', { method: 'POST', body: 'x' });
    assert.deepEqual([post.status, post.headers.get('allow')], [405, 'GET, HEAD']);
    assert.equal((await get('/metrics', { method: 'DELETE' })).status, 405);
    const head = await get('/healthz', { method: 'HEAD' });
    assert.deepEqual([head.status, head.body], [200, '']);
  });
});

async function pick(res: Promise<{ status: number; body: string }>): Promise<[number, string]> {
  const { status, body } = await res;
  return [status, body];
}
