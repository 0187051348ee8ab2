/**
 * Neutron contract: tags on every taggable collection, tag filters, port tags on create (whichever way the server
 * supports), and quotas with OverQuota — once per target.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import {
  isOpenStackError,
  TAG_PORTS_ON_CREATE,
  type Network,
  type TaggableResource,
} from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import {
  closeNeutron,
  externalNetwork,
  openNeutron,
  tenantNetwork,
  uniqueName,
  type NeutronContext,
} from './neutron/fixtures.ts';

for (const factory of contractTargets()) {
  describe(`neutron tags and quotas (${factory.label})`, () => {
    let ctx: NeutronContext;
    let network: Network;
    before(async () => {
      ctx = await openNeutron(factory);
      ({ network } = await tenantNetwork(ctx, '10.30.0.0/24'));
    });
    after(() => closeNeutron(ctx));

    it('adds, checks, lists, replaces, removes and clears tags on every taggable collection', async () => {
      const { neutron } = ctx;
      const ext = await externalNetwork(ctx, '172.24.30.0/24');
      const port = await neutron.ports.create({ network_id: network.id, name: uniqueName('port') });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      const router = await neutron.routers.create({ name: uniqueName('router') });
      ctx.cleanup.add(() => neutron.routers.delete(router.id));
      const fip = await neutron.floatingIps.create({ floating_network_id: ext.network.id });
      ctx.cleanup.add(() => neutron.floatingIps.delete(fip.id));
      const sg = await neutron.securityGroups.create({ name: uniqueName('sg') });
      ctx.cleanup.add(() => neutron.securityGroups.delete(sg.id));
      const pool = await neutron.subnetPools.create({ name: uniqueName('pool'), prefixes: ['10.230.0.0/16'] });
      ctx.cleanup.add(() => neutron.subnetPools.delete(pool.id));
      const targets: [TaggableResource, string][] = [
        ['networks', network.id],
        ['subnets', ext.subnet.id],
        ['ports', port.id],
        ['routers', router.id],
        ['floatingips', fip.id],
        ['security-groups', sg.id],
        ['subnetpools', pool.id],
      ];
      for (const [resource, id] of targets) {
        await neutron.tags.add(resource, id, 'k8s-ns=default');
        await neutron.tags.add(resource, id, 'owner.raven');
        await neutron.tags.add(resource, id, 'owner.raven');
        assert.deepEqual((await neutron.tags.list(resource, id)).sort(), ['k8s-ns=default', 'owner.raven'], resource);
        assert.equal(await neutron.tags.has(resource, id, 'owner.raven'), true, resource);
        assert.equal(await neutron.tags.has(resource, id, 'nope'), false, resource);
        assert.deepEqual(
          (await neutron.tags.replace(resource, id, ['t1', 't2', 'owner.raven'])).sort(),
          ['owner.raven', 't1', 't2'],
          resource,
        );
        assert.equal(await neutron.tags.remove(resource, id, 't2'), true, resource);
        assert.equal(await neutron.tags.remove(resource, id, 't2'), false, resource);
        assert.deepEqual((await neutron.tags.list(resource, id)).sort(), ['owner.raven', 't1'], resource);
      }
      assert.deepEqual((await neutron.ports.get(port.id)).tags.sort(), ['owner.raven', 't1']);
      assert.deepEqual((await neutron.floatingIps.get(fip.id)).tags.sort(), ['owner.raven', 't1']);
      await neutron.tags.clear('ports', port.id);
      assert.deepEqual(await neutron.tags.list('ports', port.id), []);
    });

    it('answers 404 TagResourceNotFound for the tags of a missing resource', async () => {
      const { neutron } = ctx;
      const missing = '00000000-0000-4000-8000-000000000000';
      const tagResourceNotFound = (err: unknown): boolean =>
        isOpenStackError(err, 'TagResourceNotFound') && err.status === 404;
      await assert.rejects(neutron.tags.list('networks', missing), tagResourceNotFound);
      await assert.rejects(neutron.tags.add('networks', missing, 'x'), tagResourceNotFound);
      await assert.rejects(neutron.tags.replace('ports', 'not-a-uuid', ['x']), tagResourceNotFound);
      await assert.rejects(neutron.tags.has('ports', missing, 'x'), tagResourceNotFound);
      await assert.rejects(neutron.tags.remove('routers', missing, 'x'), tagResourceNotFound);
      await assert.rejects(neutron.tags.clear('subnets', missing), tagResourceNotFound);
    });

    it('filters by tags (all), tags-any, not-tags and not-tags-any', async () => {
      const { neutron } = ctx;
      const t = uniqueName('tag');
      const ports = await neutron.ports.createBulk(
        ['ab', 'a', 'b'].map((name) => ({ network_id: network.id, name: `${t}-${name}`, device_id: t })),
      );
      for (const p of ports) ctx.cleanup.add(() => neutron.ports.delete(p.id));
      const [ab, a, b] = ports as [(typeof ports)[0], (typeof ports)[0], (typeof ports)[0]];
      await neutron.tags.replace('ports', ab.id, [`${t}-a`, `${t}-b`]);
      await neutron.tags.replace('ports', a.id, [`${t}-a`]);
      await neutron.tags.replace('ports', b.id, [`${t}-b`]);
      const names = async (filters: Parameters<typeof neutron.ports.list>[0]): Promise<string[]> =>
        (await neutron.ports.list({ device_id: t, ...filters })).map((p) => p.name.slice(t.length + 1)).sort();
      assert.deepEqual(await names({ tags: [`${t}-a`, `${t}-b`] }), ['ab']);
      assert.deepEqual(await names({ tags: `${t}-a` }), ['a', 'ab']);
      assert.deepEqual(await names({ 'tags-any': [`${t}-a`, `${t}-b`] }), ['a', 'ab', 'b']);
      assert.deepEqual(await names({ 'not-tags': [`${t}-a`, `${t}-b`] }), ['a', 'b']);
      assert.deepEqual(await names({ 'not-tags-any': [`${t}-a`] }), ['b']);
      assert.deepEqual(await names({ tags: `${t}-a`, 'not-tags': `${t}-b` }), ['a']);
    });

    it('creates ports born tagged (single and bulk), in the POST or right after, as the server supports', async () => {
      const { neutron } = ctx;
      const inPost = await neutron.supports(TAG_PORTS_ON_CREATE);
      const t = uniqueName('born');
      const single = await neutron.ports.create({
        network_id: network.id,
        name: `${t}-single`,
        tags: [`${t}`, 'k8s-pod=ns1.pod1'],
      });
      ctx.cleanup.add(() => neutron.ports.delete(single.id));
      assert.deepEqual(single.tags.sort(), ['k8s-pod=ns1.pod1', t].sort());
      const bulk = await neutron.ports.createBulk([
        { network_id: network.id, name: `${t}-b0`, tags: [t, 'i=0'] },
        { network_id: network.id, name: `${t}-b1` },
        { network_id: network.id, name: `${t}-b2`, tags: [t, 'i=2'] },
      ]);
      for (const p of bulk) ctx.cleanup.add(() => neutron.ports.delete(p.id));
      assert.deepEqual(
        bulk.map((p) => p.tags.sort()),
        [['i=0', t], [], ['i=2', t]],
      );

      const read = await neutron.ports.list(
        { tags: t },
        { sortKey: 'name', fields: ['name', 'tags', 'revision_number'] },
      );
      assert.deepEqual(
        read.map((p) => [p.name, p.tags.sort()]),
        [
          [`${t}-b0`, ['i=0', t]],
          [`${t}-b2`, ['i=2', t]],
          [`${t}-single`, ['k8s-pod=ns1.pod1', t].sort()],
        ],
      );
      // What create returned is current: its revision is the one an If-Match update needs.
      await neutron.ports.update(single.id, { description: 'ok' }, { ifRevision: single.revision_number });
      assert.equal(typeof inPost, 'boolean');
    });

    it('without tag-ports-during-bulk-creation, a port POST accepts tags but drops them (why the client tags after)', async (t) => {
      if (await ctx.neutron.supports(TAG_PORTS_ON_CREATE))
        return t.skip('the server has tag-ports-during-bulk-creation');
      const name = uniqueName('rawtag');
      const res = await ctx.target.session.request<{ port: { id: string; tags: string[] } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/ports',
        body: { port: { network_id: network.id, name, tags: ['lost'] } },
      });
      ctx.cleanup.add(() => ctx.neutron.ports.delete(res.body.port.id));
      assert.equal(res.status, 201);
      assert.deepEqual((await ctx.neutron.ports.get(res.body.port.id)).tags, []);
    });

    it('a port whose tags Neutron rejects is not left behind', async () => {
      const name = uniqueName('badtag');
      await assert.rejects(
        ctx.neutron.ports.create({ network_id: network.id, name, tags: ['x'.repeat(300)] }),
        (err) => isOpenStackError(err) && err.status === 400,
      );
      assert.deepEqual(await ctx.neutron.ports.list({ name }), []);
    });

    it('reads, sets and resets quotas; the port over a quota of 1 is refused (409 OverQuota)', async () => {
      const { neutron } = ctx;
      const project = uniqueName('proj');
      ctx.cleanup.add(async () => {
        for (const sg of await neutron.securityGroups.list({ project_id: project }, { fields: ['id'] }))
          await neutron.securityGroups.delete(sg.id);
      });
      ctx.cleanup.add(() => neutron.quotas.reset(project));
      const before = await neutron.quotas.get(project);
      assert.equal(typeof before.port, 'number');
      const set = await neutron.quotas.update(project, { port: 1, network: 5 });
      assert.equal(set.port, 1);
      assert.equal(set.network, 5);
      assert.equal((await neutron.quotas.get(project)).port, 1);

      const net = await neutron.networks.create({ name: uniqueName('net'), project_id: project });
      ctx.cleanup.add(() => neutron.networks.delete(net.id));
      assert.equal(net.project_id, project);
      const first = await neutron.ports.create({ network_id: net.id, name: uniqueName('port'), project_id: project });
      ctx.cleanup.add(() => neutron.ports.delete(first.id));
      const name = uniqueName('port');
      await assert.rejects(
        neutron.ports.create({ network_id: net.id, name, project_id: project }),
        (err) => isOpenStackError(err, 'OverQuota') && err.status === 409 && /port/.test(err.message),
      );
      assert.deepEqual(await neutron.ports.list({ name }), []);
      const details = await neutron.quotas.details(project);
      assert.deepEqual(details.port && { limit: details.port.limit, used: details.port.used }, { limit: 1, used: 1 });
      assert.equal(details.network?.used, 1);

      await neutron.quotas.reset(project);
      assert.deepEqual(await neutron.quotas.get(project), before);
      const second = await neutron.ports.create({ network_id: net.id, name, project_id: project });
      ctx.cleanup.add(() => neutron.ports.delete(second.id));
      assert.equal(second.project_id, project);
    });
  });
}
