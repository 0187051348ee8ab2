/**
 * Neutron contract: trunks (the `trunk` service plugin) — a trunk's life with its subports and what the trunk rules
 * refuse, with their status codes, error types and Raven's stable codes — once per target. The trunk driver of both
 * targets is an inert one (real-openstack.sh's `raven_dev`; the sim's `trunkDriver: 'inert'`), as the OVS agent's is with no agent running: it
 * changes nothing on the ports and leaves the trunk DOWN. What ML2/OVN's driver does instead is the sim's default,
 * tested beside it (packages/openstack-sim/src/neutron/trunks.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError, type Network, type Port, type SubPort } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import { closeNeutron, openNeutron, tenantNetwork, uniqueName, type NeutronContext } from './neutron/fixtures.ts';

const vlan = (port: { id: string }, id: number): SubPort => ({
  port_id: port.id,
  segmentation_type: 'vlan',
  segmentation_id: id,
});

/** A rejection with this HTTP status, Neutron error type and (when given) Raven code. */
function refused(status: number, type: string, code?: string) {
  return (err: unknown): boolean => {
    assert.ok(isOpenStackError(err), `not an OpenStackError: ${String(err)}`);
    assert.equal(`${err.status} ${err.type}`, `${status} ${type}`, err.message);
    if (code !== undefined) assert.equal(err.code, code);
    return true;
  };
}

const byVlan = (subs: readonly SubPort[]) =>
  [...subs].map((s) => `${s.segmentation_id}:${s.port_id}`).sort((a, b) => a.localeCompare(b));

