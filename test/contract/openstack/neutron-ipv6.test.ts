/**
 * Neutron contract: IPv6 and dual-stack, as Raven uses them — the rules for IPv6 subnets (version, address modes,
 * prefix), their defaults, a port with one address per family, the SLAAC address Neutron adds to every port, and the
 * router port IPv6 subnets share. Every value was first read from the real Zed Neutron (`npm run test:openstack`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isOpenStackError, type SubnetCreate } from '../../../src/openstack/index.ts';
import { contractTargets } from './target.ts';
import {
  addressesOf,
  closeNeutron,
  openNeutron,
  tenantNetwork,
  uniqueName,
  type NeutronContext,
} from './neutron/fixtures.ts';

const stateful = { ipv6_ra_mode: 'dhcpv6-stateful', ipv6_address_mode: 'dhcpv6-stateful' };

for (const factory of contractTargets()) {
  describe(`neutron IPv6 and dual-stack (${factory.label})`, () => {
    let ctx: NeutronContext;
    before(async () => {
      ctx = await openNeutron(factory);
    });
    after(() => closeNeutron(ctx));

    const refused = (p: Promise<unknown>, type: string, message: string) =>
      assert.rejects(
        p,
        (err) =>
          isOpenStackError(err) && err.status === 400 && err.type === type && err.message.endsWith(`: ${message}`),
      );

    it('validates an IPv6 subnet: its version, its address modes, and /64 for SLAAC', async () => {
      const { neutron } = ctx;
      const { network } = await tenantNetwork(ctx, '10.61.0.0/24');
      const subnet = (body: Record<string, unknown>) =>
        neutron.subnets.create({ network_id: network.id, name: uniqueName('v6'), ...body } as SubnetCreate);
      await refused(
        subnet({ ip_version: 6, cidr: '10.62.0.0/24' }),
        'InvalidInput',
        "Invalid input for operation: cidr '10.62.0.0/24' does not match the ip_version '6'.",
      );
      await refused(
        subnet({ ip_version: 4, cidr: 'fd00:62::/64' }),
        'InvalidInput',
        "Invalid input for operation: cidr 'fd00:62::/64' does not match the ip_version '4'.",
      );
      await refused(
        subnet({ ip_version: 6, cidr: 'fd00:63::/64', ipv6_ra_mode: 'slaac', ipv6_address_mode: 'dhcpv6-stateful' }),
        'InvalidInput',
        "Invalid input for operation: ipv6_ra_mode set to 'slaac' with ipv6_address_mode set to 'dhcpv6-stateful' is not valid. If both attributes are set, they must be the same value.",
      );
      await refused(
        subnet({ ip_version: 6, cidr: 'fd00:64::/80', ipv6_ra_mode: 'slaac', ipv6_address_mode: 'slaac' }),
        'InvalidInput',
        'Invalid input for operation: Invalid CIDR fd00:64::/80 for IPv6 address mode. OpenStack uses the EUI-64 address format, which requires the prefix to be /64.',
      );
      await refused(
        subnet({ ip_version: 6, cidr: 'fd00:65::/64', ipv6_address_mode: 'stateful' }),
        'HTTPBadRequest',
        'Invalid input for ipv6_address_mode. Reason: stateful is not in valid_values.',
      );
      await refused(
        subnet({ ip_version: 4, cidr: '10.66.0.0/24', ipv6_address_mode: 'dhcpv6-stateful' }),
        'InvalidInput',
        'Invalid input for operation: ipv6_address_mode is not valid when ip_version is 4.',
      );
    });

    it('defaults an IPv6 subnet: the gateway on the network address, the pool from ::1 to the end (any prefix when stateful)', async () => {
      const { neutron } = ctx;
      const { network } = await tenantNetwork(ctx, '10.67.0.0/24');
      const v6 = await neutron.subnets.create({
        network_id: network.id,
        name: uniqueName('v6'),
        ip_version: 6,
        cidr: 'fd00:67::/80',
        ...stateful,
      });
      ctx.cleanup.add(() => neutron.subnets.delete(v6.id));
      assert.equal(v6.gateway_ip, 'fd00:67::');
      assert.deepEqual(v6.allocation_pools, [{ start: 'fd00:67::1', end: 'fd00:67::ffff:ffff:ffff' }]);
      assert.equal(v6.ipv6_ra_mode, 'dhcpv6-stateful');
      assert.equal(v6.ipv6_address_mode, 'dhcpv6-stateful');
      // Raven's service subnets put the gateway on the last address.
      const last = await neutron.subnets.create({
        network_id: network.id,
        name: uniqueName('v6'),
        ip_version: 6,
        cidr: 'fd00:68::/112',
        gateway_ip: 'fd00:68::ffff',
        ...stateful,
      });
      ctx.cleanup.add(() => neutron.subnets.delete(last.id));
      assert.equal(last.gateway_ip, 'fd00:68::ffff');
      assert.deepEqual(last.allocation_pools, [{ start: 'fd00:68::1', end: 'fd00:68::fffe' }]);
    });

    it('gives a port an address per family; a SLAAC subnet adds its EUI-64 address to every port; IPv6 subnets share a router port', async () => {
      const { neutron } = ctx;
      const { network, subnet: v4 } = await tenantNetwork(ctx, '10.69.0.0/24');
      const v6 = await neutron.subnets.create({
        network_id: network.id,
        name: uniqueName('v6'),
        ip_version: 6,
        cidr: 'fd00:69::/64',
        ...stateful,
      });
      ctx.cleanup.add(() => neutron.subnets.delete(v6.id));
      const router = await neutron.routers.create({ name: uniqueName('router') });
      ctx.cleanup.add(() => neutron.routers.delete(router.id));
      const port = await neutron.ports.create({
        network_id: network.id,
        name: uniqueName('dual'),
        fixed_ips: [{ subnet_id: v4.id }, { subnet_id: v6.id, ip_address: 'fd00:69::50' }],
      });
      ctx.cleanup.add(() => neutron.ports.delete(port.id));
      assert.deepEqual(
        port.fixed_ips.map((f) => f.subnet_id),
        [v4.id, v6.id],
      );
      assert.match(addressesOf(port)[0]!, /^10\.69\.0\.\d+$/);
      assert.equal(addressesOf(port)[1], 'fd00:69::50');

      for (const s of [v4, v6]) {
        await neutron.routers.addInterface(router.id, { subnetId: s.id });
        ctx.cleanup.add(() => neutron.routers.removeInterface(router.id, { subnetId: s.id }));
      }
      const slaac = await neutron.subnets.create({
        network_id: network.id,
        name: uniqueName('slaac'),
        ip_version: 6,
        cidr: 'fd00:70::/64',
        ipv6_ra_mode: 'slaac',
        ipv6_address_mode: 'slaac',
      });
      ctx.cleanup.add(() => neutron.subnets.delete(slaac.id));
      const second = await neutron.routers.addInterface(router.id, { subnetId: slaac.id });
      ctx.cleanup.add(() => neutron.routers.removeInterface(router.id, { subnetId: slaac.id }));
      assert.deepEqual(second.subnet_ids, [slaac.id]);
      const routerPorts = await neutron.ports.list({ device_id: router.id }, { fields: ['id', 'fixed_ips'] });
      const byPort = routerPorts.map((p) => addressesOf(p).sort()).sort();
      assert.deepEqual(byPort, [['10.69.0.1'], ['fd00:69::', 'fd00:70::']]);
      assert.equal(second.port_id, routerPorts.find((p) => addressesOf(p).includes('fd00:69::'))!.id);

      // Asked for v4 and the stateful v6 only, a new port still gets its EUI-64 address on the SLAAC subnet.
      const third = await neutron.ports.create({
        network_id: network.id,
        name: uniqueName('dual'),
        fixed_ips: [{ subnet_id: v4.id }, { subnet_id: v6.id }],
      });
      ctx.cleanup.add(() => neutron.ports.delete(third.id));
      const [a, b, c, d, e, f] = third.mac_address.split(':').map((x) => parseInt(x, 16));
      const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
      const eui = `fd00:70::${hex(a! ^ 2, b!)}:${hex(c!, 0xff)}:${hex(0xfe, d!)}:${hex(e!, f!)}`;
      assert.deepEqual(third.fixed_ips.map((x) => x.subnet_id).sort(), [v4.id, v6.id, slaac.id].sort());
      assert.equal(third.fixed_ips.find((x) => x.subnet_id === slaac.id)?.ip_address, eui);

      // Removing one IPv6 subnet from the shared port keeps the port for the other.
      await neutron.routers.removeInterface(router.id, { subnetId: slaac.id });
      const after = await neutron.ports.list({ device_id: router.id }, { fields: ['id', 'fixed_ips'] });
      assert.deepEqual(after.map((p) => addressesOf(p)).sort(), [['10.69.0.1'], ['fd00:69::']]);
    });
  });
}
