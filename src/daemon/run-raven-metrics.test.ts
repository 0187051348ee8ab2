import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { silentLogger } from '../core/index.ts';
import type { KubeObject } from '../kube/api/index.ts';
import { KubeClient, resources } from '../kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../openstack/index.ts';
import { parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../reconcilers/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../test/support/server.ts';
import { waitFor } from '../../test/support/wait.ts';
import { loadRavenConfig, type RavenConfig } from './config/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../test/support/openstack-sim.ts';
import { runRaven } from './run-raven.ts';

const CLUSTER = 'metrics';

/** Prometheus text → `name{a="1",b="2"}` (labels sorted) → value. */
function parseSamples(body: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).sort();
    samples.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, Number(m[3]));
  }
  return samples;
}

const key = (name: string, labels: Record<string, string> = {}): string => {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  return l.length ? `${name}{${l.join(',')}}` : name;
};

/**
 * `raven run`'s wiring end to end: two replicas (leader election on a Lease) against the embedded API server and
 * the OpenStack simulator; what their `/readyz` and `/metrics` say after a pod is wired and an orphan collected.
 */
describe('raven run: /metrics and /readyz of a leader and a standby', { timeout: 120_000 }, () => {
  let server: TestServer;
  let sim: RunningOpenStackSim;
  let cloudsYaml: string;
  let client: KubeClient;
  let neutron: NeutronClient;
  let session: OpenStackSession;
  const replicas: { ops: Promise<string>; stop(): Promise<void> }[] = [];

  before(async () => {
    server = await startTestServer();
    cloudsYaml = join(server.dir, 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut: cloudsYaml });
    client = newClient();
    session = newSession();
    neutron = new NeutronClient(session);
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await session.close();
    await client.close();
    await sim.close();
    await server.stop();
  });

  function newClient(): KubeClient {
    return new KubeClient({
      connection: testConnection(server),
    });
  }
  function newSession(): OpenStackSession {
    return new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYaml } }),
    });
  }

  /** One replica in this process with its own clients; resolves its ops URL once listening. */
  function startReplica(identity: string): { ops: Promise<string>; stop(): Promise<void> } {
    const loaded = loadRavenConfig({
      env: {
        RAVEN_CLUSTER_ID: CLUSTER,
        RAVEN_SUBNET_STRATEGY: 'shared',
        RAVEN_POD_SUBNET_CIDR: '10.244.0.0/16',
        RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
        RAVEN_OPS_PORT: '0',
        RAVEN_RESYNC_PERIOD_SECONDS: '0',
        RAVEN_LEADER_ELECT: 'true',
        RAVEN_LEADER_ELECT_NAMESPACE: 'default',
        RAVEN_LEADER_IDENTITY: identity,
      },
    });
    const config: RavenConfig = { ...loaded, gc: { ...loaded.gc, graceSeconds: 0 } };
    const [c, s] = [newClient(), newSession()];
    const abort = new AbortController();
    let listening!: (url: string) => void;
    const ops = new Promise<string>((resolve) => (listening = resolve));
    const run = runRaven({ config, logger: silentLogger, client: c, session: s, onListening: listening }, abort.signal);
    const replica = {
      ops,
      async stop() {
        abort.abort();
        await run.catch(() => undefined);
        await s.close();
        await c.close();
      },
    };
    replicas.push(replica);
    return replica;
  }

  async function get(url: string): Promise<{ status: number; body: string }> {
    const res = await fetch(url);
    return { status: res.status, body: await res.text() };
  }

  it('both are ready and say which leads; the leader wires a pod, collects an orphan, and counts it all', async () => {
    // An orphan of this cluster (its pod never existed) for the leader's first garbage collection.
    const net = await neutron.networks.create({ name: 'orphanage' });
    const gone = randomUUID();
    const orphan = await neutron.ports.create({
      network_id: net.id,
      name: `raven/${CLUSTER}/x/gone`,
      device_owner: POD_DEVICE_OWNER,
      device_id: gone,
      tags: [`raven.cluster=${CLUSTER}`, 'raven.kind=pod', `raven.uid=${gone}`],
    });

    const leaderOps = await startReplica('raven-a').ops;
    await waitFor('raven-a leading', async () =>
      (await get(`${leaderOps}/readyz?verbose`)).body.includes('[+]leader-election ok (leading)'),
    );
    const standbyOps = await startReplica('raven-b').ops;
    // Ready once its caches synced; the leader's name follows with its first read of the Lease, right after.
    const standbyReady = await waitFor('raven-b ready as a standby that has read the Lease', async () => {
      const res = await get(`${standbyOps}/readyz?verbose`);
      return res.status === 200 && res.body.includes('leader raven-a') ? res : undefined;
    });
    assert.match(standbyReady.body, /^\[\+\]leader-election ok \(standby, leader raven-a\)$/m);
    assert.match(standbyReady.body, /^\[\+\]informer-sync ok$/m);
    assert.equal((await get(`${standbyOps}/readyz`)).body, 'ok');

    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    const body: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
    };
    const pod = await client.create(resources.pods, body, { namespace: 'shop' });
    const vif = await waitFor('the VIF annotation', async () =>
      parseVif((await client.get(resources.pods, 'web', 'shop')).metadata.annotations?.[VIF_ANNOTATION]),
    );
    assert.equal(vif.podUid, pod.metadata.uid);
    await waitFor('the orphan collected', async () => (await neutron.ports.list({ id: orphan.id })).length === 0);

    const leader = parseSamples((await get(`${leaderOps}/metrics`)).body);
    assert.equal(leader.get(key('leader_election_master_status', { name: 'raven' })), 1);
    assert.equal(leader.get(key('raven_pod_network_ready_seconds_count')), 1, 'one pod wired');
    const latency = leader.get(key('raven_pod_network_ready_seconds_sum'))!;
    assert.ok(latency >= 0 && latency < 30, `network ready after ${latency} s`);
    assert.equal(leader.get(key('raven_pod_network_ready_seconds_bucket', { le: '120' })), 1);
    assert.ok(
      leader.get(
        key('raven_openstack_requests_total', {
          service: 'network',
          method: 'POST',
          operation: '/v2.0/ports',
          code: '201',
        }),
      )! >= 1,
    );
    assert.ok(
      leader.get(
        key('raven_openstack_requests_total', {
          service: 'identity',
          method: 'POST',
          operation: '/v3/auth/tokens',
          code: '201',
        }),
      )! >= 1,
    );
    assert.ok(
      leader.get(
        key('raven_openstack_request_duration_seconds_count', {
          service: 'network',
          method: 'GET',
          operation: '/v2.0/ports',
        }),
      )! >= 1,
    );
    assert.equal(
      leader.get(
        key('raven_openstack_requests_total', {
          service: 'network',
          method: 'DELETE',
          operation: '/v2.0/ports/{id}',
          code: '204',
        }),
      ),
      1,
      'the orphan',
    );
    assert.equal(leader.get(key('raven_gc_deleted_total', { resource: 'port', owner_kind: 'pod' })), 1);
    assert.ok(leader.get(key('raven_gc_runs_total', { result: 'success' }))! >= 1);
    assert.ok(leader.get(key('raven_gc_last_success_timestamp_seconds'))! > 0);
    assert.ok(leader.get(key('controller_runtime_reconcile_total', { controller: 'pod', result: 'success' }))! >= 1);
    assert.ok(leader.has(key('workqueue_depth', { name: 'pod' })));

    // The standby reconciles nothing and talks to OpenStack only for its readiness check (a one-item network list).
    const standby = parseSamples((await get(`${standbyOps}/metrics`)).body);
    assert.equal(standby.get(key('leader_election_master_status', { name: 'raven' })), 0);
    assert.equal(standby.get(key('raven_pod_network_ready_seconds_count')), 0);
    assert.equal(standby.get(key('raven_gc_runs_total', { result: 'success' })), 0);
    assert.equal(
      standby.get(
        key('raven_openstack_requests_total', {
          service: 'network',
          method: 'POST',
          operation: '/v2.0/ports',
          code: '201',
        }),
      ),
      undefined,
    );
    assert.ok(
      standby.get(
        key('raven_openstack_requests_total', {
          service: 'network',
          method: 'GET',
          operation: '/v2.0/networks',
          code: '200',
        }),
      )! >= 1,
    );
  });
});
