/**
 * Neutron contract: routers (gateway, interfaces) and floating IPs (create, associate, disassociate, conflicts) —
 * once per target. External flat networks need admin and a physical network name of their own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import {
  addressesOf,
  closeNeutron,
  externalNetwork,
  openNeutron,
  tenantNetwork,
  uniqueName,
  type NeutronContext,
} from './neutron/fixtures.ts';

for (const factory of contractTargets()) {
  describe(`neutron routers and floating IPs (${factory.label})`, () => {
    let ctx: NeutronContext;
    before(async () => {
      ctx = await openNeutron(factory);
    });
    after(() => closeNeutron(ctx));

    it('routes a subnet to an external network and floats an address onto a port', async () => {
      const { neutron } = ctx;
      const ext = await externalNetwork(ctx, '172.24.40.0/24');
      const { network, subnet } = await tenantNetwork(ctx, '10.40.0.0/24');
      const router = await neutron.routers.create({
        name: uniqueName('router'),
        external_gateway_info: { network_id: ext.network.id },
      });
      ctx.cleanup.add(() => neutron.routers.delete(router.id));
      assert.equal(router.status, 'ACTIVE');
      assert.equal(router.external_gateway_info?.network_id, ext.network.id);
      assert.equal(router.external_gateway_info.enable_snat, true);
      assert.equal(router.external_gateway_info.external_fixed_ips[0]?.subnet_id, ext.subnet.id);

      const plugged = await neutron.routers.addInterface(router.id, { subnetId: subnet.id });
      ctx.cleanup.add(() => neutron.routers.removeInterface(router.id, { subnetId: subnet.id }));
      assert.equal(plugged.id, router.id);
      assert.equal(plugged.subnet_id, subnet.id);
      assert.equal(plugged.network_id, network.id);
      assert.deepEqual(plugged.subnet_ids, [subnet.id]);
      const routerPorts = await neutron.ports.list(
        { device_id: router.id },
        { fields: ['id', 'device_owner', 'fixed_ips'] },
      );
      const owners = routerPorts.map((p) => p.device_owner).sort();
      assert.deepEqual(owners, ['network:router_gateway', 'network:router_interface']);
      const iface = routerPorts.find((p) => p.device_owner === 'network:router_interface')!;
      assert.equal(iface.id, plugged.port_id);
      assert.deepEqual(addressesOf(iface), ['10.40.0.1']);
      await assert.rejects(
        neutron.routers.addInterface(router.id, { subnetId: subnet.id }),
        (err) => isOpenStackError(err) && err.status === 400,
      );

      const port = await neutron.ports.create({ network_id: network.id, name: uniqueName('port') });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      const fip = await neutron.floatingIps.create({ floating_network_id: ext.network.id, description: 'svc' });
      ctx.cleanup.add(() => neutron.floatingIps.delete(fip.id));
      assert.match(fip.floating_ip_address, /^172\.24\.40\.\d+$/);
      assert.equal(fip.port_id, null);
      assert.equal(fip.status, 'DOWN');

      const associated = await neutron.floatingIps.associate(fip.id, port.id);
      assert.equal(associated.port_id, port.id);
      assert.equal(associated.router_id, router.id);
      assert.equal(associated.fixed_ip_address, addressesOf(port)[0]);
      assert.equal(associated.port_details?.network_id, network.id);
      assert.deepEqual(
        (await neutron.floatingIps.list({ port_id: port.id })).map((f) => f.id),
        [fip.id],
      );

      await assert.rejects(
        neutron.routers.removeInterface(router.id, { subnetId: subnet.id }),
        (err) => isOpenStackError(err, 'RouterInterfaceInUseByFloatingIP') && err.status === 409,
      );
      assert.equal((await neutron.ports.get(plugged.port_id)).device_id, router.id);

      const detached = await neutron.floatingIps.disassociate(fip.id);
      assert.equal(detached.port_id, null);
      assert.equal(detached.fixed_ip_address, null);
      assert.equal((await neutron.floatingIps.get(fip.id)).router_id, null);

      const unplugged = await neutron.routers.removeInterface(router.id, { subnetId: subnet.id });
      assert.equal(unplugged.port_id, plugged.port_id);
      await assert.rejects(neutron.ports.get(plugged.port_id), (err) => isOpenStackError(err, 'PortNotFound'));
      await assert.rejects(
        neutron.routers.removeInterface(router.id, { subnetId: subnet.id }),
        (err) => isOpenStackError(err, 'RouterInterfaceNotFoundForSubnet') && err.status === 404,
      );

      const cleared = await neutron.routers.clearGateway(router.id);
      assert.equal(cleared.external_gateway_info, null);
      assert.deepEqual(await neutron.ports.list({ device_id: router.id }), []);
      const renamed = await neutron.routers.update(
        router.id,
        { name: `${router.name}-b`, description: 'ns gw' },
        { ifRevision: cleared.revision_number },
      );
      assert.deepEqual(
        (await neutron.routers.list({ name: `${router.name}-b` })).map((r) => [r.id, r.description]),
        [[router.id, 'ns gw']],
      );
      assert.ok(renamed.revision_number > cleared.revision_number);
      const again = await neutron.routers.setGateway(router.id, { network_id: ext.network.id, enable_snat: false });
      assert.equal(again.external_gateway_info?.enable_snat, false);
      assert.equal((await neutron.routers.get(router.id)).external_gateway_info?.network_id, ext.network.id);
      assert.equal(await neutron.routers.delete(router.id), true);
      assert.equal(await neutron.routers.delete(router.id), false);
    });

    it('plugs a router into an existing port, and unplugs it', async () => {
      const { neutron } = ctx;
      const { network, subnet } = await tenantNetwork(ctx, '10.41.0.0/24');
      const router = await neutron.routers.create({ name: uniqueName('router') });
      ctx.cleanup.add(() => neutron.routers.delete(router.id));
      const port = await neutron.ports.create({
        network_id: network.id,
        name: uniqueName('rport'),
        fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.41.0.254' }],
      });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      const plugged = await neutron.routers.addInterface(router.id, { portId: port.id });
      assert.equal(plugged.port_id, port.id);
      const read = await neutron.ports.get(port.id);
      assert.equal(read.device_id, router.id);
      assert.equal(read.device_owner, 'network:router_interface');
      await neutron.routers.removeInterface(router.id, { portId: port.id });
      await assert.rejects(neutron.ports.get(port.id), (err) => isOpenStackError(err, 'PortNotFound'));
    });

    it('creates an associated floating IP at a chosen address; refuses the address twice and an unrouted port', async () => {
      const { neutron } = ctx;
      const ext = await externalNetwork(ctx, '172.24.41.0/24');
      const routed = await tenantNetwork(ctx, '10.42.0.0/24');
      const router = await neutron.routers.create({
        name: uniqueName('router'),
        external_gateway_info: { network_id: ext.network.id },
      });
      ctx.cleanup.add(() => neutron.routers.delete(router.id));
      await neutron.routers.addInterface(router.id, { subnetId: routed.subnet.id });
      ctx.cleanup.add(() => neutron.routers.removeInterface(router.id, { subnetId: routed.subnet.id }));
      const port = await neutron.ports.create({ network_id: routed.network.id, name: uniqueName('port') });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      // An address the router's gateway did not take (Neutron picks the gateway's at random in the range).
      const gateway = (await neutron.routers.get(router.id)).external_gateway_info?.external_fixed_ips ?? [];
      const chosen = ['172.24.41.77', '172.24.41.78'].find((a) => !gateway.some((ip) => ip.ip_address === a))!;

      const fip = await neutron.floatingIps.create({
        floating_network_id: ext.network.id,
        floating_ip_address: chosen,
        port_id: port.id,
      });
      ctx.cleanup.add(() => neutron.floatingIps.delete(fip.id));
      assert.equal(fip.floating_ip_address, chosen);
      assert.equal(fip.port_id, port.id);
      assert.equal(fip.router_id, router.id);
      await assert.rejects(
        neutron.floatingIps.create({ floating_network_id: ext.network.id, floating_ip_address: chosen }),
        (err) => isOpenStackError(err, 'IpAddressAlreadyAllocated') && err.status === 409,
      );
      assert.deepEqual(
        (await neutron.floatingIps.list({ floating_ip_address: chosen })).map((f) => f.id),
        [fip.id],
      );

      const lonely = await tenantNetwork(ctx, '10.43.0.0/24');
      const unrouted = await neutron.ports.create({ network_id: lonely.network.id, name: uniqueName('port') });
      ctx.cleanup.add(() => neutron.ports.delete(unrouted.id));
      await assert.rejects(
        neutron.floatingIps.create({ floating_network_id: ext.network.id, port_id: unrouted.id }),
        (err) => isOpenStackError(err, 'ExternalGatewayForFloatingIPNotFound') && err.status === 404,
      );
      assert.deepEqual(await neutron.floatingIps.list({ port_id: unrouted.id }), []);
      assert.deepEqual(
        (await neutron.floatingIps.list({ floating_network_id: ext.network.id })).map((f) => f.id),
        [fip.id],
      );
      assert.equal(await neutron.floatingIps.delete(fip.id), true);
      assert.equal(await neutron.floatingIps.delete(fip.id), false);
    });
  });
}
