import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { RetryableError, type ReconcileResult } from '../../controller/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import type { KubeObject, Service } from '../../kube/api/index.ts';
import { resources } from '../../kube/client/index.ts';
import { loadCloudConfig, provisioningState } from '../../openstack/index.ts';
import { ownerOf, ownerTags } from '../network/index.ts';
import { eventReasons, service, slice, startHarness, type Harness } from '../../../test/support/service-harness.ts';

const ns = 'faults';
const autoNs = 'faults-auto';

/** One harness with a Controller (stuck LB), one driven by hand (crash leftovers, errors): both on one sim. */
describe('ServiceReconciler under faults: stuck Octavia, crash leftovers, ERROR, quota', { timeout: 120_000 }, () => {
  let server: TestServer;
  let sim: RunningOpenStackSim;
  let auto: Harness;
  let hand: Harness;
  const simApi = (method: string, path: string, body?: unknown) =>
    fetch(`${sim.url}/_sim/${path}`, {
      method,
      ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    }).then((r) => r.json());

  before(async () => {
    server = await startTestServer();
    const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-svcf-')), 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'keystone', provisioningDelayMs: 20, cloudsYamlOut });
    const cloud = loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } });
    auto = await startHarness({
      server,
      cloud,
      clusterId: 'auto',
      namespace: autoNs,
      externalCidr: '172.24.5.0/24',
      config: { loadBalancer: { pendingRequeueMs: 100, stuckAfterSeconds: 1 } },
    });
    hand = await startHarness({
      server,
      cloud,
      clusterId: 'hand',
      namespace: ns,
      externalCidr: '172.24.6.0/24',
      controller: false,
      config: { emulateKubeProxy: true },
    });
    for (const name of [ns, autoNs])
      await auto.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => {
    await auto?.stop();
    await hand?.stop();
    await sim?.close();
    await server?.stop();
  });

  /** Reconciles `ns/name` by hand until it asks for nothing more (waiting out `requeueAfterMs`, as the queue would). */
  async function converge(name: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const result: ReconcileResult | void = await hand.reconciler.reconcile(
        `${ns}/${name}`,
        AbortSignal.timeout(10_000),
      );
      if (!result) return;
      await sleep(result.requeueAfterMs ?? 20);
    }
    assert.fail(`${name} did not converge`);
  }
  /** Creates a Service and waits until the hand-driven harness's cache has it. */
  async function create(obj: Service): Promise<Service> {
    const created = await hand.client.create(resources.services, obj, { namespace: ns });
    await waitFor(
      'the service in the cache',
      () =>
        hand.services.lister().get(`${ns}/${obj.metadata.name}`)?.metadata.resourceVersion ===
          created.metadata.resourceVersion || undefined,
    );
    return created;
  }
  const lbs = (h: Harness, name: string, namespace = ns) =>
    h.octavia.loadBalancers.list({ name: `raven/${h.config.clusterId}/${namespace}/${name}` });
  const vipPorts = (h: Harness, name: string) =>
    h.neutron.ports.list({ name: `raven/${h.config.clusterId}/${ns}/${name}/vip` });

  it('a load balancer stuck PENDING: requeued (no second one), one LoadBalancerStuck Warning, converges once released', async () => {
    await simApi('POST', 'faults/stuck', {});
    try {
      await auto.client.create(resources.services, service(autoNs, 'stuck', { type: 'LoadBalancer' }), {
        namespace: autoNs,
      });
      await waitFor(
        'LoadBalancerStuck',
        async () => (await eventReasons(auto.client, autoNs, 'stuck')).includes('LoadBalancerStuck'),
        { timeoutMs: 10_000 },
      );
      await sleep(1_500);
      const [lb, ...more] = await lbs(auto, 'stuck', autoNs);
      assert.equal(more.length, 0, 'a second load balancer while the first was pending');
      assert.equal(lb!.provisioning_status, 'PENDING_CREATE');
      const events = (
        await auto.client.list<KubeObject & { reason: string; count: number }>(resources.events, { namespace: autoNs })
      ).items.filter((e) => e.reason === 'LoadBalancerStuck');
      assert.deepEqual(
        events.map((e) => e.count),
        [1],
        'one Warning per stuck period',
      );
    } finally {
      await simApi('DELETE', 'faults/stuck');
    }
    await waitFor(
      'the listener after release',
      async () => {
        const [lb] = await lbs(auto, 'stuck', autoNs);
        return lb && provisioningState(lb).state === 'ACTIVE' && lb.listeners.length === 1;
      },
      { timeoutMs: 10_000 },
    );
    assert.equal((await lbs(auto, 'stuck', autoNs)).length, 1);
  });

  it('crash leftovers are adopted, never duplicated: an untagged VIP port, a second load balancer, an untagged floating IP', async () => {
    const svc = await create(service(ns, 'crash', { type: 'LoadBalancer' }));
    const uid = svc.metadata.uid!;
    const clusterIP = svc.spec!.clusterIP!;
    const sub = hand.cluster.serviceSubnet!;
    // Crashed between the VIP port's create and its tags.
    const orphan = await hand.neutron.ports.create({
      network_id: sub.networkId,
      name: `raven/hand/${ns}/crash/vip`,
      fixed_ips: [{ subnet_id: sub.subnetId, ip_address: clusterIP }],
    });
    await converge('crash');
    const [port, ...morePorts] = await vipPorts(hand, 'crash');
    assert.deepEqual([port!.id, morePorts.length], [orphan.id, 0], 'the untagged VIP port was not adopted');
    assert.equal(ownerOf(port!.tags)?.uid, uid);
    const [lb] = await lbs(hand, 'crash');
    assert.equal(lb!.vip_port_id, orphan.id);
    // A create whose answer was lost: a second load balancer on the same port, with the same tags.
    const twin = await hand.octavia.loadBalancers.create({
      name: lb!.name,
      vip_port_id: orphan.id,
      tags: ownerTags('hand', 'service', uid),
    });
    await converge('crash');
    await waitFor('the twin gone', async () => (await lbs(hand, 'crash')).length === 1);
    assert.deepEqual(
      (await lbs(hand, 'crash')).map((l) => l.id),
      [lb!.id],
      'the oldest load balancer is kept',
    );
    assert.ok(!(await hand.octavia.loadBalancers.find(twin.id)));
    // A floating IP created (description = LB name) but never tagged.
    const [fip] = await hand.neutron.floatingIps.list({ port_id: orphan.id });
    await hand.neutron.tags.clear('floatingips', fip!.id);
    await converge('crash');
    const fips = await hand.neutron.floatingIps.list({ port_id: orphan.id });
    assert.deepEqual(
      fips.map((f) => [f.id, ownerOf(f.tags)?.uid]),
      [[fip!.id, uid]],
    );
    // Converged: reconciling again writes nothing.
    await simApi('DELETE', 'counters');
    for (let i = 0; i < 3; i++) await converge('crash');
    const writes = Object.keys((await simApi('GET', 'counters')) as Record<string, number>).filter(
      (k) => !k.startsWith('GET') && !k.includes('/auth/tokens'),
    );
    assert.deepEqual(writes, []);
  });

  it('stale resources of an earlier Service of the same name go; emulateKubeProxy gives a ClusterIP Service a load balancer (SCTP too)', async () => {
    const ghost = '00000000-0000-4000-8000-00000000beef';
    const ghostLb = await hand.octavia.loadBalancers.create({
      name: `raven/hand/${ns}/plain`,
      vip_subnet_id: hand.cluster.serviceSubnet!.subnetId,
      tags: ownerTags('hand', 'service', ghost),
    });
    const svc = await create(
      service(ns, 'plain', {
        ports: [
          { name: 'a', port: 80 },
          { name: 'sig', port: 3868, protocol: 'SCTP' },
        ],
      }),
    );
    await converge('plain');
    const [lb, ...more] = await lbs(hand, 'plain');
    assert.equal(more.length, 0);
    assert.notEqual(lb!.id, ghostLb.id);
    assert.equal(ownerOf(lb!.tags)?.uid, svc.metadata.uid);
    const listeners = (await hand.octavia.listeners.list()).filter((l) => l.loadbalancers.some((r) => r.id === lb!.id));
    assert.deepEqual(listeners.map((l) => `${l.protocol}:${l.protocol_port}`).sort(), ['SCTP:3868', 'TCP:80']);
    assert.deepEqual(
      await hand.neutron.floatingIps.list({ port_id: lb!.vip_port_id }),
      [],
      'a ClusterIP service got a floating IP',
    );
  });

  it('Octavia ERROR → a retryable LoadBalancerError; a floating IP quota of 0 → QuotaExceeded, fine once raised', async () => {
    const svc = await create(service(ns, 'err', { type: 'LoadBalancer' }));
    await hand.client.create(resources.endpointslices, slice(ns, 'err', 'x', ['10.244.1.1']), { namespace: ns });
    await converge('err');
    const [lb] = await lbs(hand, 'err');
    sim.sim.octavia.loadbalancers.get(lb!.id)!.provisioning_status = 'ERROR';
    await assert.rejects(
      hand.reconciler.reconcile(`${ns}/err`, AbortSignal.timeout(10_000)),
      (e) => e instanceof RetryableError && e.reason === 'LoadBalancerError',
    );
    // A deleted Service's load balancer in ERROR is still deleted.
    await hand.client.delete(resources.services, 'err', ns);
    await waitFor('deleting in the cache', () =>
      Boolean(hand.services.lister().get(`${ns}/err`)?.metadata.deletionTimestamp),
    );
    await converge('err');
    assert.deepEqual([(await lbs(hand, 'err')).length, (await vipPorts(hand, 'err')).length], [0, 0]);
    const left = (await hand.client.list(resources.services, { namespace: ns })).items.map((s) => s.metadata.uid);
    assert.ok(!left.includes(svc.metadata.uid), 'the finalizer stayed on');

    const project = (await vipPorts(hand, 'crash'))[0]!.project_id;
    await hand.neutron.quotas.update(project, { floatingip: 0 });
    try {
      await create(service(ns, 'quota', { type: 'LoadBalancer' }));
      let failure: unknown;
      for (let i = 0; i < 50 && !failure; i++) {
        try {
          const r = await hand.reconciler.reconcile(`${ns}/quota`, AbortSignal.timeout(10_000));
          await sleep(r?.requeueAfterMs ?? 20);
        } catch (err) {
          failure = err;
        }
      }
      assert.ok(failure instanceof RetryableError && failure.reason === 'QuotaExceeded', String(failure));
    } finally {
      await hand.neutron.quotas.reset(project);
    }
    await converge('quota');
    await waitFor(
      'quota ingress',
      async () =>
        ((await hand.client.get(resources.services, 'quota', ns)).status as { loadBalancer?: { ingress?: unknown[] } })
          .loadBalancer?.ingress?.length === 1,
    );
  });
});
