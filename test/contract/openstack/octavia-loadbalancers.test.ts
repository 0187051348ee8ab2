/**
 * Octavia contract, load balancers: version document, create → PENDING_CREATE → ACTIVE, the 409 while pending, VIP
 * rules and the VIP's Neutron port, tags and pagination, 404s. Runs against every target in `contractTargets()`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from '../../support/node-test.ts';
import {
  OctaviaClient,
  isBadRequest,
  isNotFound,
  provisioningState,
  type LoadBalancer,
} from '../../../src/openstack/index.ts';
import {
  budget,
  callerProject,
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

/** MariaDB's utf8 general_ci order, which Octavia's tags and sorts follow. */
const ciOrder = (x: string, y: string): number =>
  x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : 0;

for (const factory of contractTargets()) {
  describe(`octavia load balancers (${factory.label})`, () => {
    let target: ContractTarget;
    let octavia: OctaviaClient;
    let net: VipNetwork;
    let limits: { waitMs: number; pollMs: number };
    /** Every load balancer a test created, removed in `after` whatever happened. */
    const created = new Set<string>();

    before(async () => {
      target = await factory.open();
      octavia = new OctaviaClient(target.session);
      limits = budget(target);
      net = await createVipNetwork(target.session, uniqueName('lb-net'));
    });

    after(async () => {
      try {
        for (const id of created) await removeLoadBalancer(octavia, id, limits);
        await deleteVipNetwork(target.session, net);
      } finally {
        await target.close();
      }
    });

    async function createLb(spec: { tags?: string[]; name?: string } = {}): Promise<LoadBalancer> {
      const lb = await octavia.loadBalancers.create({
        name: spec.name ?? uniqueName('lb'),
        vip_subnet_id: net.subnetId,
        tags: spec.tags,
      });
      created.add(lb.id);
      return lb;
    }

    it('lists its v2 versions at GET /; the current one supports tags', async () => {
      const versions = await octavia.versions();
      assert.equal(versions.current.major, 2);
      assert.ok(versions.minor >= 5, `current ${versions.current.id}`);
      assert.ok(versions.supports('tags'));
      assert.equal(versions.versions[0]?.id, 'v2.0');
      assert.equal(await octavia.versions(), versions, 'cached');
    });

    it('creates in PENDING_CREATE, refuses changes until ACTIVE, then updates; the VIP is an Octavia-owned Neutron port that outlives the load balancer', async () => {
      const name = uniqueName('lb');
      // Right after the create the load balancer is PENDING_CREATE, and a change is refused.
      let made: LoadBalancer | undefined;
      const early = await expectBusy(
        async () => (made = await createLb({ name, tags: ['raven-ct', name] })),
        () => octavia.loadBalancers.update(made?.id ?? '', { description: 'too early' }),
        () => Promise.resolve(),
      );
      assert.ok(made);
      const lb = made;
      assert.match(early.message, new RegExp(`409: Invalid state PENDING_CREATE of loadbalancer resource ${lb.id}`));
      assert.equal(lb.provisioning_status, 'PENDING_CREATE');
      assert.equal(provisioningState(lb).state, 'PENDING');
      assert.equal(lb.name, name);
      assert.equal(lb.vip_subnet_id, net.subnetId);
      assert.equal(lb.vip_network_id, net.networkId);
      assert.match(lb.vip_address, /^10\.77\.0\.\d+$/);
      assert.deepEqual(lb.tags, ['raven-ct', name].sort(ciOrder), "tags come back in the collation's order");
      assert.equal(lb.project_id, await callerProject(target));
      assert.match(lb.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/, 'UTC, seconds, no zone');
      assert.equal(lb.updated_at, null);

      const active = await waitForActive(octavia, lb.id, limits);
      assert.equal(provisioningState(active).state, 'ACTIVE');
      assert.ok(active.updated_at, 'the worker writing ACTIVE sets updated_at');
      assert.deepEqual(active.listeners, []);
      assert.deepEqual(active.pools, []);

      const port = await findPort(target.session, lb.vip_port_id);
      assert.ok(port, `VIP port ${lb.vip_port_id} exists in Neutron`);
      assert.equal(port.device_owner, 'Octavia');
      assert.equal(port.device_id, `lb-${lb.id}`);
      assert.equal(port.name, `octavia-lb-${lb.id}`);
      assert.equal(port.admin_state_up, false);
      assert.deepEqual(
        port.fixed_ips.map((ip) => [ip.subnet_id, ip.ip_address]),
        [[net.subnetId, lb.vip_address]],
      );

      const tree = await octavia.loadBalancers.statusTree(lb.id);
      assert.equal(tree.id, lb.id);
      assert.equal(tree.provisioning_status, 'ACTIVE');
      assert.deepEqual(tree.listeners, []);
      const stats = await octavia.loadBalancers.stats(lb.id);
      for (const key of ['active_connections', 'bytes_in', 'bytes_out', 'request_errors', 'total_connections'] as const)
        assert.equal(typeof stats[key], 'number');

      // A change answers PENDING_UPDATE; a second change right behind it is refused with 409 until the first settles.
      const id = lb.id;
      let attempt = 0;
      const busy = await expectBusy(
        async () => {
          const updated = await octavia.loadBalancers.update(id, {
            description: `attempt ${++attempt}`,
            tags: ['raven-ct', name, 'updated'],
          });
          assert.equal(updated.provisioning_status, 'PENDING_UPDATE');
        },
        () => octavia.loadBalancers.update(id, { name }),
        () => waitForActive(octavia, id, limits),
      );
      assert.match(busy.message, new RegExp(`409: Invalid state PENDING_UPDATE of loadbalancer resource ${id}`));
      await waitForActive(octavia, id, limits);
      const after = await octavia.loadBalancers.get(lb.id);
      assert.equal(after.name, name);
      assert.match(after.description, /^attempt \d$/);
      assert.deepEqual([...(after.tags ?? [])].sort(), ['raven-ct', name, 'updated'].sort());

      assert.equal(await octavia.loadBalancers.delete(lb.id), true);
      await waitForGone(`load balancer ${lb.id}`, () => octavia.loadBalancers.find(lb.id), limits);
      created.delete(lb.id);
      assert.equal(await octavia.loadBalancers.delete(lb.id), false, 'a second delete finds nothing');

      // Real Octavia (noop worker) does not release the VIP port: it stays until someone deletes it.
      const leaked = await findPort(target.session, lb.vip_port_id);
      assert.equal(leaked?.device_id, `lb-${lb.id}`);
      await target.session.request({ service: 'network', method: 'DELETE', path: `/v2.0/ports/${lb.vip_port_id}` });
    });

    it('needs a VIP subnet or network: no VIP is a 400, and a port whose subnet cannot be determined is a 400', async () => {
      await assert.rejects(
        octavia.loadBalancers.create({ name: uniqueName('lb-novip') }),
        (err) =>
          isBadRequest(err) &&
          /VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id\./.test(err.message),
      );
      // A port without fixed IPs: neither it nor the request names a subnet.
      const port = await target.session.request<{ port: { id: string } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/ports',
        body: { port: { network_id: net.networkId, name: uniqueName('vip-port'), fixed_ips: [] } },
      });
      const name = uniqueName('lb-portonly');
      try {
        await assert.rejects(
          octavia.loadBalancers.create({ name, vip_port_id: port.body.port.id }),
          (err) => isBadRequest(err) && /VIP port's subnet could not be determined/.test(err.message),
        );
      } finally {
        for (const lb of await octavia.loadBalancers.list({ name })) created.add(lb.id);
        await target.session.request({
          service: 'network',
          method: 'DELETE',
          path: `/v2.0/ports/${port.body.port.id}`,
        });
      }
    });

    it('filters by tags, name and fields, and pages with limit and marker', async () => {
      const run = uniqueName('tag');
      const [a, b, ab] = await Promise.all([
        createLb({ tags: [run, `${run}-a`] }),
        createLb({ tags: [run, `${run}-b`] }),
        createLb({ tags: [run, `${run}-a`, `${run}-b`] }),
      ]);
      assert.ok(a && b && ab);
      const ids = (lbs: LoadBalancer[]): string[] => lbs.map((lb) => lb.id).sort();

      assert.deepEqual(ids(await octavia.loadBalancers.list({ tags: [run] })), ids([a, b, ab]));
      assert.deepEqual(ids(await octavia.loadBalancers.list({ tags: [run, `${run}-a`] })), ids([a, ab]));
      assert.deepEqual(
        ids(await octavia.loadBalancers.list({ 'tags-any': [`${run}-a`, `${run}-b`] })),
        ids([a, b, ab]),
      );
      assert.deepEqual(ids(await octavia.loadBalancers.list({ tags: [run], 'not-tags': [`${run}-a`] })), ids([b]));
      assert.deepEqual(
        ids(await octavia.loadBalancers.list({ tags: [run], 'not-tags-any': [`${run}-a`, `${run}-b`] })),
        [],
      );
      assert.deepEqual(ids(await octavia.loadBalancers.list({ name: a.name })), [a.id]);
      assert.deepEqual(ids(await octavia.loadBalancers.list({ vip_port_id: b.vip_port_id })), [b.id]);

      const narrow = await octavia.loadBalancers.list({ name: a.name, fields: ['id', 'name'] });
      assert.deepEqual(narrow, [{ id: a.id, name: a.name }]);

      // The default order is oldest first: created_at, then id, ascending (case-insensitively, as MariaDB compares).
      const byAge = [a, b, ab]
        .sort((x, y) => x.created_at.localeCompare(y.created_at) || ciOrder(x.id, y.id))
        .map((lb) => lb.id);
      assert.deepEqual(
        (await octavia.loadBalancers.list({ tags: [run] })).map((lb) => lb.id),
        byAge,
      );
      assert.deepEqual(
        (await octavia.loadBalancers.list({ tags: [run], sort: 'created_at:desc,id:desc' })).map((lb) => lb.id),
        [...byAge].reverse(),
      );

      const first = await octavia.loadBalancers.listPage({ tags: [run], limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.nextMarker, 'a full page links the next one');
      const second = await octavia.loadBalancers.listPage({ tags: [run], limit: 2, marker: first.nextMarker });
      assert.equal(second.items.length, 1);
      assert.equal(second.nextMarker, undefined, 'a short page is the last');
      assert.deepEqual(ids([...first.items, ...second.items]), ids([a, b, ab]));
      assert.deepEqual(
        ids(await octavia.loadBalancers.list({ tags: [run], limit: 1 })),
        ids([a, b, ab]),
        'list follows every page',
      );

      await Promise.all([a, b, ab].map((lb) => waitForActive(octavia, lb.id, limits)));
      await Promise.all(
        [a, b, ab].map(async (lb) => {
          assert.equal(await octavia.loadBalancers.delete(lb.id), true);
          await waitForGone(`load balancer ${lb.id}`, () => octavia.loadBalancers.find(lb.id), limits);
          created.delete(lb.id);
        }),
      );
    });

    it('answers 404 for a load balancer that does not exist', async () => {
      const id = randomUUID();
      await assert.rejects(
        octavia.loadBalancers.get(id),
        (err) => isNotFound(err) && err.message.includes(`Load Balancer ${id} not found.`),
      );
      assert.equal(await octavia.loadBalancers.find(id), undefined);
      assert.equal(await octavia.loadBalancers.delete(id, { cascade: true }), false);
      await assert.rejects(octavia.loadBalancers.update(id, { name: 'x' }), isNotFound);
      assert.equal(provisioningState(await octavia.loadBalancers.find(id)).state, 'DELETED');
      await assert.rejects(
        octavia.loadBalancers.list({ bogus: 'x' }),
        (err) => isBadRequest(err) && err.message.includes('One or more arguments are either duplicate or invalid'),
      );
    });
  });
}
