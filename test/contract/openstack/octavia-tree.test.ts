/**
 * Octavia contract, below the load balancer: listener → pool → members → health monitor one call at a time (each
 * waits for ACTIVE, as a reconciler would requeue), batch member updates, delete-with-children, and the
 * fully-populated create (whose children never leave PENDING_CREATE on Zed) with a cascade delete. Runs against
 * every target in `contractTargets()`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { OctaviaClient, isBadRequest, isImmutable, type Member } from '../../../src/openstack/index.ts';
import {
  budget,
  createVipNetwork,
  deleteVipNetwork,
  expectBusy,
  findPort,
  removeLoadBalancer,
  waitForActive,
  waitForGone,
  type VipNetwork,
} from './octavia-fixture.ts';
import { contractTargets, uniqueName, type ContractTarget } from './target.ts';

for (const factory of contractTargets()) {
  describe(`octavia listeners, pools, members, health monitors (${factory.label})`, () => {
    let target: ContractTarget;
    let octavia: OctaviaClient;
    let net: VipNetwork;
    let limits: { waitMs: number; pollMs: number };
    const created = new Set<string>();

    before(async () => {
      target = await factory.open();
      octavia = new OctaviaClient(target.session);
      limits = budget(target);
      net = await createVipNetwork(target.session, uniqueName('tree-net'));
    });

    after(async () => {
      try {
        for (const id of created) await removeLoadBalancer(octavia, id, limits);
        await deleteVipNetwork(target.session, net);
      } finally {
        await target.close();
      }
    });

    const endpoints = (members: Member[]): string[] => members.map((m) => `${m.address}:${m.protocol_port}`).sort();

    it('builds a load balancer one object at a time, updates each, batch-replaces members, and refuses to delete it while it has children', async () => {
      const tag = uniqueName('tree');
      const lb = await octavia.loadBalancers.create({ name: tag, vip_subnet_id: net.subnetId, tags: [tag] });
      created.add(lb.id);
      await waitForActive(octavia, lb.id, limits);
      const settle = (): Promise<unknown> => waitForActive(octavia, lb.id, limits);

      // The load balancer is PENDING_UPDATE while a listener is built: a change to any child is refused too.
      const listener = await octavia.listeners.create({
        loadbalancer_id: lb.id,
        name: `${tag}-l`,
        protocol: 'TCP',
        protocol_port: 80,
        tags: [tag],
      });
      assert.equal(listener.provisioning_status, 'PENDING_CREATE');
      assert.deepEqual(listener.loadbalancers, [{ id: lb.id }]);
      let attempt = 0;
      const busy = await expectBusy(
        () =>
          attempt++ === 0
            ? Promise.resolve()
            : octavia.listeners.update(listener.id, { description: `attempt ${attempt}` }),
        () => octavia.listeners.update(listener.id, { name: `${tag}-l` }),
        settle,
      );
      assert.match(busy.message, new RegExp(`409: Load Balancer ${lb.id} is immutable and cannot be updated\\.`));
      await settle();
      const built = await octavia.listeners.get(listener.id);
      assert.equal(built.provisioning_status, 'ACTIVE');
      assert.match(
        built.updated_at ?? '',
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/,
        'the worker writing ACTIVE sets updated_at (UTC, seconds, no zone)',
      );

      const pool = await octavia.pools.create({
        listener_id: listener.id,
        name: `${tag}-p`,
        protocol: 'TCP',
        lb_algorithm: 'ROUND_ROBIN',
        tags: [tag],
      });
      assert.equal(pool.provisioning_status, 'PENDING_CREATE');
      await settle();
      assert.equal((await octavia.listeners.get(listener.id)).default_pool_id, pool.id);
      assert.equal('healthmonitor_id' in (await octavia.pools.get(pool.id)), false, 'no monitor, no healthmonitor_id');

      const member = await octavia.members.create(pool.id, {
        address: '10.77.0.10',
        protocol_port: 8080,
        subnet_id: net.subnetId,
        tags: [tag],
      });
      assert.equal(member.provisioning_status, 'PENDING_CREATE');
      await settle();
      assert.equal((await octavia.members.get(pool.id, member.id)).provisioning_status, 'ACTIVE');

      const monitor = await octavia.healthMonitors.create({
        pool_id: pool.id,
        name: `${tag}-hm`,
        type: 'TCP',
        delay: 5,
        timeout: 3,
        max_retries: 2,
        tags: [tag],
      });
      assert.equal(monitor.provisioning_status, 'PENDING_CREATE');
      assert.deepEqual(monitor.pools, [{ id: pool.id }]);
      await settle();
      const withMonitor = await octavia.pools.get(pool.id);
      assert.equal(withMonitor.healthmonitor_id, monitor.id);
      assert.deepEqual(withMonitor.members, [{ id: member.id }]);
      assert.deepEqual(withMonitor.tags, [tag]);
      // No health manager runs: the monitor reads ONLINE once ACTIVE; a member made before it stays NO_MONITOR.
      assert.equal((await octavia.healthMonitors.get(monitor.id)).operating_status, 'ONLINE');
      assert.equal((await octavia.members.get(pool.id, member.id)).operating_status, 'NO_MONITOR');

      // Lists and filters.
      assert.deepEqual(
        (await octavia.listeners.list({ loadbalancer_id: lb.id })).map((l) => l.id),
        [listener.id],
      );
      assert.deepEqual(
        (await octavia.pools.list({ loadbalancer_id: lb.id })).map((p) => p.id),
        [pool.id],
      );
      assert.deepEqual(
        (await octavia.healthMonitors.list({ tags: [tag] })).map((h) => h.id),
        [monitor.id],
      );
      assert.deepEqual(
        (await octavia.members.list(pool.id, { tags: [tag] })).map((m) => m.id),
        [member.id],
      );
      assert.deepEqual(await octavia.listeners.list({ tags: [tag], fields: ['id', 'protocol_port'] }), [
        { id: listener.id, protocol_port: 80 },
      ]);

      // Updates: each answers PENDING_UPDATE and settles.
      assert.equal(
        (await octavia.listeners.update(listener.id, { name: `${tag}-l2`, connection_limit: 100 })).provisioning_status,
        'PENDING_UPDATE',
      );
      await settle();
      assert.equal(
        (await octavia.pools.update(pool.id, { lb_algorithm: 'LEAST_CONNECTIONS' })).provisioning_status,
        'PENDING_UPDATE',
      );
      await settle();
      assert.equal(
        (await octavia.members.update(pool.id, member.id, { weight: 5 })).provisioning_status,
        'PENDING_UPDATE',
      );
      await settle();
      assert.equal(
        (await octavia.healthMonitors.update(monitor.id, { delay: 7 })).provisioning_status,
        'PENDING_UPDATE',
      );
      await settle();
      assert.equal((await octavia.listeners.get(listener.id)).connection_limit, 100);
      assert.equal((await octavia.pools.get(pool.id)).lb_algorithm, 'LEAST_CONNECTIONS');
      assert.equal((await octavia.members.get(pool.id, member.id)).weight, 5);
      assert.equal((await octavia.healthMonitors.get(monitor.id)).delay, 7);

      // Batch update replaces the member set: .10 goes, .11 and .12 come.
      await octavia.members.batchUpdate(pool.id, [
        { address: '10.77.0.11', protocol_port: 8080, subnet_id: net.subnetId },
        { address: '10.77.0.12', protocol_port: 8080, subnet_id: net.subnetId, weight: 3 },
      ]);
      await settle();
      const replaced = await octavia.members.list(pool.id);
      assert.deepEqual(endpoints(replaced), ['10.77.0.11:8080', '10.77.0.12:8080']);
      assert.ok(replaced.every((m) => m.provisioning_status === 'ACTIVE'));
      assert.ok(
        replaced.every((m) => m.operating_status === 'OFFLINE'),
        'members made while the pool has a monitor are OFFLINE',
      );
      assert.equal(replaced.find((m) => m.address === '10.77.0.12')?.weight, 3);
      assert.equal(await octavia.members.find(pool.id, member.id), undefined);
      if ((await octavia.versions()).supports('additiveMemberBatch')) {
        await octavia.members.batchUpdate(
          pool.id,
          [{ address: '10.77.0.13', protocol_port: 8080, subnet_id: net.subnetId }],
          { additiveOnly: true },
        );
        await settle();
        assert.deepEqual(endpoints(await octavia.members.list(pool.id)), [
          '10.77.0.11:8080',
          '10.77.0.12:8080',
          '10.77.0.13:8080',
        ]);
      }

      const status = await octavia.loadBalancers.statusTree(lb.id);
      assert.equal(status.listeners[0]?.id, listener.id);
      assert.equal(status.listeners[0]?.pools[0]?.id, pool.id);
      assert.equal(status.listeners[0]?.pools[0]?.health_monitor?.id, monitor.id);
      assert.ok((status.listeners[0]?.pools[0]?.members.length ?? 0) >= 2);

      await assert.rejects(
        octavia.loadBalancers.delete(lb.id),
        (err) =>
          isBadRequest(err) && new RegExp(`Cannot delete Load Balancer ${lb.id} - it has children`).test(err.message),
      );

      // Take it apart bottom-up; each delete answers true, and false once the object is gone.
      assert.equal(await octavia.healthMonitors.delete(monitor.id), true);
      await settle();
      await waitForGone(`health monitor ${monitor.id}`, () => octavia.healthMonitors.find(monitor.id), limits);
      assert.equal(await octavia.healthMonitors.delete(monitor.id), false);
      assert.ok(
        (await octavia.members.list(pool.id)).every((m) => m.operating_status === 'NO_MONITOR'),
        'without the monitor, members are NO_MONITOR',
      );
      for (const m of await octavia.members.list(pool.id)) {
        assert.equal(await octavia.members.delete(pool.id, m.id), true);
        await settle();
      }
      assert.deepEqual(await octavia.members.list(pool.id), []);
      assert.equal(await octavia.members.delete(pool.id, member.id), false);
      assert.equal(await octavia.pools.delete(pool.id), true);
      await settle();
      await waitForGone(`pool ${pool.id}`, () => octavia.pools.find(pool.id), limits);
      assert.equal(await octavia.listeners.delete(listener.id), true);
      await settle();
      await waitForGone(`listener ${listener.id}`, () => octavia.listeners.find(listener.id), limits);
      assert.equal(await octavia.listeners.delete(listener.id), false);
      assert.equal(await octavia.loadBalancers.delete(lb.id), true);
      await waitForGone(`load balancer ${lb.id}`, () => octavia.loadBalancers.find(lb.id), limits);
      created.delete(lb.id);
    });

    it('creates a fully-populated load balancer: only the load balancer goes ACTIVE, its children stay PENDING_CREATE (Zed), and a cascade delete removes it all (the VIP port stays)', async () => {
      const tag = uniqueName('full');
      const tree = await octavia.loadBalancers.createTree({
        name: tag,
        vip_subnet_id: net.subnetId,
        tags: [tag],
        listeners: [
          {
            name: `${tag}-http`,
            protocol: 'HTTP',
            protocol_port: 80,
            tags: [tag],
            default_pool: {
              name: `${tag}-web`,
              protocol: 'HTTP',
              lb_algorithm: 'ROUND_ROBIN',
              tags: [tag],
              members: [
                { address: '10.77.0.21', protocol_port: 8080, subnet_id: net.subnetId },
                { address: '10.77.0.22', protocol_port: 8080, subnet_id: net.subnetId },
              ],
              healthmonitor: {
                type: 'HTTP',
                delay: 5,
                timeout: 3,
                max_retries: 2,
                url_path: '/healthz',
                expected_codes: '200',
              },
            },
          },
          {
            name: `${tag}-tcp`,
            protocol: 'TCP',
            protocol_port: 9000,
            default_pool: {
              name: `${tag}-raw`,
              protocol: 'TCP',
              lb_algorithm: 'SOURCE_IP',
              members: [{ address: '10.77.0.23', protocol_port: 9000 }],
            },
          },
        ],
      });
      created.add(tree.id);
      // The answer has the whole tree inline, everything PENDING_CREATE.
      assert.equal(tree.provisioning_status, 'PENDING_CREATE');
      assert.deepEqual(tree.listeners.map((l) => l.protocol_port).sort(), [80, 9000]);
      const http = tree.listeners.find((l) => l.protocol_port === 80);
      const tcp = tree.listeners.find((l) => l.protocol_port === 9000);
      assert.ok(http && tcp);
      assert.deepEqual([http.tags, tcp.tags], [[tag], []], 'tags default to []');
      assert.equal('loadbalancers' in http, false, 'a listener inside the tree has no loadbalancers');
      assert.equal(tree.pools.length, 2);
      const web = tree.pools.find((p) => p.name === `${tag}-web`);
      const raw = tree.pools.find((p) => p.name === `${tag}-raw`);
      assert.ok(web && raw);
      assert.deepEqual([http.default_pool_id, tcp.default_pool_id], [web.id, raw.id]);
      assert.deepEqual(endpoints(web.members), ['10.77.0.21:8080', '10.77.0.22:8080']);
      assert.deepEqual(
        raw.members.map((m) => m.subnet_id),
        [null],
        'subnet_id defaults to null',
      );
      // Zed leaves the monitor out of this answer (and healthmonitor_id too), although it was created.
      assert.equal(web.healthmonitor, null);
      assert.ok(tree.pools.every((p) => !('healthmonitor_id' in p) && !('loadbalancers' in p)));
      const inTree = [...tree.listeners, ...tree.pools, ...tree.pools.flatMap((p) => p.members)];
      assert.deepEqual([...new Set(inTree.map((o) => o.provisioning_status))], ['PENDING_CREATE']);

      // Zed's worker marks only the load balancer ACTIVE: it reads the load balancer before the API has committed
      // the children, so listeners, pools, members and the monitor stay PENDING_CREATE for good.
      const active = await waitForActive(octavia, tree.id, limits);
      assert.deepEqual(active.listeners.map((l) => l.id).sort(), [http.id, tcp.id].sort());
      const listeners = await octavia.listeners.list({ loadbalancer_id: tree.id });
      assert.deepEqual(
        listeners.map((l) => l.provisioning_status),
        ['PENDING_CREATE', 'PENDING_CREATE'],
      );
      const pools = await octavia.pools.list({ loadbalancer_id: tree.id });
      assert.deepEqual(
        pools.map((p) => p.provisioning_status),
        ['PENDING_CREATE', 'PENDING_CREATE'],
      );
      const webMembers = await octavia.members.list(web.id);
      assert.deepEqual(endpoints(webMembers), ['10.77.0.21:8080', '10.77.0.22:8080']);
      assert.ok(webMembers.every((m) => m.provisioning_status === 'PENDING_CREATE'));
      const monitorId = (await octavia.pools.get(web.id)).healthmonitor_id;
      assert.ok(monitorId, 'the monitor was created');
      const monitor = await octavia.healthMonitors.get(monitorId);
      assert.deepEqual(
        [monitor.type, monitor.url_path, monitor.expected_codes, monitor.http_method, monitor.provisioning_status],
        ['HTTP', '/healthz', '200', 'GET', 'PENDING_CREATE'],
      );
      assert.equal('healthmonitor_id' in (await octavia.pools.get(raw.id)), false, 'no monitor, no healthmonitor_id');
      // A pool that is not ACTIVE refuses member changes (the "busy" 409, here for ever).
      await assert.rejects(
        octavia.members.create(web.id, { address: '10.77.0.24', protocol_port: 8080 }),
        (err) => isImmutable(err) && err.message.includes(`Pool ${web.id} is immutable and cannot be updated.`),
      );

      assert.equal(await octavia.loadBalancers.delete(tree.id, { cascade: true }), true);
      await waitForGone(`load balancer ${tree.id}`, () => octavia.loadBalancers.find(tree.id), limits);
      created.delete(tree.id);
      for (const l of listeners) assert.equal(await octavia.listeners.find(l.id), undefined);
      for (const p of pools) assert.equal(await octavia.pools.find(p.id), undefined);
      assert.equal(await octavia.healthMonitors.find(monitorId), undefined);

      const vip = await findPort(target.session, tree.vip_port_id);
      assert.equal(vip?.device_owner, 'Octavia', 'the VIP port outlives a cascade delete');
      await target.session.request({ service: 'network', method: 'DELETE', path: `/v2.0/ports/${tree.vip_port_id}` });
    });
  });
}
