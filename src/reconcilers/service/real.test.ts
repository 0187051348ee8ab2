/**
 * The ServiceReconciler against real Keystone/Neutron/Octavia (`npm run test:openstack`, or
 * `RAVEN_OPENSTACK_TARGET=real RAVEN_OPENSTACK_CLOUDS=.raven/openstack/clouds.yaml`): proves the VIP-port choice
 * (Raven's own port passed as `vip_port_id`) on the real thing — the load balancer comes up at the clusterIP, takes
 * listener/pool/member diffs, a floating IP lands on the port, and deleting the Service leaves no port behind (real
 * Octavia leaks the ports it creates itself, docs/openstack.md, "Octavia"). Skipped otherwise. Everything it makes is
 * removed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { teardown } from '../../../test/support/teardown.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { resources } from '../../kube/client/index.ts';
import { loadCloudConfig, provisioningState } from '../../openstack/index.ts';
import { ownerOf } from '../network/index.ts';
import {
  explainLoadBalancer,
  removeHarnessNetwork,
  service,
  slice,
  startHarness,
  type Harness,
  type HarnessOptions,
} from '../../../test/support/service-harness.ts';

const real = process.env.RAVEN_OPENSTACK_TARGET === 'real';
const wanted = process.env.RAVEN_OPENSTACK_AUTH ?? 'both';
const modes = (wanted === 'both' ? ['keystone', 'noauth'] : [wanted]) as ('keystone' | 'noauth')[];
/** A suite's waits give a working cloud up to 6 min each while Raven's writes go on (`progress`). */
const SUITE_MS = 600_000;

/** An API server and a service harness on the real cloud (`auth`'s entry of its clouds.yaml), with namespace `ns`. */
async function realHarness(
  auth: 'keystone' | 'noauth',
  ns: string,
  options: Pick<HarnessOptions, 'clusterId' | 'externalCidr' | 'config'>,
  serverOptions: Parameters<typeof startTestServer>[0] = {},
): Promise<{ server: TestServer; h: Harness }> {
  const file = process.env.RAVEN_OPENSTACK_CLOUDS;
  if (!file) throw new Error('RAVEN_OPENSTACK_TARGET=real needs RAVEN_OPENSTACK_CLOUDS');
  const server = await startTestServer(serverOptions);
  const cloud = loadCloudConfig({
    cloud: auth === 'keystone' ? 'raven-real' : 'raven-real-noauth',
    env: { OS_CLIENT_CONFIG_FILE: file },
  });
  const h = await startHarness({ server, cloud, timeoutMs: 120_000, ...options });
  await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  return { server, h };
}

/**
 * A deleted Service's floating IP, as real Neutron holds it: off the VIP, tagged held for the Service's name through
 * the quarantine (a redeploy gets it back; the garbage collector frees it after, as the simulator's suites prove;
 * `removeHarnessNetwork` frees it here).
 */
async function assertHeld(h: Harness, id: string, clusterId: string): Promise<void> {
  const [held] = await h.neutron.floatingIps.list({ id });
  assert.ok(held, 'the floating IP was deleted, not held for the quarantine');
  assert.equal(held.port_id, null);
  assert.ok(
    held.tags.includes(`raven.cluster=${clusterId}`) && held.tags.includes('raven.kind=held'),
    held.tags.join(),
  );
}

