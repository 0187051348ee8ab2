import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { waitFor } from '../../../test/support/wait.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { resources } from '../../kube/client/index.ts';
import { provisioningState, type LoadBalancer } from '../../openstack/index.ts';
import { ownerOf } from '../network/index.ts';
import { eventReasons, service, slice, startSimHarness, type Harness } from '../../../test/support/service-harness.ts';
import { LB_FINALIZER } from './types.ts';

const ns = 'shop';

describe(
  'ServiceReconciler: Services → Octavia (embedded API server + OpenStack simulator, real Controller)',
  { timeout: 120_000 },
  () => {
    let h: Harness;

    before(async () => {
      h = await startSimHarness({
        auth: 'keystone',
        provisioningDelayMs: 20,
        clusterId: 'svc',
        externalCidr: '172.24.4.0/24',
        // A free address is Raven's to allocate only when granted to the namespace.
        grants: [{ namespace: ns, cidrs: ['172.24.4.100/32'] }],
      });
      await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await h?.stop();
    });

    const lbsOf = async (name: string) => h.octavia.loadBalancers.list({ name: `raven/svc/${ns}/${name}` });
    /**
     * The one load balancer of a Service once it is ACTIVE with `listeners` listeners whose pools hold `members`
     * members in all.
     */
    const settled = (name: string, listeners: number, members: number) =>
      waitFor(
        `${name}: ACTIVE with ${listeners} listeners and ${members} members`,
        async () => {
          const [lb, ...more] = await lbsOf(name);
          assert.equal(more.length, 0, 'a second load balancer');
          if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
          const ls = (await h.octavia.listeners.list()).filter((l) => l.loadbalancers.some((r) => r.id === lb.id));
          const ms = await Promise.all(
            ls.map((l) => (l.default_pool_id ? h.octavia.members.list(l.default_pool_id) : Promise.resolve([]))),
          );
          return ls.length === listeners && ms.flat().length === members
            ? { lb, listeners: ls, members: ms }
            : undefined;
        },
        { timeoutMs: 15_000 },
      );
    const get = (name: string) => h.client.get(resources.services, name, ns);
    const ingressOf = (svc: KubeObject) =>
      ((svc.status as { loadBalancer?: { ingress?: { ip: string }[] } } | undefined)?.loadBalancer?.ingress ?? []).map(
        (i) => i.ip,
      );

    it('type LoadBalancer: LB at the clusterIP on a Raven VIP port, a listener + pool per port, ready members, a floating IP in status', async () => {
      const created = await h.client.create(
        resources.services,
        service(ns, 'web', {
          type: 'LoadBalancer',
          ports: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
          ],
        }),
        { namespace: ns },
      );
      const uid = created.metadata.uid!;
      const clusterIP = created.spec!.clusterIP!;
      await h.client.create(
        resources.endpointslices,
        slice(
          ns,
          'web',
          'a',
          ['10.244.0.10', '10.244.0.11'],
          ['10.244.0.12'],
          [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'dns', port: 5353, protocol: 'UDP' },
          ],
        ),
        { namespace: ns },
      );
      const { lb, listeners, members } = await settled('web', 2, 4);
      assert.equal(lb.vip_address, clusterIP);
      assert.equal(lb.vip_subnet_id, h.cluster.serviceSubnet!.subnetId);
      assert.deepEqual(ownerOf(lb.tags), { cluster: 'svc', kind: 'service', uid });
      const vip = await h.neutron.ports.get(lb.vip_port_id);
      assert.equal(vip.name, `raven/svc/${ns}/web/vip`);
      assert.deepEqual(ownerOf(vip.tags), { cluster: 'svc', kind: 'service', uid });
      assert.deepEqual([vip.fixed_ips[0]?.ip_address, vip.device_owner, vip.device_id], [clusterIP, '', '']);
      assert.deepEqual(listeners.map((l) => `${l.protocol}:${l.protocol_port} ${l.name}`).sort(), [
        `TCP:80 raven/svc/${ns}/web/http`,
        `UDP:53 raven/svc/${ns}/web/dns`,
      ]);
      for (const [i, l] of listeners.entries()) {
        const pool = await h.octavia.pools.get(l.default_pool_id!);
        assert.deepEqual([pool.protocol, pool.lb_algorithm, pool.name], [l.protocol, 'ROUND_ROBIN', l.name]);
        const port = l.protocol === 'TCP' ? 8080 : 5353;
        assert.deepEqual(
          members[i]!.map((m) => `${m.address}:${m.protocol_port}`).sort(),
          [`10.244.0.10:${port}`, `10.244.0.11:${port}`],
          'only ready endpoints, on the slice port',
        );
        assert.ok(members[i]!.every((m) => m.subnet_id === h.cluster.podSubnet!.subnetId));
      }
      const svc = await waitFor('ingress in status', async () => {
        const s = await get('web');
        return ingressOf(s).length > 0 ? s : undefined;
      });
      const [fip, ...moreFips] = await h.neutron.floatingIps.list({ port_id: vip.id });
      assert.equal(moreFips.length, 0);
      assert.deepEqual(ingressOf(svc), [fip!.floating_ip_address]);
      assert.equal(fip!.floating_network_id, h.externalNetworkId);
      assert.deepEqual(ownerOf(fip!.tags), { cluster: 'svc', kind: 'service', uid });
      assert.deepEqual(svc.metadata.finalizers, [LB_FINALIZER]);
      await waitFor('events', async () => {
        const reasons = await eventReasons(h.client, ns, 'web');
        return reasons.includes('EnsuringLoadBalancer') && reasons.includes('EnsuredLoadBalancer');
      });
    });

    it('a port added → one new listener on the same load balancer; endpoints changing → the member set follows', async () => {
      const before = (await settled('web', 2, 4)).lb;
      const svc = await get('web');
      const spec = svc.spec ?? {};
      await h.client.update(resources.services, {
        ...svc,
        spec: { ...spec, ports: [...(spec.ports ?? []), { name: 'https', port: 443, targetPort: 8443 }] },
      });
      const grown = await settled('web', 3, 4);
      assert.equal(grown.lb.id, before.id, 'the load balancer was re-created for a port change');
      await h.client.create(
        resources.endpointslices,
        slice(
          ns,
          'web',
          'b',
          ['10.244.0.20'],
          [],
          [
            { name: 'https', port: 8443, protocol: 'TCP' },
            { name: 'http', port: 8080, protocol: 'TCP' },
          ],
        ),
        { namespace: ns },
      );
      const more = await settled('web', 3, 6);
      assert.equal(more.lb.id, before.id);
      await h.client.delete(resources.endpointslices, 'web-a', ns);
      const fewer = await settled('web', 3, 2);
      const all = fewer.members
        .flat()
        .map((m) => `${m.address}:${m.protocol_port}`)
        .sort();
      assert.deepEqual(all, ['10.244.0.20:8080', '10.244.0.20:8443']);
      assert.equal(fewer.lb.id, before.id);
      assert.equal((await lbsOf('web')).length, 1);
    });

    it('externalIPs (ClusterIP) get floating IPs at those addresses; loadBalancerIP naming an existing floating IP granted to it is associated, not created; one not granted is refused', async () => {
      const user = await h.neutron.floatingIps.create({
        floating_network_id: h.externalNetworkId,
        floating_ip_address: '172.24.4.200',
      });
      // The cloud's owner grants it to this Service; one granted to nobody stays where it is.
      await h.neutron.tags.replace('floatingips', user.id, [`raven.grant=${ns}/pinned`]);
      const other = await h.neutron.floatingIps.create({
        floating_network_id: h.externalNetworkId,
        floating_ip_address: '172.24.4.201',
      });
      await h.client.create(resources.services, service(ns, 'ext', { externalIPs: ['172.24.4.100'] }), {
        namespace: ns,
      });
      await h.client.create(resources.services, service(ns, 'greedy', { externalIPs: ['172.24.4.201'] }), {
        namespace: ns,
      });
      await h.client.create(
        resources.services,
        service(ns, 'pinned', { type: 'LoadBalancer', loadBalancerIP: '172.24.4.200' }),
        { namespace: ns },
      );
      const ext = (await settled('ext', 1, 0)).lb;
      const pinned = (await settled('pinned', 1, 0)).lb;
      const extFips = await waitFor('the external IP, tagged', async () => {
        const fips = await h.neutron.floatingIps.list({ port_id: ext.vip_port_id });
        return fips.length > 0 && fips.every((f) => f.tags.length > 0) ? fips : undefined;
      });
      assert.deepEqual(
        extFips.map((f) => f.floating_ip_address),
        ['172.24.4.100'],
      );
      assert.equal(ownerOf(extFips[0]!.tags)?.kind, 'service');
      await waitFor('loadBalancerIP in status', async () => ingressOf(await get('pinned'))[0] === '172.24.4.200');
      assert.equal((await h.neutron.floatingIps.get(user.id)).port_id, pinned.vip_port_id);
      await waitFor('greedy refused', async () =>
        (await eventReasons(h.client, ns, 'greedy')).includes('FloatingIpNotGranted'),
      );
      const untouched = await h.neutron.floatingIps.get(other.id);
      assert.deepEqual([untouched.port_id, untouched.tags], [null, []], 'a floating IP granted to nobody was taken');
      assert.deepEqual(ingressOf(await get('ext')), [], 'a ClusterIP service has no load balancer ingress');
      await h.client.delete(resources.services, 'pinned', ns);
      await waitFor('pinned gone', async () =>
        (await h.client.list(resources.services, { namespace: ns })).items.every((s) => s.metadata.name !== 'pinned'),
      );
      const kept = await h.neutron.floatingIps.get(user.id);
      assert.equal(kept.port_id, null, "the user's floating IP is disassociated");
      assert.deepEqual(kept.tags, [`raven.grant=${ns}/pinned`], "and never tagged as Raven's");
    });

    it('delete → load balancer and VIP port gone, the floating IP held for the name, then the finalizer comes off and the Service goes', async () => {
      const { lb } = await settled('web', 3, 2);
      const fips = await h.neutron.floatingIps.list({ port_id: lb.vip_port_id });
      assert.equal(fips.length, 1);
      await h.client.delete(resources.services, 'web', ns);
      await waitFor(
        'the Service gone',
        async () =>
          (await h.client.list(resources.services, { namespace: ns })).items.every((s) => s.metadata.name !== 'web'),
        { timeoutMs: 15_000 },
      );
      assert.deepEqual(await lbsOf('web'), []);
      assert.equal((await h.neutron.ports.list({ id: lb.vip_port_id })).length, 0, 'the VIP port leaked');
      // Held for shop/web through the quarantine (a redeploy gets it back), tagged so the GC frees it afterwards.
      const [held] = await h.neutron.floatingIps.list({ id: fips[0]!.id });
      assert.equal(held?.port_id, null);
      assert.ok(held.tags.includes('raven.cluster=svc') && held.tags.includes('raven.kind=held'), held.tags.join());
    });

    it('plain ClusterIP, headless and ExternalName Services get nothing; LoadBalancer → ClusterIP tears the load balancer down', async () => {
      await h.client.create(resources.services, service(ns, 'plain'), { namespace: ns });
      await h.client.create(resources.services, service(ns, 'headless', { clusterIP: 'None' }), { namespace: ns });
      await h.client.create(
        resources.services,
        {
          ...service(ns, 'alias', { type: 'ExternalName', externalName: 'example.com' }),
          spec: { type: 'ExternalName', externalName: 'example.com' },
        },
        { namespace: ns },
      );
      await h.client.create(resources.services, service(ns, 'flip', { type: 'LoadBalancer' }), { namespace: ns });
      const { lb } = await settled('flip', 1, 0);
      await waitFor('flip ingress', async () => ingressOf(await get('flip')).length === 1);
      const svc = await get('flip');
      const { nodePort: _n, ...port } = svc.spec!.ports![0]!;
      await h.client.update(resources.services, {
        ...svc,
        spec: { ...svc.spec, type: 'ClusterIP', ports: [port] },
      });
      const after = await waitFor(
        'flip: finalizer off',
        async () => {
          const s = await get('flip');
          return s.metadata.finalizers?.length ? undefined : s;
        },
        { timeoutMs: 15_000 },
      );
      assert.deepEqual(ingressOf(after), []);
      assert.equal((await lbsOf('flip')).length, 0);
      assert.equal((await h.neutron.ports.list({ id: lb.vip_port_id })).length, 0);
      for (const name of ['plain', 'headless', 'alias']) {
        assert.equal((await lbsOf(name)).length, 0, `${name} got a load balancer`);
        assert.equal((await get(name)).metadata.finalizers, undefined);
      }
      const all: LoadBalancer[] = await h.octavia.loadBalancers.list({ tags: ['raven.cluster=svc'] });
      assert.deepEqual(all.map((l) => l.name).sort(), [`raven/svc/${ns}/ext`, `raven/svc/${ns}/greedy`]);
    });
  },
);
