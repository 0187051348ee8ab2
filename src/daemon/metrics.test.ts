import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/index.ts';
import { HealthChecks, RateLimitingQueue } from '../controller/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../openstack/index.ts';
import type { RunningHttpServer } from './http-server.ts';
import { createMetrics } from './metrics.ts';
import { listenOps } from './ops-server.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../test/support/openstack-sim.ts';

/** Prometheus text → `name{a="1",b="2"}` (labels sorted, so the exporter's label order does not matter) → value. */
function parseSamples(body: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable sample line: ${line}`);
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).sort();
    samples.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, Number(m[3]));
  }
  return samples;
}

async function scrape(
  server: RunningHttpServer,
): Promise<{ contentType: string | null; body: string; samples: Map<string, number> }> {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  const body = await res.text();
  return { contentType: res.headers.get('content-type'), body, samples: parseSamples(body) };
}

describe('createMetrics, scraped over HTTP', () => {
  const { registry, provider } = createMetrics();
  let server: RunningHttpServer;
  before(async () => {
    server = await listenOps({ port: 0, health: new HealthChecks(), registry });
  });
  after(() => server.close());

  it('exports a work queue under client-go names, in seconds', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, metrics: provider.workQueue('q') });
    q.add('a');
    q.add('b');
    q.add('c');
    q.add('a'); // already waiting: not an add
    clock.advance(250);
    await q.get(); // a, after 250 ms in the queue
    await q.get(); // b
    clock.advance(2_000);
    q.updateUnfinishedWork(); // a and b held 2 s each
    q.done('a');
    q.addRateLimited('b'); // a retry, due in 5 ms
    q.done('b');

    const { contentType, body, samples } = await scrape(server);
    assert.equal(contentType, 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(body, /^# TYPE workqueue_depth gauge$/m);
    assert.match(body, /^# TYPE workqueue_queue_duration_seconds histogram$/m);
    assert.equal(samples.get('workqueue_adds_total{name="q"}'), 3);
    assert.equal(samples.get('workqueue_depth{name="q"}'), 1, 'c still waits; b is not due yet');
    assert.equal(samples.get('workqueue_retries_total{name="q"}'), 1);
    assert.equal(samples.get('workqueue_queue_duration_seconds_count{name="q"}'), 2);
    assert.equal(samples.get('workqueue_queue_duration_seconds_sum{name="q"}'), 0.5);
    assert.equal(samples.get('workqueue_queue_duration_seconds_bucket{le="0.1",name="q"}'), 0);
    assert.equal(samples.get('workqueue_queue_duration_seconds_bucket{le="1",name="q"}'), 2);
    assert.equal(
      samples.get('workqueue_queue_duration_seconds_bucket{le="1e-8",name="q"}'),
      0,
      'client-go buckets from 10 ns',
    );
    assert.equal(samples.get('workqueue_queue_duration_seconds_bucket{le="+Inf",name="q"}'), 2);
    assert.equal(samples.get('workqueue_work_duration_seconds_count{name="q"}'), 2);
    assert.equal(samples.get('workqueue_work_duration_seconds_sum{name="q"}'), 4);
    assert.equal(samples.get('workqueue_unfinished_work_seconds{name="q"}'), 4);
    assert.equal(samples.get('workqueue_longest_running_processor_seconds{name="q"}'), 2);
  });

  it('exports reconciles under controller-runtime names, counting a terminal error as an error too', async () => {
    const m = provider.controller('c');
    m.maxConcurrentReconciles?.(2);
    m.activeWorkers?.(1);
    m.reconciled?.('error', 12);
    m.reconciled?.('terminal_error', 30);
    m.reconciled?.('success', 1_500);

    const { samples } = await scrape(server);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="error"}'), 2);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="success"}'), 1);
    // controller-runtime creates the other results at 0, so rate() and absent() work before the first one.
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="requeue"}'), 0);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="requeue_after"}'), 0);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="terminal_error"}'), undefined);
    assert.equal(samples.get('controller_runtime_reconcile_errors_total{controller="c"}'), 2);
    assert.equal(samples.get('controller_runtime_terminal_reconcile_errors_total{controller="c"}'), 1);
    assert.equal(samples.get('controller_runtime_reconcile_time_seconds_count{controller="c"}'), 3);
    assert.ok(Math.abs(samples.get('controller_runtime_reconcile_time_seconds_sum{controller="c"}')! - 1.542) < 1e-9);
    assert.equal(samples.get('controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.025"}'), 1);
    assert.equal(samples.get('controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.05"}'), 2);
    assert.equal(samples.get('controller_runtime_reconcile_time_seconds_bucket{controller="c",le="1.5"}'), 3);
    assert.equal(samples.get('controller_runtime_reconcile_time_seconds_bucket{controller="c",le="60"}'), 3);
    assert.equal(samples.get('controller_runtime_active_workers{controller="c"}'), 1);
    assert.equal(samples.get('controller_runtime_max_concurrent_reconciles{controller="c"}'), 2);
  });

  it('shares each metric between controllers and queues of other names, and keeps a live series when a name repeats', async () => {
    provider.controller('d').reconciled?.('requeue_after', 5);
    provider.workQueue('q2');
    provider.workQueue('q'); // a second queue named q: q's series keep their values
    createMetrics(registry); // a second provider on the same registry shares its metrics too

    const { body, samples } = await scrape(server);
    assert.equal(body.match(/^# TYPE controller_runtime_reconcile_total counter$/gm)?.length, 1);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="d",result="requeue_after"}'), 1);
    assert.equal(samples.get('controller_runtime_reconcile_total{controller="c",result="error"}'), 2);
    assert.equal(samples.get('controller_runtime_reconcile_errors_total{controller="d"}'), 0);
    assert.equal(samples.get('workqueue_adds_total{name="q2"}'), 0);
    assert.equal(samples.get('workqueue_queue_duration_seconds_count{name="q2"}'), 0);
    assert.equal(samples.get('workqueue_adds_total{name="q"}'), 3);
    assert.equal(samples.get('workqueue_queue_duration_seconds_count{name="q"}'), 2);
  });

  it('exports process metrics unless told not to', async () => {
    const { samples } = await scrape(server);
    assert.ok(samples.has('process_cpu_user_seconds_total'));
    const bare = createMetrics(new Registry(), { defaultMetrics: false });
    assert.equal(bare.registry.getSingleMetric('process_cpu_user_seconds_total'), undefined);
    assert.ok(bare.registry.getSingleMetric('workqueue_depth'));
  });
});

describe("Raven's own metrics, scraped over HTTP", () => {
  const metrics = createMetrics(new Registry(), { defaultMetrics: false });
  let server: RunningHttpServer;
  let sim: RunningOpenStackSim;
  let session: OpenStackSession;
  before(async () => {
    server = await listenOps({ port: 0, health: new HealthChecks(), registry: metrics.registry });
    const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-metrics-')), 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut });
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    session.observe(metrics.openstack);
  });
  after(async () => {
    await session.close();
    await sim.close();
    await server.close();
  });

  it("counts OpenStack requests (each attempt), their errors with Neutron's type, retries, and times them", async () => {
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'metrics' });
    const subnet = await neutron.subnets.create({ network_id: network.id, cidr: '10.77.0.0/24', ip_version: 4 });
    const port = await neutron.ports.create({
      network_id: network.id,
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.77.0.10' }],
    });
    // The same address again: 409 IpAddressAlreadyAllocated (a POST: never retried).
    await assert.rejects(
      neutron.ports.create({ network_id: network.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.77.0.10' }] }),
    );
    // One 503 on a GET: retried, then 200.
    await fetch(`${sim.url}/_sim/faults/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'GET', path: '/network/v2.0/ports/{id}', status: 503, count: 1 }),
    });
    await neutron.ports.get(port.id);
    await neutron.ports.delete(port.id);
    assert.equal(await neutron.ports.delete(port.id), false, 'already gone: a 404');

    const { body, samples } = await scrape(server);
    const at = (name: string, labels: Record<string, string>) =>
      samples.get(
        `${name}{${Object.entries(labels)
          .map(([k, v]) => `${k}="${v}"`)
          .sort()
          .join(',')}}`,
      );
    const ports = { service: 'network', operation: '/v2.0/ports' };
    const portById = { service: 'network', operation: '/v2.0/ports/{id}' };
    assert.match(body, /^# TYPE raven_openstack_requests_total counter$/m);
    assert.match(body, /^# TYPE raven_openstack_request_duration_seconds histogram$/m);
    assert.equal(
      at('raven_openstack_requests_total', {
        service: 'identity',
        method: 'POST',
        operation: '/v3/auth/tokens',
        code: '201',
      }),
      1,
      'one token',
    );
    assert.equal(at('raven_openstack_requests_total', { ...ports, method: 'POST', code: '201' }), 1);
    assert.equal(at('raven_openstack_requests_total', { ...ports, method: 'POST', code: '409' }), 1);
    assert.equal(
      at('raven_openstack_errors_total', { ...ports, method: 'POST', code: '409', type: 'IpAddressAlreadyAllocated' }),
      1,
    );
    assert.equal(at('raven_openstack_requests_total', { ...portById, method: 'GET', code: '503' }), 1);
    assert.equal(at('raven_openstack_requests_total', { ...portById, method: 'GET', code: '200' }), 1);
    assert.equal(
      at('raven_openstack_errors_total', { ...portById, method: 'GET', code: '503', type: 'HTTPServiceUnavailable' }),
      1,
    );
    assert.equal(at('raven_openstack_retries_total', { ...portById, method: 'GET' }), 1);
    assert.equal(at('raven_openstack_requests_total', { ...portById, method: 'DELETE', code: '204' }), 1);
    assert.equal(
      at('raven_openstack_errors_total', { ...portById, method: 'DELETE', code: '404', type: 'PortNotFound' }),
      1,
    );
    assert.equal(
      at('raven_openstack_request_duration_seconds_count', { ...portById, method: 'GET' }),
      2,
      'both attempts timed',
    );
    const sum = at('raven_openstack_request_duration_seconds_sum', { ...ports, method: 'POST' })!;
    assert.ok(sum > 0 && sum < 10, `POST /v2.0/ports took ${sum} s in all`);
    assert.equal(at('raven_openstack_request_duration_seconds_bucket', { ...ports, method: 'POST', le: '+Inf' }), 2);
    // Nothing that names a resource, and no secret, reaches a label.
    assert.doesNotMatch(body, new RegExp(`${network.id}|${port.id}|${sim.adminPassword}|10\\.77`));
  });

  it('exports pod network-ready latency, garbage collection and leadership', async () => {
    let leading = false;
    metrics.leaderElection('raven', () => leading);
    metrics.raven.podNetworkReady?.(0.8);
    metrics.raven.podNetworkReady?.(3);
    metrics.raven.gcDeleted?.({ type: 'port', ownerKind: 'pod' });
    metrics.raven.gcDeleted?.({ type: 'port', ownerKind: 'pod' });
    metrics.raven.gcRun?.({
      orphans: [],
      deleted: 2,
      deferred: 0,
      blocked: [],
      untagged: [],
      podPorts: [],
      securityGroups: [],
    });
    metrics.raven.gcRun?.(undefined);

    let { samples } = await scrape(server);
    assert.equal(samples.get('raven_pod_network_ready_seconds_count'), 2);
    assert.equal(samples.get('raven_pod_network_ready_seconds_sum'), 3.8);
    assert.equal(samples.get('raven_pod_network_ready_seconds_bucket{le="0.5"}'), 0);
    assert.equal(samples.get('raven_pod_network_ready_seconds_bucket{le="1"}'), 1);
    assert.equal(samples.get('raven_pod_network_ready_seconds_bucket{le="5"}'), 2);
    assert.equal(samples.get('raven_pod_network_ready_seconds_bucket{le="120"}'), 2);
    assert.equal(samples.get('raven_gc_deleted_total{owner_kind="pod",resource="port"}'), 2);
    assert.equal(
      samples.get('raven_gc_deleted_total{owner_kind="namespace",resource="network"}'),
      0,
      'every kind exists from the start',
    );
    assert.equal(samples.get('raven_gc_runs_total{result="success"}'), 1);
    assert.equal(samples.get('raven_gc_runs_total{result="error"}'), 1);
    const last = samples.get('raven_gc_last_success_timestamp_seconds')!;
    assert.ok(Math.abs(last - Date.now() / 1000) < 60, `last success at ${last}`);
    assert.equal(samples.get('leader_election_master_status{name="raven"}'), 0, 'a standby');
    leading = true;
    ({ samples } = await scrape(server));
    assert.equal(samples.get('leader_election_master_status{name="raven"}'), 1, 'read at each scrape');
  });

  it('exports waiting pods, pending load balancers, blocked networks and the warm pools, read at each scrape', async () => {
    let pods = new Map([['QuotaExceeded', 3]]);
    metrics.raven.waiting({
      pods: () => pods,
      services: () =>
        new Map([
          ['PENDING_UPDATE', 2],
          ['LoadBalancerError', 1],
        ]),
    });
    metrics.raven.pools(() => ({
      sizes: [{ node: 'node-1', namespace: 'shop', groups: 'sg/ns/shop/web,sg/open-egress', free: 4 }],
      hits: 7,
      misses: 2,
    }));
    metrics.raven.poolRefilled(0.3);
    metrics.raven.gcRun({
      orphans: [],
      deleted: 0,
      deferred: 1,
      blocked: [
        {
          resource: 'network',
          id: 'n',
          name: 'n',
          blockingPort: { id: 'p', name: 'vm', deviceOwner: 'compute:nova', deviceId: 'v' },
        },
      ],
      untagged: [{ id: 'u', name: 'raven/c/x/y' }],
      podPorts: [],
      securityGroups: [],
    });
    let { samples } = await scrape(server);
    assert.equal(samples.get('raven_pods_waiting{reason="QuotaExceeded"}'), 3);
    assert.equal(samples.get('raven_loadbalancers_pending{state="PENDING_UPDATE"}'), 2);
    assert.equal(samples.get('raven_loadbalancers_pending{state="LoadBalancerError"}'), undefined, 'only PENDING_*');
    assert.equal(
      samples.get('raven_port_pool_size{groups="sg/ns/shop/web,sg/open-egress",namespace="shop",node="node-1"}'),
      4,
    );
    assert.equal(samples.get('raven_port_pool_hits_total'), 7);
    assert.equal(samples.get('raven_port_pool_misses_total'), 2);
    assert.equal(samples.get('raven_port_pool_refill_duration_seconds_count'), 1);
    assert.equal(samples.get('raven_gc_blocked{resource="network"}'), 1);
    assert.equal(samples.get('raven_gc_untagged_ports'), 1);
    pods = new Map();
    ({ samples } = await scrape(server));
    assert.equal(samples.get('raven_pods_waiting{reason="QuotaExceeded"}'), undefined, 'a reason gone is not exported');
  });
});