for (const auth of modes) {
  describe(
    `ServiceReconciler against real Octavia (${auth})`,
    { skip: !real && 'needs RAVEN_OPENSTACK_TARGET=real', timeout: SUITE_MS },
    () => {
      let server: TestServer;
      let h: Harness;
      const id = randomBytes(3).toString('hex');
      const ns = 'real';

      before(async () => {
        ({ server, h } = await realHarness(auth, ns, {
          clusterId: `rt${id}`,
          externalCidr: `172.31.${parseInt(id.slice(0, 2), 16)}.0/24`,
          config: { loadBalancer: { pendingRequeueMs: 250, stuckAfterSeconds: 120 } },
        }));
      });
      after(() =>
        teardown(
          () => h && removeHarnessNetwork(h),
          () => h?.stop(),
          () => server?.stop(),
        ),
      );

      const lbName = () => `raven/rt${id}/${ns}/web`;
      const settled = (listeners: number, members: number) =>
        waitFor(
          `ACTIVE with ${listeners} listeners, ${members} members`,
          async () => {
            const [lb, ...more] = await h.octavia.loadBalancers.list({ name: lbName() });
            assert.equal(more.length, 0, 'a second load balancer');
            if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
            const ls = await h.octavia.listeners.list({ loadbalancer_id: lb.id });
            const ms = await Promise.all(
              ls.map((l) => (l.default_pool_id ? h.octavia.members.list(l.default_pool_id) : Promise.resolve([]))),
            );
            return ls.length === listeners && ms.flat().length === members ? lb : undefined;
          },
          {
            timeoutMs: 90_000,
            intervalMs: 300,
            progress: h.progress,
            explain: () => explainLoadBalancer(h, lbName(), ns, 'web'),
          },
        );

      it("LoadBalancer Service: LB on Raven's VIP port at the clusterIP, listener diffs on the same LB, a floating IP; delete leaves nothing but the floating IP, held", async () => {
        const created = await h.client.create(resources.services, service(ns, 'web', { type: 'LoadBalancer' }), {
          namespace: ns,
        });
        const clusterIP = created.spec!.clusterIP!;
        await h.client.create(
          resources.endpointslices,
          slice(ns, 'web', 'a', ['10.244.0.10', '10.244.0.11'], ['10.244.0.12']),
          { namespace: ns },
        );
        const lb = await settled(1, 2);
        assert.equal(lb.vip_address, clusterIP);
        assert.deepEqual(ownerOf(lb.tags), { cluster: `rt${id}`, kind: 'service', uid: created.metadata.uid });
        const vip = await h.neutron.ports.get(lb.vip_port_id);
        assert.equal(vip.name, `${lbName()}/vip`);
        assert.equal(ownerOf(vip.tags)?.uid, created.metadata.uid);
        const ingress = await waitFor(
          'ingress',
          async () => {
            const s = await h.client.get(resources.services, 'web', ns);
            return (s.status as { loadBalancer?: { ingress?: { ip: string }[] } }).loadBalancer?.ingress?.[0]?.ip;
          },
          { timeoutMs: 60_000, intervalMs: 300 },
        );
        const [fip] = await h.neutron.floatingIps.list({ port_id: vip.id });
        assert.equal(fip?.floating_ip_address, ingress);

        const svc = await h.client.get(resources.services, 'web', ns);
        const spec = svc.spec ?? {};
        await h.client.update(resources.services, {
          ...svc,
          spec: { ...spec, ports: [...(spec.ports ?? []), { name: 'https', port: 443, targetPort: 8443 }] },
        });
        await h.client.create(
          resources.endpointslices,
          slice(ns, 'web', 'b', ['10.244.0.20'], [], [{ name: 'https', port: 8443, protocol: 'TCP' }]),
          { namespace: ns },
        );
        assert.equal((await settled(2, 3)).id, lb.id, 'the load balancer was re-created for a port change');

        await h.client.delete(resources.services, 'web', ns);
        await waitFor(
          'the Service gone',
          async () => (await h.client.list(resources.services, { namespace: ns })).items.length === 0,
          { timeoutMs: 90_000, intervalMs: 300 },
        );
        assert.equal((await h.octavia.loadBalancers.list({ name: lbName() })).length, 0);
        assert.equal((await h.neutron.ports.list({ id: vip.id })).length, 0, 'the VIP port leaked');
        assert.equal(
          (await h.neutron.ports.list({ device_owner: 'Octavia', device_id: `lb-${lb.id}` })).length,
          0,
          'Octavia made (and leaked) a port of its own',
        );
        await assertHeld(h, fip.id, `rt${id}`);
      });
    },
  );

  describe(
    `ServiceReconciler against real Octavia, dual-stack (${auth})`,
    { skip: !real && 'needs RAVEN_OPENSTACK_TARGET=real', timeout: SUITE_MS },
    () => {
      let server: TestServer;
      let h: Harness;
      const id = randomBytes(3).toString('hex');
      const ns = 'dual';

      before(async () => {
        ({ server, h } = await realHarness(
          auth,
          ns,
          {
            clusterId: `rd${id}`,
            externalCidr: `172.30.${parseInt(id.slice(0, 2), 16)}.0/24`,
            config: {
              subnets: { strategy: 'shared', shared: { cidrs: ['10.244.0.0/16', 'fd00:10:244::/64'] } },
              serviceSubnet: { cidrs: ['10.96.0.0/16', 'fd00:10:96::/112'] },
              loadBalancer: { pendingRequeueMs: 250, stuckAfterSeconds: 120 },
            },
          },
          { serviceCidr: '10.96.0.0/16,fd00:10:96::/112' },
        ));
      });
      after(() =>
        teardown(
          () => h && removeHarnessNetwork(h),
          () => h?.stop(),
          () => server?.stop(),
        ),
      );

      it('RequireDualStack LoadBalancer Service: one LB, the IPv6 clusterIP an additional VIP on the same port, members of both families, the floating IP on the IPv4 VIP; delete leaves nothing but the floating IP, held', async () => {
        const created = await h.client.create(
          resources.services,
          service(ns, 'web', { type: 'LoadBalancer', ipFamilyPolicy: 'RequireDualStack' }),
          { namespace: ns },
        );
        const [v4, v6] = created.spec!.clusterIPs!;
        await h.client.create(resources.endpointslices, slice(ns, 'web', 'a', ['10.244.0.10', '10.244.0.11']), {
          namespace: ns,
        });
        await h.client.create(
          resources.endpointslices,
          slice(ns, 'web', 'b', ['fd00:10:244::10', 'fd00:10:244::11'], [], undefined, 'IPv6'),
          { namespace: ns },
        );
        const lbName = `raven/rd${id}/${ns}/web`;
        const lb = await waitFor(
          'ACTIVE with 4 members',
          async () => {
            const [found] = await h.octavia.loadBalancers.list({ name: lbName });
            if (!found || provisioningState(found).state !== 'ACTIVE') return undefined;
            const [pool] = await h.octavia.pools.list({ loadbalancer_id: found.id });
            const members = pool ? await h.octavia.members.list(pool.id) : [];
            return members.length === 4 ? found : undefined;
          },
          {
            timeoutMs: 90_000,
            intervalMs: 300,
            progress: h.progress,
            explain: () => explainLoadBalancer(h, lbName, ns, 'web'),
          },
        );
        assert.equal(lb.vip_address, v4);
        const v6Subnet = h.cluster.serviceSubnet!.secondary!.subnetId;
        assert.deepEqual(lb.additional_vips, [{ subnet_id: v6Subnet, ip_address: v6 }]);
        const vip = await h.neutron.ports.get(lb.vip_port_id);
        assert.deepEqual(vip.fixed_ips.map((f) => f.ip_address).sort(), [v4, v6].sort());
        const [pool] = await h.octavia.pools.list({ loadbalancer_id: lb.id });
        const members = await h.octavia.members.list(pool!.id);
        const podV6 = h.cluster.podSubnet!.secondary!.subnetId;
        assert.deepEqual(
          members
            .map((m) => [
              m.address,
              m.subnet_id === podV6 ? 'v6' : m.subnet_id === h.cluster.podSubnet!.subnetId ? 'v4' : '?',
            ])
            .sort(),
          [
            ['10.244.0.10', 'v4'],
            ['10.244.0.11', 'v4'],
            ['fd00:10:244::10', 'v6'],
            ['fd00:10:244::11', 'v6'],
          ],
        );
        const fip = await waitFor(
          'a floating IP on the VIP port',
          async () => (await h.neutron.floatingIps.list({ port_id: vip.id }))[0],
          { timeoutMs: 60_000, intervalMs: 300 },
        );
        assert.equal(fip.fixed_ip_address, v4);

        await h.client.delete(resources.services, 'web', ns);
        await waitFor(
          'the Service gone',
          async () => (await h.client.list(resources.services, { namespace: ns })).items.length === 0,
          { timeoutMs: 90_000, intervalMs: 300 },
        );
        assert.equal((await h.octavia.loadBalancers.list({ name: lbName })).length, 0);
        assert.equal((await h.neutron.ports.list({ id: vip.id })).length, 0, 'the VIP port leaked');
        await assertHeld(h, fip.id, `rd${id}`);
      });
    },
  );
}
