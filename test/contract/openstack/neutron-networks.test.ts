/**
 * Neutron contract: networks, subnets, subnet pools, revisions and extensions, once per target (sim/real ×
 * keystone/noauth). Assertions are on state read back through the API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import { closeNeutron, openNeutron, tenantNetwork, uniqueName, type NeutronContext } from './neutron/fixtures.ts';

const MISSING = '00000000-0000-4000-8000-000000000000';

for (const factory of contractTargets()) {
  describe(`neutron networks and subnets (${factory.label})`, () => {
    let ctx: NeutronContext;
    before(async () => {
      ctx = await openNeutron(factory);
    });
    after(() => closeNeutron(ctx));

    it('creates, reads, updates, lists and deletes a network', async () => {
      const { neutron } = ctx;
      const name = uniqueName('net');
      const created = await neutron.networks.create({ name, description: 'ns default' });
      ctx.cleanup.add(() => neutron.networks.delete(created.id));
      assert.equal(created.name, name);
      assert.equal(created.status, 'ACTIVE');
      assert.equal(created['router:external'], false);
      assert.equal(created.admin_state_up, true);
      assert.deepEqual(created.tags, []);
      assert.deepEqual(created.subnets, []);
      assert.equal(created.project_id, ctx.projectId);
      assert.equal(created.tenant_id, ctx.projectId);

      const updated = await neutron.networks.update(created.id, { description: 'updated' });
      assert.equal(updated.description, 'updated');
      assert.ok(updated.revision_number > created.revision_number);

      const read = await neutron.networks.get(created.id);
      assert.equal(read.description, 'updated');
      assert.equal(read.revision_number, updated.revision_number);
      const byName = await neutron.networks.list({ name });
      assert.deepEqual(
        byName.map((n) => n.id),
        [created.id],
      );

      assert.equal(await neutron.networks.delete(created.id), true);
      assert.equal(await neutron.networks.delete(created.id), false);
      await assert.rejects(
        neutron.networks.get(created.id),
        (err) => isOpenStackError(err, 'NetworkNotFound') && err.status === 404,
      );
      assert.deepEqual(await neutron.networks.list({ name }), []);
    });

    it('answers 404 NetworkNotFound for a missing network', async () => {
      await assert.rejects(
        ctx.neutron.networks.get(MISSING),
        (err) => isOpenStackError(err, 'NetworkNotFound') && err.status === 404 && err.code === 'OPENSTACK_NOT_FOUND',
      );
      await assert.rejects(ctx.neutron.networks.update(MISSING, { name: 'x' }), (err) =>
        isOpenStackError(err, 'NetworkNotFound'),
      );
      assert.equal(await ctx.neutron.networks.delete(MISSING), false);
    });

    it('rejects tags in a network POST body (400) and creates nothing', async () => {
      const name = uniqueName('net');
      await assert.rejects(
        ctx.target.session.request({
          service: 'network',
          method: 'POST',
          path: '/v2.0/networks',
          body: { network: { name, tags: ['a'] } },
        }),
        (err) => isOpenStackError(err) && err.status === 400 && /tags/.test(err.message),
      );
      assert.deepEqual(await ctx.neutron.networks.list({ name }), []);
    });

    it('updates only at the expected revision (If-Match), 412 RevisionNumberConstraintFailed otherwise', async () => {
      const { neutron } = ctx;
      const net = await neutron.networks.create({ name: uniqueName('net') });
      ctx.cleanup.add(() => neutron.networks.delete(net.id));
      const first = await neutron.networks.update(net.id, { description: 'one' }, { ifRevision: net.revision_number });
      assert.equal(first.description, 'one');
      await assert.rejects(
        neutron.networks.update(net.id, { description: 'stale' }, { ifRevision: net.revision_number }),
        (err) => isOpenStackError(err, 'RevisionNumberConstraintFailed') && err.status === 412,
      );
      const read = await neutron.networks.get(net.id);
      assert.equal(read.description, 'one');
      assert.equal(read.revision_number, first.revision_number);
    });

    it('creates a subnet: gateway .1, pool .2–.254, listed on the network; rejects /33 and overlaps (InvalidInput)', async () => {
      const { neutron } = ctx;
      const { network, subnet } = await tenantNetwork(ctx, '10.10.0.0/24');
      assert.equal(subnet.cidr, '10.10.0.0/24');
      assert.equal(subnet.gateway_ip, '10.10.0.1');
      assert.deepEqual(subnet.allocation_pools, [{ start: '10.10.0.2', end: '10.10.0.254' }]);
      assert.equal(subnet.ip_version, 4);
      assert.equal(subnet.enable_dhcp, true);
      assert.equal(subnet.subnetpool_id, null);
      assert.deepEqual((await neutron.networks.get(network.id)).subnets, [subnet.id]);
      assert.deepEqual(
        (await neutron.subnets.list({ network_id: network.id })).map((s) => s.id),
        [subnet.id],
      );

      await assert.rejects(
        neutron.subnets.create({ network_id: network.id, ip_version: 4, cidr: '10.10.0.0/33' }),
        (err) => isOpenStackError(err, 'InvalidInput') && err.status === 400,
      );
      await assert.rejects(
        neutron.subnets.create({ network_id: network.id, ip_version: 4, cidr: '10.10.0.128/25' }),
        (err) => isOpenStackError(err, 'InvalidInput') && /overlap/.test(err.message),
      );
      assert.equal((await neutron.subnets.list({ network_id: network.id })).length, 1);

      const renamed = await neutron.subnets.update(subnet.id, { name: 'renamed', dns_nameservers: ['10.10.0.53'] });
      assert.equal(renamed.name, 'renamed');
      assert.deepEqual((await neutron.subnets.get(subnet.id)).dns_nameservers, ['10.10.0.53']);
    });

    it('counts a new subnet as a revision of its network', async () => {
      const { neutron } = ctx;
      const { network } = await tenantNetwork(ctx, '10.12.0.0/24');
      assert.equal((await neutron.networks.get(network.id)).revision_number, network.revision_number + 1);
    });

    it('allocates subnets from a pool: consecutive CIDRs, explicit and default prefixlen', async () => {
      const { neutron } = ctx;
      const pool = await neutron.subnetPools.create({
        name: uniqueName('pool'),
        prefixes: ['10.200.0.0/16'],
        default_prefixlen: 26,
        min_prefixlen: 24,
        max_prefixlen: 28,
      });
      ctx.cleanup.add(() => neutron.subnetPools.delete(pool.id));
      assert.equal(Number(pool.default_prefixlen), 26);
      assert.equal(Number(pool.min_prefixlen), 24);
      assert.deepEqual(pool.prefixes, ['10.200.0.0/16']);
      const net = await neutron.networks.create({ name: uniqueName('net') });
      ctx.cleanup.add(() => neutron.networks.delete(net.id));

      const a = await neutron.subnets.create({
        network_id: net.id,
        ip_version: 4,
        subnetpool_id: pool.id,
        prefixlen: 26,
      });
      ctx.cleanup.add(() => neutron.subnets.delete(a.id));
      const b = await neutron.subnets.create({ network_id: net.id, ip_version: 4, subnetpool_id: pool.id });
      ctx.cleanup.add(() => neutron.subnets.delete(b.id));
      const c = await neutron.subnets.create({
        network_id: net.id,
        ip_version: 4,
        subnetpool_id: pool.id,
        prefixlen: 28,
      });
      ctx.cleanup.add(() => neutron.subnets.delete(c.id));
      assert.deepEqual([a.cidr, b.cidr, c.cidr], ['10.200.0.0/26', '10.200.0.64/26', '10.200.0.128/28']);
      assert.equal(a.subnetpool_id, pool.id);
      assert.equal(b.gateway_ip, '10.200.0.65');
      assert.deepEqual(
        (await neutron.subnets.list({ subnetpool_id: pool.id }, { sortKey: 'cidr' })).map((s) => s.id).sort(),
        [a.id, b.id, c.id].sort(),
      );

      const renamed = await neutron.subnetPools.update(pool.id, { description: 'pods' });
      assert.equal(renamed.description, 'pods');
      assert.deepEqual(
        (await neutron.subnetPools.list({ name: pool.name })).map((p) => p.id),
        [pool.id],
      );
      assert.equal((await neutron.subnetPools.get(pool.id)).description, 'pods');
    });

    it('refuses to delete a network with ports (409 NetworkInUse), then deletes it once they are gone', async () => {
      const { neutron } = ctx;
      const { network, subnet } = await tenantNetwork(ctx, '10.11.0.0/24');
      const port = await neutron.ports.create({ network_id: network.id, name: uniqueName('port') });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      await assert.rejects(
        neutron.networks.delete(network.id),
        (err) => isOpenStackError(err, 'NetworkInUse') && err.status === 409 && err.message.includes(port.id),
      );
      await assert.rejects(
        neutron.subnets.delete(subnet.id),
        (err) => isOpenStackError(err, 'SubnetInUse') && err.status === 409,
      );
      assert.equal((await neutron.networks.get(network.id)).id, network.id);
      assert.equal(await neutron.ports.delete(port.id), true);
      assert.equal(await neutron.networks.delete(network.id), true);
      await assert.rejects(neutron.subnets.get(subnet.id), (err) => isOpenStackError(err, 'SubnetNotFound'));
    });

    it('pages with limit: every item exactly once, in sort order, through list() and pages()', async () => {
      const { neutron } = ctx;
      const tag = uniqueName('page');
      const names = Array.from({ length: 5 }, (_, i) => `${tag}-${i}`);
      for (const name of [...names].reverse()) {
        const net = await neutron.networks.create({ name });
        ctx.cleanup.add(() => neutron.networks.delete(net.id));
        await neutron.tags.add('networks', net.id, tag);
      }
      const listed = await neutron.networks.list(
        { tags: [tag] },
        { limit: 2, sortKey: 'name', sortDir: 'asc', fields: ['id', 'name'] },
      );
      assert.deepEqual(
        listed.map((n) => n.name),
        names,
      );
      const pages: string[][] = [];
      for await (const page of neutron.networks.pages({ tags: tag }, { limit: 2, sortKey: 'name', sortDir: 'desc' }))
        pages.push(page.map((n) => n.name));
      assert.deepEqual(pages, [[names[4], names[3]], [names[2], names[1]], [names[0]]]);
      const four = await neutron.networks.list({ 'tags-any': [tag, 'unused'] }, { limit: 4 });
      assert.equal(new Set(four.map((n) => n.id)).size, 5);
    });

    it('returns only the fields asked for', async () => {
      const { neutron } = ctx;
      const net = await neutron.networks.create({ name: uniqueName('net') });
      ctx.cleanup.add(() => neutron.networks.delete(net.id));
      const [only] = await neutron.networks.list({ id: net.id }, { fields: ['id', 'name'] });
      assert.deepEqual(only, { id: net.id, name: net.name });
      assert.deepEqual(await neutron.networks.get(net.id, { fields: ['id', 'status'] }), {
        id: net.id,
        status: 'ACTIVE',
      });
    });

    it('lists the extensions the client relies on', async () => {
      const { neutron } = ctx;
      for (const alias of [
        'standard-attr-tag',
        'router',
        'external-net',
        'binding',
        'quotas',
        'revision-if-match',
        'pagination',
      ]) {
        assert.equal(await neutron.supports(alias), true, alias);
      }
      assert.equal(await neutron.supports('no-such-extension'), false);
      assert.ok((await neutron.extensions()).every((e) => typeof e.alias === 'string' && typeof e.name === 'string'));
    });
  });
}
