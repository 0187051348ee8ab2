/**
 * Neutron contract: ports — create/read/update/delete, filters, address and MAC conflicts, atomic bulk create,
 * concurrency, and binding with the ML2 `test` driver — once per target.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError, type Network, type Subnet } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import {
  addressesOf,
  closeNeutron,
  openNeutron,
  randomMac,
  tenantNetwork,
  uniqueName,
  type NeutronContext,
} from './neutron/fixtures.ts';

for (const factory of contractTargets()) {
  describe(`neutron ports (${factory.label})`, () => {
    let ctx: NeutronContext;
    let network: Network;
    let subnet: Subnet;
    before(async () => {
      ctx = await openNeutron(factory);
      // Random addresses come from .100 up, so the fixed ones the tests ask for (.50, .61, .70) are never taken by
      // chance.
      ({ network, subnet } = await tenantNetwork(ctx, '10.20.0.0/24', {
        allocation_pools: [{ start: '10.20.0.100', end: '10.20.0.254' }],
      }));
    });
    after(() => closeNeutron(ctx));

    /** Creates a port and registers its deletion. */
    async function port(spec: Omit<Parameters<NeutronContext['neutron']['ports']['create']>[0], 'network_id'> = {}) {
      const p = await ctx.neutron.ports.create({ network_id: network.id, name: uniqueName('port'), ...spec });
      ctx.cleanup.add(() => ctx.neutron.ports.delete(p.id));
      return p;
    }

    it('creates a port with an address from the subnet, reads, updates and deletes it', async () => {
      const { neutron } = ctx;
      const deviceId = uniqueName('pod-uid');
      const p = await port({ device_owner: 'compute:kuryr', device_id: deviceId });
      assert.equal(p.network_id, network.id);
      assert.equal(p.fixed_ips.length, 1);
      assert.equal(p.fixed_ips[0]!.subnet_id, subnet.id);
      assert.match(p.fixed_ips[0]!.ip_address, /^10\.20\.0\.(\d+)$/);
      assert.match(p.mac_address, /^fa:16:3e(:[0-9a-f]{2}){3}$/);
      assert.equal(p.status, 'DOWN');
      assert.equal(p['binding:vif_type'], 'unbound');
      assert.equal(p['binding:host_id'], '');
      assert.equal(p.device_owner, 'compute:kuryr');
      assert.equal(p.security_groups.length, 1, 'the project default security group');
      assert.deepEqual(p.allowed_address_pairs, []);
      assert.equal(p.project_id, ctx.projectId);

      const moved = await neutron.ports.update(p.id, {
        name: `${p.name}-b`,
        device_id: `${deviceId}-b`,
        allowed_address_pairs: [{ ip_address: '10.20.0.200', mac_address: 'fa:16:3e:00:00:c8' }],
      });
      assert.ok(moved.revision_number > p.revision_number);
      const read = await neutron.ports.get(p.id);
      assert.equal(read.name, `${p.name}-b`);
      assert.equal(read.device_id, `${deviceId}-b`);
      assert.deepEqual(read.allowed_address_pairs, [{ ip_address: '10.20.0.200', mac_address: 'fa:16:3e:00:00:c8' }]);
      assert.deepEqual(read.fixed_ips, p.fixed_ips);

      assert.equal(await neutron.ports.delete(p.id), true);
      assert.equal(await neutron.ports.delete(p.id), false);
      assert.deepEqual(await neutron.ports.list({ device_id: `${deviceId}-b` }), []);
    });

    it('fills in the port MAC for an allowed address pair given without one', async () => {
      const p = await port({ allowed_address_pairs: [{ ip_address: '10.20.0.201' }] });
      assert.deepEqual(p.allowed_address_pairs, [{ ip_address: '10.20.0.201', mac_address: p.mac_address }]);
      const moved = await ctx.neutron.ports.update(p.id, { allowed_address_pairs: [{ ip_address: '10.20.0.202/32' }] });
      assert.deepEqual(moved.allowed_address_pairs, [{ ip_address: '10.20.0.202/32', mac_address: p.mac_address }]);
      assert.deepEqual((await ctx.neutron.ports.get(p.id)).allowed_address_pairs, moved.allowed_address_pairs);
    });

    it('answers 404 PortNotFound, also for an id that is not a UUID', async () => {
      await assert.rejects(
        ctx.neutron.ports.get('00000000-0000-4000-8000-000000000000'),
        (err) => isOpenStackError(err, 'PortNotFound') && err.status === 404,
      );
      await assert.rejects(
        ctx.neutron.ports.get('not-a-uuid'),
        (err) => isOpenStackError(err, 'PortNotFound') && err.status === 404,
      );
      assert.equal(await ctx.neutron.ports.delete('not-a-uuid'), false);
      await assert.rejects(
        ctx.neutron.ports.create({ network_id: '00000000-0000-4000-8000-000000000000', name: uniqueName('port') }),
        (err) => isOpenStackError(err, 'NetworkNotFound') && err.status === 404,
      );
    });

    it('filters by device, owner, network, name, address, subnet, MAC, status and project', async () => {
      const { neutron } = ctx;
      const deviceId = uniqueName('dev');
      const a = await port({
        device_id: deviceId,
        device_owner: 'compute:kuryr',
        fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.20.0.61' }],
      });
      const b = await port({ device_id: deviceId, device_owner: 'compute:other' });
      const ids = (ps: { id: string }[]): string[] => ps.map((x) => x.id).sort();
      assert.deepEqual(ids(await neutron.ports.list({ device_id: deviceId })), ids([a, b]));
      assert.deepEqual(
        ids(await neutron.ports.list({ device_id: deviceId, device_owner: 'compute:kuryr', network_id: network.id })),
        [a.id],
      );
      assert.deepEqual(
        ids(
          await neutron.ports.list({
            device_id: [deviceId, 'nothing'],
            device_owner: ['compute:kuryr', 'compute:other'],
          }),
        ),
        ids([a, b]),
      );
      assert.deepEqual(ids(await neutron.ports.list({ name: b.name })), [b.id]);
      assert.deepEqual(ids(await neutron.ports.list({ fixed_ips: { ip_address: '10.20.0.61' } })), [a.id]);
      assert.deepEqual(
        ids(await neutron.ports.list({ fixed_ips: [{ subnet_id: subnet.id }], device_id: deviceId })),
        ids([a, b]),
      );
      assert.deepEqual(
        ids(await neutron.ports.list({ fixed_ips: { subnet_id: subnet.id, ip_address: '10.20.0.61' } })),
        [a.id],
      );
      assert.deepEqual(ids(await neutron.ports.list({ mac_address: b.mac_address })), [b.id]);
      assert.deepEqual(
        ids(await neutron.ports.list({ device_id: deviceId, status: 'DOWN', project_id: ctx.projectId })),
        ids([a, b]),
      );
      assert.deepEqual(await neutron.ports.list({ device_id: deviceId, status: 'ACTIVE' }), []);
      const [slim] = await neutron.ports.list({ id: a.id }, { fields: ['id', 'fixed_ips'] });
      assert.deepEqual(slim, { id: a.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.20.0.61' }] });
    });

    it('refuses a taken address (409 IpAddressAlreadyAllocated) and one outside the subnets (400 InvalidIpForNetwork)', async () => {
      const { neutron } = ctx;
      const first = await port({ fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.20.0.50' }] });
      assert.deepEqual(addressesOf(first), ['10.20.0.50']);
      const name = uniqueName('port');
      await assert.rejects(
        neutron.ports.create({ network_id: network.id, name, fixed_ips: [{ ip_address: '10.20.0.50' }] }),
        (err) =>
          isOpenStackError(err, 'IpAddressAlreadyAllocated') && err.status === 409 && err.code === 'OPENSTACK_CONFLICT',
      );
      await assert.rejects(
        neutron.ports.create({ network_id: network.id, name, fixed_ips: [{ ip_address: '10.99.0.5' }] }),
        (err) => isOpenStackError(err, 'InvalidIpForNetwork') && err.status === 400,
      );
      assert.deepEqual(await neutron.ports.list({ name }), []);
      assert.deepEqual(
        (await neutron.ports.list({ fixed_ips: { ip_address: '10.20.0.50' } })).map((p) => p.id),
        [first.id],
      );
    });

    it('refuses a MAC already used on the network (409 MacAddressInUse)', async () => {
      const mac = randomMac();
      const first = await port({ mac_address: mac });
      assert.equal(first.mac_address, mac);
      const name = uniqueName('port');
      await assert.rejects(
        ctx.neutron.ports.create({ network_id: network.id, name, mac_address: mac }),
        (err) => isOpenStackError(err, 'MacAddressInUse') && err.status === 409,
      );
      assert.deepEqual(await ctx.neutron.ports.list({ name }), []);
      assert.deepEqual(
        (await ctx.neutron.ports.list({ mac_address: mac })).map((p) => p.id),
        [first.id],
      );
    });

    it('creates ports in bulk, in request order', async () => {
      const { neutron } = ctx;
      const deviceId = uniqueName('bulk');
      const names = [0, 1, 2].map((i) => `${deviceId}-${i}`);
      const created = await neutron.ports.createBulk(
        names.map((name) => ({ network_id: network.id, name, device_id: deviceId, device_owner: 'compute:kuryr' })),
      );
      for (const p of created) ctx.cleanup.add(() => neutron.ports.delete(p.id));
      assert.deepEqual(
        created.map((p) => p.name),
        names,
      );
      assert.equal(new Set(created.flatMap(addressesOf)).size, 3);
      assert.deepEqual(
        (await neutron.ports.list({ device_id: deviceId }, { sortKey: 'name' })).map((p) => p.id),
        created.map((p) => p.id),
      );
      assert.deepEqual(await neutron.ports.createBulk([]), []);
    });

    it('bulk create is atomic: one bad entry and nothing is created', async () => {
      const { neutron } = ctx;
      const taken = await port({ fixed_ips: [{ ip_address: '10.20.0.70' }] });
      assert.deepEqual(addressesOf(taken), ['10.20.0.70']);
      const deviceId = uniqueName('bulk-bad');
      await assert.rejects(
        neutron.ports.createBulk([
          { network_id: network.id, name: `${deviceId}-ok`, device_id: deviceId },
          {
            network_id: network.id,
            name: `${deviceId}-bad`,
            device_id: deviceId,
            fixed_ips: [{ ip_address: '10.20.0.70' }],
          },
        ]),
        (err) => isOpenStackError(err, 'IpAddressAlreadyAllocated'),
      );
      assert.deepEqual(await neutron.ports.list({ device_id: deviceId }), []);
      assert.deepEqual(await neutron.ports.list({ name: `${deviceId}-ok` }), []);
    });

    it('allocates unique addresses to 50 concurrent creates on one /24', async () => {
      const { neutron } = ctx;
      const { network: net } = await tenantNetwork(ctx, '10.21.0.0/24');
      const deviceId = uniqueName('burst');
      const settled = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          neutron.ports.create({ network_id: net.id, name: `${deviceId}-${i}`, device_id: deviceId }),
        ),
      );
      for (const s of settled) if (s.status === 'fulfilled') ctx.cleanup.add(() => neutron.ports.delete(s.value.id));
      const failed = settled.filter((s) => s.status === 'rejected');
      assert.deepEqual(
        failed.map((f) => String(f.reason)),
        [],
      );
      const listed = await neutron.ports.list({ device_id: deviceId }, { fields: ['id', 'fixed_ips'] });
      assert.equal(listed.length, 50);
      const addresses = listed.flatMap(addressesOf);
      assert.equal(addresses.length, 50);
      assert.equal(new Set(addresses).size, 50);
      for (const a of addresses) assert.match(a, /^10\.21\.0\.(\d+)$/);
    });

    it('binds a port on host-ovs-filter-active: ACTIVE, vif_type ovs (ML2 test driver)', async () => {
      const { neutron } = ctx;
      const bound = await port({
        'binding:host_id': 'host-ovs-filter-active',
        device_owner: 'compute:kuryr',
        device_id: uniqueName('pod'),
      });
      const read = await neutron.ports.get(bound.id);
      assert.equal(read['binding:host_id'], 'host-ovs-filter-active');
      assert.equal(read['binding:vif_type'], 'ovs');
      assert.equal(read.status, 'ACTIVE');
      assert.deepEqual(
        (await neutron.ports.list({ 'binding:host_id': 'host-ovs-filter-active', id: bound.id })).map((p) => p.id),
        [bound.id],
      );

      const later = await port({ device_owner: 'compute:kuryr', device_id: uniqueName('pod') });
      assert.equal(later.status, 'DOWN');
      await neutron.ports.update(later.id, { 'binding:host_id': 'host-ovs-filter-active' });
      const rebound = await neutron.ports.get(later.id);
      assert.equal(rebound['binding:vif_type'], 'ovs');
      assert.equal(rebound.status, 'ACTIVE');
    });

    it('updates a port only at the expected revision; a stale If-Match (412) changes nothing', async () => {
      const { neutron } = ctx;
      const p = await port();
      await neutron.ports.update(p.id, { name: `${p.name}-x` }, { ifRevision: p.revision_number });
      const before = await neutron.ports.get(p.id);
      await assert.rejects(
        neutron.ports.update(p.id, { name: `${p.name}-y` }, { ifRevision: p.revision_number }),
        (err) => isOpenStackError(err, 'RevisionNumberConstraintFailed') && err.status === 412,
      );
      const after = await neutron.ports.get(p.id);
      assert.equal(after.name, `${p.name}-x`);
      assert.equal(after.revision_number, before.revision_number);
      const again = await neutron.ports.update(p.id, { name: `${p.name}-z` }, { ifRevision: after.revision_number });
      assert.equal(again.name, `${p.name}-z`);
    });

    it('bumps revision_number on every update, even a no-op one', async () => {
      const { neutron } = ctx;
      const p = await port();
      const same = await neutron.ports.update(p.id, { name: p.name });
      assert.equal(same.revision_number, p.revision_number + 1);
      assert.equal((await neutron.ports.get(p.id)).revision_number, same.revision_number);
    });

    it('a port description update is two revisions: the answer lags one behind, take If-Match revisions from a read', async () => {
      const { neutron } = ctx;
      const p = await port();
      const answered = await neutron.ports.update(p.id, { description: 'x' });
      assert.equal(answered.revision_number, p.revision_number + 1);
      const read = await neutron.ports.get(p.id);
      assert.equal(read.revision_number, p.revision_number + 2);
      await assert.rejects(neutron.ports.update(p.id, { name: 'y' }, { ifRevision: answered.revision_number }), (err) =>
        isOpenStackError(err, 'RevisionNumberConstraintFailed'),
      );
      assert.equal((await neutron.ports.update(p.id, { name: 'y' }, { ifRevision: read.revision_number })).name, 'y');
    });
  });
}
