import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { waitFor } from '../../test/support/wait.ts';
import type { KubeObject } from '../kube/api/index.ts';
import { resources } from '../kube/client/index.ts';
import { FakeClock, silentLogger } from '../core/index.ts';
import { EventChannel } from '../controller/index.ts';
import { eventReasons, service, slice, startSimHarness, type Harness } from '../../test/support/service-harness.ts';
import { GarbageCollectionLoop, GarbageCollector } from './gc/index.ts';
import { serviceNameUid } from './network/index.ts';
import { inAllocationPools, loadBalancerVerification, type LoadBalancerGone } from './service/index.ts';

const P = 'loadbalancer.openstack.org/';

const blue = 'blue';
const red = 'red';

/**
 * Two tenants' namespaces on one cluster (embedded API server + OpenStack simulator, real Controller): what one
 * writes on its Services must not freeze the controller, nor take the other's addresses or pods.
 */
describe(
  'ServiceReconciler between tenants: no freeze, no address takeover, no member hijack',
  { timeout: 120_000 },
  () => {
    let h: Harness;
    const loadBalancersGone = new EventChannel<LoadBalancerGone>('loadbalancers-gone');

    before(async () => {
      h = await startSimHarness({
        auth: 'noauth',
        provisioningDelayMs: 20,
        clusterId: 'tenants',
        externalCidr: '172.24.8.0/24',
        pods: true,
        loadBalancersGone,
        // blue may name .200–.207, kept back outside the pool (.2–.99, where new floating IPs come from at random, so
        // no allocation takes an address a case names); red nothing.
        grants: [{ namespace: blue, cidrs: ['172.24.8.200/29'] }],
      });
      for (const name of [blue, red])
        await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    });
    after(async () => {
      await h?.stop();
    });

    const get = (namespace: string, name: string) => h.client.get(resources.services, name, namespace);
    const ingressOf = (svc: KubeObject) =>
      ((svc.status as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined)?.loadBalancer?.ingress ?? []).map(
        (i) => i.ip,
      );

    const create = (namespace: string, name: string, spec: Parameters<typeof service>[2], annotations = {}) =>
      h.client.create(
        resources.services,
        { ...service(namespace, name, spec), metadata: { name, namespace, annotations } },
        { namespace },
      );
    const remove = async (namespace: string, name: string) => {
      await h.client.delete(resources.services, name, namespace);
      await waitFor(`${namespace}/${name} gone`, async () =>
        (await h.client.list(resources.services, { namespace })).items.every((s) => s.metadata.name !== name),
      );
    };
    const ingressIs = (namespace: string, name: string, ip: string) =>
      waitFor(`${namespace}/${name} has ingress ${ip}`, async () => ingressOf(await get(namespace, name))[0] === ip, {
        timeoutMs: 20_000,
      });
    const warned = (namespace: string, name: string, reason: string) =>
      waitFor(`${namespace}/${name}: ${reason}`, async () =>
        (await eventReasons(h.client, namespace, name)).includes(reason),
      );
    /** Makes the controller look at a Service again (a label change: a new resourceVersion). */
    const touch = async (namespace: string, name: string, n: number) => {
      const svc = await get(namespace, name);
      await h.client.update(resources.services, { ...svc, metadata: { ...svc.metadata, labels: { touched: `${n}` } } });
    };
    const held = (service: string) =>
      h.neutron.floatingIps.list({ tags: ['raven.cluster=tenants', `raven.uid=${serviceNameUid(service)}`] });
    const collect = (o: { teardown?: boolean; at?: number }) => {
      const clock = new FakeClock(o.at ?? Date.now());
      const gc = new GarbageCollector({
        cloud: { neutron: h.neutron, octavia: h.octavia },
        config: { clusterId: 'tenants', gc: { graceSeconds: 0 } },
        // Every Service still exists, as far as this sweep knows: only kept and held floating IPs are in question.
        ownerExists: () => !o.teardown,
        logger: silentLogger,
        clock,
        teardown: o.teardown ?? false,
      });
      return gc.collect({ routerId: undefined });
    };

    it('a floating-subnet glob that a RegExp would backtrack on for ever is refused quickly, and the other tenant is served', async () => {
      // A subnet of the floating network whose name nearly matches: the worst case for a backtracking matcher.
      await h.neutron.subnets.create({
        network_id: h.externalNetworkId,
        cidr: '172.24.9.0/24',
        ip_version: 4,
        name: 'a'.repeat(200),
      });
      const glob = `${'*a'.repeat(20)}*b`;
      await h.client.create(
        resources.services,
        {
          ...service(red, 'frozen', { type: 'LoadBalancer' }),
          metadata: { name: 'frozen', namespace: red, annotations: { [`${P}floating-subnet`]: glob } },
        },
        { namespace: red },
      );
      await waitFor('frozen: FloatingSubnetNotFound', async () =>
        (await eventReasons(h.client, red, 'frozen')).includes('FloatingSubnetNotFound'),
      );
      await h.client.create(resources.services, service(blue, 'web', { type: 'LoadBalancer' }), { namespace: blue });
      await waitFor('blue/web has its ingress', async () => ingressOf(await get(blue, 'web')).length === 1, {
        timeoutMs: 20_000,
      });
      const frozen = await get(red, 'frozen');
      const fips = await h.neutron.floatingIps.list({ description: `raven/tenants/${red}/frozen` });
      assert.deepEqual(fips, [], 'no floating IP from a subnet nobody asked for');
      assert.ok(
        ingressOf(frozen).every((ip) => ip === frozen.spec!.clusterIP),
        'only its VIP, inside the cloud',
      );
    });

    it("members only from the Service's own namespace (or, without a selector, outside the cluster); the rest named in a Warning", async () => {
      const pod = async (namespace: string, name: string, ip: string) => {
        const body = { metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
        await h.client.create(resources.pods, body, { namespace });
        const status = { status: { podIP: ip, podIPs: [{ ip }] } };
        await h.client.patch(resources.pods, name, namespace, status, 'merge', { subresource: 'status' });
      };
      // red's pod (its own policies would isolate it) and blue's own.
      await pod(red, 'victim', '10.244.0.77');
      await pod(blue, 'mine', '10.244.0.66');
      const selectorless = { ...service(blue, 'hijack', { type: 'LoadBalancer' }).spec, selector: undefined };
      await create(blue, 'hijack', selectorless);
      await create(blue, 'picky', { type: 'LoadBalancer' });
      const hand = ['10.244.0.66', '10.244.0.77', '192.0.2.10', '10.96.0.1'];
      await h.client.create(resources.endpointslices, slice(blue, 'hijack', 'x', hand), { namespace: blue });
      const outside = ['10.244.0.66', '192.0.2.11'];
      await h.client.create(resources.endpointslices, slice(blue, 'picky', 'x', outside), { namespace: blue });
      const membersOf = async (name: string) => {
        const [lb] = await h.octavia.loadBalancers.list({ name: `raven/tenants/${blue}/${name}` });
        const pools = lb
          ? (await h.octavia.pools.list()).filter((p) => p.loadbalancers.some((l) => l.id === lb.id))
          : [];
        const members = await Promise.all(pools.map((p) => h.octavia.members.list(p.id)));
        return members
          .flat()
          .map((m) => m.address)
          .sort();
      };
      const settle = (name: string, want: string[]) =>
        waitFor(`${name}: members ${want.join(', ')}`, async () => (await membersOf(name)).join() === want.join(), {
          timeoutMs: 20_000,
        });
      await settle('hijack', ['10.244.0.66', '192.0.2.10']);
      await settle('picky', ['10.244.0.66']);
      const warnings = async (name: string) =>
        (await h.client.list(resources.events, { namespace: blue })).items
          .filter((e) => e.involvedObject.name === name && e.reason === 'EndpointRefused')
          .map((e) => e.message ?? '')
          .join('\n');
      // A slice ahead of its pod (two watches): refused until the pod is known, then a member with nothing else changed.
      await create(blue, 'late', { type: 'LoadBalancer' });
      await h.client.create(resources.endpointslices, slice(blue, 'late', 'x', ['10.244.0.88']), { namespace: blue });
      await warned(blue, 'late', 'EndpointRefused');
      // Converged without it (its ingress written, the pass that write caused done): only a look again adds it.
      await waitFor('blue/late has its ingress', async () => ingressOf(await get(blue, 'late')).length === 1, {
        timeoutMs: 20_000,
      });
      await warned(blue, 'late', 'EnsuredLoadBalancer');
      await pod(blue, 'late-pod', '10.244.0.88');
      await waitFor('blue/late: 10.244.0.88 a member', async () => (await membersOf('late')).join() === '10.244.0.88', {
        timeoutMs: 30_000,
      });
      await waitFor('the Warnings name what was refused', async () => {
        const [hijack, picky] = [await warnings('hijack'), await warnings('picky')];
        return /10\.244\.0\.77 \(the address of a pod of another namespace/.test(hijack) &&
          /10\.96\.0\.1 \(inside the cluster's pod or service ranges\)/.test(hijack) &&
          /192\.0\.2\.11 \(outside the cluster/.test(picky)
          ? true
          : undefined;
      });
    });

    it('a released address is held for its Service: another tenant waiting for it gets nothing, the redeploy gets it back', async () => {
      await create(blue, 'owner', { type: 'LoadBalancer' });
      const address = await waitFor(
        'blue/owner has a floating IP',
        async () => ingressOf(await get(blue, 'owner'))[0],
        {
          timeoutMs: 20_000,
        },
      );
      await create(red, 'thief', { type: 'LoadBalancer', loadBalancerIP: address });
      await warned(red, 'thief', 'FloatingIpNotGranted');
      await remove(blue, 'owner');
      const [kept, ...more] = await held(`${blue}/owner`);
      assert.equal(more.length, 0);
      assert.equal(kept?.floating_ip_address, address, 'the address is held for blue/owner, not freed');
      assert.equal(kept.port_id, null);
      assert.ok(kept.tags.includes('raven.kind=held'), kept.tags.join(','));
      // The thief is looked at again while the address is held: still refused.
      await touch(red, 'thief', 1);
      await create(blue, 'owner', { type: 'LoadBalancer', loadBalancerIP: address });
      await ingressIs(blue, 'owner', address);
      await touch(red, 'thief', 2);
      await waitFor('red/thief seen again', async () => (await get(red, 'thief')).metadata.finalizers?.length === 1);
      assert.deepEqual(ingressOf(await get(red, 'thief')), []);
      assert.deepEqual(await h.neutron.floatingIps.list({ description: `raven/tenants/${red}/thief` }), []);
    });

    it('a free address is allocated only when granted to the namespace; never outside its grants; the pools are read from Neutron', async () => {
      await create(blue, 'granted', { type: 'LoadBalancer', loadBalancerIP: '172.24.8.200' });
      await create(red, 'squat', { type: 'LoadBalancer', loadBalancerIP: '172.24.8.150' });
      await create(red, 'greedy', { type: 'ClusterIP', externalIPs: ['172.24.8.201'] });
      await ingressIs(blue, 'granted', '172.24.8.200');
      await warned(red, 'squat', 'FloatingIpNotGranted');
      await warned(red, 'greedy', 'FloatingIpNotGranted');
      for (const address of ['172.24.8.150', '172.24.8.201'])
        assert.deepEqual(await h.neutron.floatingIps.list({ floating_ip_address: address }), [], `${address} taken`);
      // With floatingIps.allowFreeAddresses, what an ungranted address must lie in: the external subnet's pool.
      const inPools = (address: string) =>
        inAllocationPools(h.neutron, h.externalNetworkId, undefined, address, AbortSignal.timeout(10_000));
      assert.deepEqual(
        [await inPools('172.24.8.50'), await inPools('172.24.8.150'), await inPools('172.24.8.1')],
        [true, false, false],
      );
    });

    /** One garbage-collection round with the load balancer verification, as the daemon runs it. */
    const sweep = () =>
      new GarbageCollectionLoop({
        collector: new GarbageCollector({
          cloud: { neutron: h.neutron, octavia: h.octavia },
          config: { clusterId: 'tenants', gc: { graceSeconds: 0 } },
          ownerExists: () => true,
          logger: silentLogger,
        }),
        cluster: { current: () => h.cluster, whenReady: () => Promise.resolve(h.cluster), recheck: () => undefined },
        intervalMs: 60_000,
        checks: [
          loadBalancerVerification({
            services: h.services.lister(),
            config: h.config,
            loadBalancersGone,
            converged: h.converged,
            logger: silentLogger,
          }),
        ],
        logger: silentLogger,
      }).round();

    it('a listener deleted out of band: the next GC round finds its Service, and the same load balancer gets it again', async () => {
      await create(blue, 'parts', { type: 'LoadBalancer' });
      await waitFor('blue/parts converged', () => h.converged.get(`${blue}/parts`), { timeoutMs: 20_000 });
      const [lb] = await h.octavia.loadBalancers.list({ name: `raven/tenants/${blue}/parts` });
      const listeners = () => h.octavia.listeners.list({ loadbalancer_id: lb!.id });
      const [lost] = await listeners();
      await waitFor('the converged pass recorded the listener', () =>
        h.converged.get(`${blue}/parts`)?.includes(lost!.id),
      );
      await h.octavia.listeners.delete(lost!.id);
      await waitFor('the listener gone, the load balancer ACTIVE', async () => {
        const [now] = await h.octavia.loadBalancers.list({ id: lb!.id });
        return (await listeners()).length === 0 && now?.provisioning_status === 'ACTIVE';
      });
      const round = await sweep();
      assert.ok(round?.findings.includes(`${blue}/parts`), JSON.stringify(round?.findings));
      const made = await waitFor('the listener made again', async () => {
        const now = await listeners();
        return now.length === 1 && now[0]!.id !== lost!.id ? now[0] : undefined;
      });
      assert.equal(made.protocol_port, lost!.protocol_port);
      const all = await h.octavia.loadBalancers.list({ name: `raven/tenants/${blue}/parts` });
      assert.deepEqual(
        all.map((l) => l.id),
        [lb!.id],
        'the load balancer was rebuilt, not repaired',
      );
      await remove(blue, 'parts');
    });

    it('a floating IP deleted out of band: the next GC round finds its Service, which gets one again', async () => {
      await create(blue, 'addressed', { type: 'LoadBalancer' });
      const before = await waitFor(
        'blue/addressed has a floating IP',
        async () => ingressOf(await get(blue, 'addressed'))[0],
        { timeoutMs: 20_000 },
      );
      const [lost] = await h.neutron.floatingIps.list({ floating_ip_address: before });
      assert.ok(lost?.port_id, 'the floating IP is on the VIP');
      // The sweep checks what a converged pass recorded: wait for the pass that recorded this floating IP (an earlier
      // one, before it was made, may have been recorded already).
      await waitFor(
        'blue/addressed converged with its floating IP',
        () => h.converged.get(`${blue}/addressed`)?.includes(lost.id),
        { timeoutMs: 20_000 },
      );
      await h.neutron.floatingIps.delete(lost.id);
      const round = await sweep();
      assert.ok(round?.findings.includes(`${blue}/addressed`), JSON.stringify(round?.findings));
      const again = await waitFor('a floating IP on the VIP again', async () => {
        const now = await h.neutron.floatingIps.list({ port_id: lost.port_id! });
        return now.length === 1 && now[0]!.id !== lost.id ? now[0] : undefined;
      });
      await ingressIs(blue, 'addressed', again.floating_ip_address);
      await remove(blue, 'addressed');
    });

    it('a load balancer deleted out of band: the next GC round finds it, the ingress is withdrawn with a Warning, one is rebuilt, the ingress comes back', async () => {
      const ingressSeen: string[][] = [];
      const off = h.services.addEventHandler({
        onUpdate: (_old, svc) => {
          if (svc.metadata.name === 'healed') ingressSeen.push(ingressOf(svc as KubeObject).map(String));
        },
      });
      try {
        await create(blue, 'healed', { type: 'LoadBalancer' });
        const address = await waitFor(
          'blue/healed has a floating IP',
          async () => ingressOf(await get(blue, 'healed'))[0],
          {
            timeoutMs: 20_000,
          },
        );
        const name = `raven/tenants/${blue}/healed`;
        const [lost] = await h.octavia.loadBalancers.list({ name });
        await h.octavia.loadBalancers.delete(lost!.id, { cascade: true });
        await waitFor('gone from Octavia', async () => (await h.octavia.loadBalancers.list({ name })).length === 0);
        ingressSeen.length = 0;
        const round = await sweep();
        assert.ok(round?.findings.includes(`${blue}/healed`), JSON.stringify(round?.findings));
        await warned(blue, 'healed', 'LoadBalancerMissing');
        await ingressIs(blue, 'healed', address);
        const rebuilt = await h.octavia.loadBalancers.list({ name });
        assert.equal(rebuilt.length, 1, 'no duplicate on heal');
        assert.notEqual(rebuilt[0]!.id, lost!.id);
        // Healed is converged: one more reconcile (what `raven plan` runs) leaves the load balancer as it is.
        const state = async () => {
          const [lb] = await h.octavia.loadBalancers.list({ name });
          const listeners = lb ? await h.octavia.listeners.list({ loadbalancer_id: lb.id }) : [];
          const pools = lb ? await h.octavia.pools.list({ loadbalancer_id: lb.id }) : [];
          const members = await Promise.all(pools.map((p) => h.octavia.members.list(p.id)));
          const fips = await h.neutron.floatingIps.list({ description: name });
          return JSON.stringify({ lb, listeners, pools, members, fips });
        };
        await waitFor('a reconcile of blue/healed changes nothing', async () => {
          const before = await state();
          await h.reconciler.reconcile(`${blue}/healed`, AbortSignal.timeout(10_000));
          return (await state()) === before ? true : undefined;
        });
        assert.ok(
          ingressSeen.some((ips) => ips.length === 0),
          `the ingress was never withdrawn: ${JSON.stringify(ingressSeen)}`,
        );
      } finally {
        off();
      }
    });

    it('keep-floatingip: one kept floating IP per Service name across re-creations, tagged for the cluster; the GC keeps it, --teardown frees it', async () => {
      const keep = { [`${P}keep-floatingip`]: 'true' };
      let address: string | undefined;
      for (let round = 0; round < 3; round++) {
        await create(blue, 'keeper', { type: 'LoadBalancer' }, keep);
        const now = await waitFor(
          'blue/keeper has a floating IP',
          async () => ingressOf(await get(blue, 'keeper'))[0],
          {
            timeoutMs: 20_000,
          },
        );
        assert.equal(now, address ?? now, 'the kept address comes back');
        address = now;
        await remove(blue, 'keeper');
        const kept = await held(`${blue}/keeper`);
        assert.deepEqual(
          kept.map((f) => [f.floating_ip_address, f.tags.includes('raven.kind=kept')]),
          [[address, true]],
        );
      }
      // Changing loadBalancerIP (within blue's grants) keeps each address let go, but at most one kept and one held.
      await create(blue, 'keeper', { type: 'LoadBalancer', loadBalancerIP: '172.24.8.204' }, keep);
      await ingressIs(blue, 'keeper', '172.24.8.204');
      for (const next of ['172.24.8.205', '172.24.8.206']) {
        const svc = await get(blue, 'keeper');
        await h.client.update(resources.services, { ...svc, spec: { ...svc.spec, loadBalancerIP: next } });
        await ingressIs(blue, 'keeper', next);
        const kinds = (await held(`${blue}/keeper`)).flatMap((f) => f.tags.filter((t) => t.startsWith('raven.kind=')));
        assert.deepEqual(kinds.sort(), ['raven.kind=held', 'raven.kind=kept'], `after ${next}`);
      }
      await remove(blue, 'keeper');
      // The quarantine ends: the GC frees held ones then (blue/owner's too), never kept ones.
      await collect({ at: Date.now() + 2 * 3600_000 });
      assert.equal((await held(`${blue}/keeper`)).length, 1, 'the GC freed a kept floating IP');
      await collect({ teardown: true });
      assert.deepEqual(await held(`${blue}/keeper`), [], '--teardown left the kept floating IP');
    });
  },
);
