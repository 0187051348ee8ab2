/**
 * Neutron contract: security groups and their rules (single and bulk, duplicates, in-use groups) — once per target.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import { closeNeutron, openNeutron, tenantNetwork, uniqueName, type NeutronContext } from './neutron/fixtures.ts';

for (const factory of contractTargets()) {
  describe(`neutron security groups (${factory.label})`, () => {
    let ctx: NeutronContext;
    before(async () => {
      ctx = await openNeutron(factory);
    });
    after(() => closeNeutron(ctx));

    it('creates a group with the two default egress rules, adds, lists and deletes rules', async () => {
      const { neutron } = ctx;
      const sg = await neutron.securityGroups.create({ name: uniqueName('sg'), description: 'np' });
      ctx.cleanup.add(() => neutron.securityGroups.delete(sg.id));
      assert.equal(sg.description, 'np');
      assert.equal(sg.stateful, true);
      assert.equal(sg.project_id, ctx.projectId);
      assert.deepEqual(sg.security_group_rules.map((r) => `${r.direction}/${r.ethertype}/${r.protocol}`).sort(), [
        'egress/IPv4/null',
        'egress/IPv6/null',
      ]);

      const http = await neutron.securityGroupRules.create({
        security_group_id: sg.id,
        direction: 'ingress',
        ethertype: 'IPv4',
        protocol: 'tcp',
        port_range_min: 80,
        port_range_max: 80,
        remote_ip_prefix: '10.0.0.0/8',
      });
      assert.equal(http.security_group_id, sg.id);
      assert.equal(http.protocol, 'tcp');
      assert.equal(http.port_range_min, 80);
      assert.equal(http.remote_ip_prefix, '10.0.0.0/8');
      await assert.rejects(
        neutron.securityGroupRules.create({
          security_group_id: sg.id,
          direction: 'ingress',
          ethertype: 'IPv4',
          protocol: 'tcp',
          port_range_min: 80,
          port_range_max: 80,
          remote_ip_prefix: '10.0.0.0/8',
        }),
        (err) =>
          isOpenStackError(err, 'SecurityGroupRuleExists') && err.status === 409 && err.message.includes(http.id),
      );

      const bulk = await neutron.securityGroupRules.createBulk([
        {
          security_group_id: sg.id,
          direction: 'ingress',
          ethertype: 'IPv4',
          protocol: 'udp',
          port_range_min: 53,
          port_range_max: 53,
          remote_group_id: sg.id,
        },
        {
          security_group_id: sg.id,
          direction: 'egress',
          ethertype: 'IPv6',
          protocol: 'tcp',
          port_range_min: 443,
          port_range_max: 443,
        },
      ]);
      assert.deepEqual(
        bulk.map((r) => r.protocol),
        ['udp', 'tcp'],
      );
      assert.equal(bulk[0]!.remote_group_id, sg.id);

      const rules = await neutron.securityGroupRules.list({ security_group_id: sg.id });
      assert.equal(rules.length, 5);
      assert.deepEqual(
        (await neutron.securityGroupRules.list({ security_group_id: sg.id, direction: 'ingress' }))
          .map((r) => r.id)
          .sort(),
        [http.id, bulk[0]!.id].sort(),
      );
      assert.equal((await neutron.securityGroups.get(sg.id)).security_group_rules.length, 5);

      assert.equal(await neutron.securityGroupRules.delete(http.id), true);
      assert.equal(await neutron.securityGroupRules.delete(http.id), false);
      await assert.rejects(
        neutron.securityGroupRules.get(http.id),
        (err) => isOpenStackError(err, 'SecurityGroupRuleNotFound') && err.status === 404,
      );
      assert.equal((await neutron.securityGroupRules.list({ security_group_id: sg.id })).length, 4);
    });

    it('port ranges: SCTP takes them like TCP; a reversed range, half a range or port 0 is a 400', async () => {
      const { neutron } = ctx;
      const sg = await neutron.securityGroups.create({ name: uniqueName('sg') });
      ctx.cleanup.add(() => neutron.securityGroups.delete(sg.id));
      const rule = (protocol: string, min: number | null, max: number | null) =>
        neutron.securityGroupRules.create({
          security_group_id: sg.id,
          direction: 'ingress',
          ethertype: 'IPv4',
          protocol,
          port_range_min: min,
          port_range_max: max,
        });
      const sctp = await rule('sctp', 1000, 2000);
      assert.deepEqual([sctp.protocol, sctp.port_range_min, sctp.port_range_max], ['sctp', 1000, 2000]);
      for (const [protocol, min, max, type] of [
        ['sctp', 90, 80, 'SecurityGroupInvalidPortRange'],
        ['udp', 90, 80, 'SecurityGroupInvalidPortRange'],
        ['tcp', 80, null, 'SecurityGroupInvalidPortRange'],
        ['tcp', 0, 80, 'SecurityGroupInvalidPortValue'],
      ] as const)
        await assert.rejects(
          rule(protocol, min, max),
          (err) => isOpenStackError(err, type) && err.status === 400,
          `${protocol} ${min}-${max}`,
        );
    });

    it('bulk rules are atomic: a duplicate in the batch and none is added', async () => {
      const { neutron } = ctx;
      const sg = await neutron.securityGroups.create({ name: uniqueName('sg') });
      ctx.cleanup.add(() => neutron.securityGroups.delete(sg.id));
      await assert.rejects(
        neutron.securityGroupRules.createBulk([
          {
            security_group_id: sg.id,
            direction: 'ingress',
            ethertype: 'IPv4',
            protocol: 'tcp',
            port_range_min: 22,
            port_range_max: 22,
          },
          { security_group_id: sg.id, direction: 'egress', ethertype: 'IPv4' },
        ]),
        (err) => isOpenStackError(err) && err.status === 409,
      );
      assert.equal((await neutron.securityGroupRules.list({ security_group_id: sg.id })).length, 2);
    });

    it('updates a group, finds it by name, and refuses to delete it while a port uses it (409 SecurityGroupInUse)', async () => {
      const { neutron } = ctx;
      const { network } = await tenantNetwork(ctx, '10.50.0.0/24');
      const sg = await neutron.securityGroups.create({ name: uniqueName('sg') });
      ctx.cleanup.add(() => neutron.securityGroups.delete(sg.id));
      const renamed = await neutron.securityGroups.update(sg.id, { name: `${sg.name}-x`, description: 'policy' });
      assert.equal(renamed.name, `${sg.name}-x`);
      assert.deepEqual(
        (await neutron.securityGroups.list({ name: `${sg.name}-x` })).map((g) => g.id),
        [sg.id],
      );

      const port = await neutron.ports.create({
        network_id: network.id,
        name: uniqueName('port'),
        security_groups: [sg.id],
      });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      assert.deepEqual(port.security_groups, [sg.id]);
      assert.deepEqual(
        (await neutron.ports.list({ security_groups: sg.id })).map((p) => p.id),
        [port.id],
      );
      await assert.rejects(
        neutron.securityGroups.delete(sg.id),
        (err) => isOpenStackError(err, 'SecurityGroupInUse') && err.status === 409,
      );
      assert.equal((await neutron.securityGroups.get(sg.id)).id, sg.id);

      const cleared = await neutron.ports.update(port.id, { security_groups: [] });
      assert.deepEqual(cleared.security_groups, []);
      assert.equal(await neutron.securityGroups.delete(sg.id), true);
      assert.equal(await neutron.securityGroups.delete(sg.id), false);
      await assert.rejects(neutron.securityGroups.get(sg.id), (err) => isOpenStackError(err, 'SecurityGroupNotFound'));
    });

    it('gives each project a default group', async () => {
      const groups = await ctx.neutron.securityGroups.list(
        { name: 'default', project_id: ctx.projectId },
        { fields: ['id', 'name', 'project_id'] },
      );
      assert.equal(groups.length, 1);
      assert.equal(groups[0]!.project_id, ctx.projectId);
    });
  });
}