for (const factory of contractTargets()) {
  describe(`neutron trunks (${factory.label})`, () => {
    let ctx: NeutronContext;
    let network: Network;
    before(async () => {
      ctx = await openNeutron(factory);
      ({ network } = await tenantNetwork(ctx, '10.50.0.0/24'));
    });
    after(() => closeNeutron(ctx));

    async function port(extra: { device_id?: string; 'binding:host_id'?: string } = {}): Promise<Port> {
      const p = await ctx.neutron.ports.create({ network_id: network.id, name: uniqueName('port'), ...extra });
      ctx.cleanup.add(() => ctx.neutron.ports.delete(p.id));
      return p;
    }

    async function trunk(parent: Port, subPorts: SubPort[] = []) {
      const t = await ctx.neutron.trunks.create({ port_id: parent.id, name: uniqueName('trunk'), sub_ports: subPorts });
      ctx.cleanup.add(() => ctx.neutron.trunks.delete(t.id));
      return t;
    }

    it('lists the extensions', async () => {
      assert.ok(await ctx.neutron.supports('trunk'));
      assert.ok(await ctx.neutron.supports('trunk-details'));
    });

    it('keeps a trunk and its subports: parent trunk_details, filters, update, tags, delete with subports', async () => {
      const { neutron } = ctx;
      const [parent, s1, s2] = await Promise.all([port(), port(), port()]);
      const created = await trunk(parent, [vlan(s1, 101)]);
      assert.equal(created.port_id, parent.id);
      assert.equal(created.status, 'DOWN');
      assert.equal(created.admin_state_up, true);
      assert.equal(created.revision_number, 0);
      assert.equal(created.tenant_id, created.project_id);
      assert.deepEqual(created.tags, []);
      assert.deepEqual(created.sub_ports, [vlan(s1, 101)]);

      // Read by id, a parent's trunk_details carries each subport's MAC; in a list it does not.
      const shown = await neutron.ports.get(parent.id);
      assert.deepEqual(shown.trunk_details, {
        trunk_id: created.id,
        sub_ports: [{ ...vlan(s1, 101), mac_address: s1.mac_address }],
      });
      const [listed] = await neutron.ports.list({ id: parent.id }, { fields: ['id', 'trunk_details'] });
      assert.deepEqual(listed?.trunk_details, { trunk_id: created.id, sub_ports: [vlan(s1, 101)] });
      assert.equal((await neutron.ports.get(s1.id)).trunk_details, undefined);

      // This driver (OVS, no agent) changes nothing on the subport's port.
      const sub = await neutron.ports.get(s1.id, { fields: ['device_owner', 'device_id', 'status'] });
      assert.deepEqual(sub, { device_owner: '', device_id: '', status: 'DOWN' });

      // Subports are answered bare (no `trunk` key) and each change is one revision.
      const added = await neutron.trunks.addSubports(created.id, [{ ...vlan(s2, 102) }]);
      assert.equal(added.id, created.id);
      assert.equal(added.revision_number, 1);
      assert.deepEqual(byVlan(added.sub_ports), byVlan([vlan(s1, 101), vlan(s2, 102)]));
      assert.deepEqual(byVlan(await neutron.trunks.getSubports(created.id)), byVlan(added.sub_ports));

      assert.deepEqual(
        (await neutron.trunks.list({ port_id: parent.id })).map((t) => t.id),
        [created.id],
      );
      await assert.rejects(
        neutron.trunks.list({ status: 'DOWN' } as never),
        refused(400, 'HTTPBadRequest', 'OPENSTACK_BAD_REQUEST'),
      );

      const renamed = await neutron.trunks.update(created.id, { name: 'renamed', description: 'node-1' });
      assert.equal(renamed.name, 'renamed');
      assert.equal(renamed.description, 'node-1');
      await neutron.tags.add('trunks', created.id, 'raven-node=n1');
      assert.deepEqual(
        (await neutron.trunks.list({ tags: ['raven-node=n1'] })).map((t) => t.id),
        [created.id],
      );

      const removed = await neutron.trunks.removeSubports(created.id, [s2.id]);
      assert.deepEqual(removed.sub_ports, [vlan(s1, 101)]);
      await assert.rejects(
        neutron.trunks.removeSubports(created.id, [s2.id]),
        refused(404, 'SubPortNotFound', 'OPENSTACK_TRUNK_SUBPORT_NOT_FOUND'),
      );

      // Ports in a trunk cannot be deleted; the trunk can, subports and all.
      await assert.rejects(
        neutron.ports.delete(parent.id),
        refused(409, 'PortInUseAsTrunkParent', 'OPENSTACK_TRUNK_PARENT_IN_USE'),
      );
      await assert.rejects(
        neutron.ports.delete(s1.id),
        refused(409, 'PortInUseAsSubPort', 'OPENSTACK_TRUNK_PORT_IN_USE'),
      );
      assert.equal(await neutron.trunks.delete(created.id), true);
      await assert.rejects(neutron.trunks.get(created.id), refused(404, 'TrunkNotFound', 'OPENSTACK_NOT_FOUND'));
      await assert.rejects(neutron.trunks.getSubports(created.id), refused(404, 'TrunkNotFound'));
      assert.equal((await neutron.ports.get(parent.id)).trunk_details, undefined);
      assert.equal(await neutron.ports.delete(s1.id), true);
    });

    it('refuses ports already in a trunk, taken and bad VLAN ids, ports with a device; all or nothing', async () => {
      const { neutron } = ctx;
      const [parent, s1, s2, s3, owned] = await Promise.all([port(), port(), port(), port(), port({ device_id: 'x' })]);
      const t = await trunk(parent, [vlan(s1, 101)]);

      await assert.rejects(
        neutron.trunks.create({ port_id: parent.id }),
        refused(409, 'ParentPortInUse', 'OPENSTACK_TRUNK_PARENT_IN_USE'),
      );
      await assert.rejects(
        neutron.trunks.create({ port_id: s1.id }),
        refused(409, 'TrunkPortInUse', 'OPENSTACK_TRUNK_PORT_IN_USE'),
      );
      await assert.rejects(
        neutron.trunks.addSubports(t.id, [vlan(s2, 101)]),
        refused(409, 'DuplicateSubPort', 'OPENSTACK_TRUNK_VLAN_TAKEN'),
      );
      await assert.rejects(neutron.trunks.addSubports(t.id, [vlan(s1, 102)]), refused(409, 'TrunkPortInUse'));
      await assert.rejects(neutron.trunks.addSubports(t.id, [vlan(parent, 103)]), refused(409, 'ParentPortInUse'));
      await assert.rejects(
        neutron.trunks.addSubports(t.id, [vlan(owned, 104)]),
        refused(409, 'PortInUse', 'OPENSTACK_CONFLICT'),
      );
      for (const bad of [
        vlan(s2, 0),
        vlan(s2, 4095),
        { ...vlan(s2, 5), segmentation_type: 'vxlan' },
        { port_id: s2.id } as SubPort,
        [vlan(s2, 6), vlan(s3, 6)],
      ]) {
        await assert.rejects(
          neutron.trunks.addSubports(t.id, Array.isArray(bad) ? bad : [bad]),
          refused(400, 'InvalidInput', 'OPENSTACK_BAD_REQUEST'),
        );
      }
      await assert.rejects(
        neutron.trunks.addSubports(t.id, [vlan({ id: '6f1b0c8e-4a59-4c1e-9d0e-7f3a2b1c0d9e' }, 7)]),
        refused(404, 'PortNotFound'),
      );
      // One refused subport: none of the others is added either.
      await assert.rejects(neutron.trunks.addSubports(t.id, [vlan(s2, 8), vlan(owned, 9)]), refused(409, 'PortInUse'));
      assert.deepEqual(await neutron.trunks.getSubports(t.id), [vlan(s1, 101)]);
      const still = await neutron.trunks.get(t.id);
      assert.equal(still.revision_number, 0);
      assert.equal((await neutron.ports.get(s2.id)).device_owner, '');

      // A VLAN id given as a string is taken as the number; 4094 is the top of the range.
      const added = await neutron.trunks.addSubports(t.id, [
        { ...vlan(s2, 4094), segmentation_id: '4094' as unknown as number },
      ]);
      assert.deepEqual(byVlan(added.sub_ports), byVlan([vlan(s1, 101), vlan(s2, 4094)]));
    });

    it('refuses to change a disabled trunk, and to trunk or untrunk a bound parent (inert driver)', async () => {
      const { neutron } = ctx;
      const [parent, s1, s2, bound] = await Promise.all([
        port(),
        port(),
        port(),
        port({ 'binding:host_id': 'host-ovs-filter-active' }),
      ]);
      await assert.rejects(
        neutron.trunks.create({ port_id: bound.id }),
        refused(409, 'ParentPortInUse', 'OPENSTACK_TRUNK_PARENT_IN_USE'),
      );
      const t = await trunk(parent, [vlan(s1, 10)]);
      // A bound port can still be a subport.
      await neutron.trunks.addSubports(t.id, [vlan(bound, 11)]);
      await neutron.trunks.update(t.id, { admin_state_up: false });
      ctx.cleanup.add(() => neutron.trunks.update(t.id, { admin_state_up: true }));
      const disabled = refused(409, 'TrunkDisabled', 'OPENSTACK_TRUNK_DISABLED');
      await assert.rejects(neutron.trunks.addSubports(t.id, [vlan(s2, 12)]), disabled);
      await assert.rejects(neutron.trunks.removeSubports(t.id, [s1.id]), disabled);
      await assert.rejects(neutron.trunks.delete(t.id), disabled);
      await neutron.trunks.update(t.id, { admin_state_up: true });

      // The parent bound after the fact: the driver cannot untrunk it (no agent on the host).
      await neutron.ports.update(parent.id, { 'binding:host_id': 'host-ovs-filter-active' });
      ctx.cleanup.add(() => neutron.ports.update(parent.id, { 'binding:host_id': '' }));
      const shown = await neutron.trunks.get(t.id);
      assert.equal(shown.status, 'DOWN');
      await assert.rejects(neutron.trunks.delete(t.id), refused(409, 'TrunkInUse', 'OPENSTACK_TRUNK_IN_USE'));
      await neutron.ports.update(parent.id, { 'binding:host_id': '' });
      assert.equal(await neutron.trunks.delete(t.id), true);
    });
  });
}
