/**
 * Octavia contract for the listener, pool and monitor fields a Service's options map to (source ranges, affinity,
 * PROXY, X-Forwarded-For, timeouts, connection limit, health monitors, flavors and zones), and for IPv6: a VIP per
 * family on one load balancer (`additional_vips`, v2.26) on a dual-stack port Raven made, and members of either family.
 * Every value asserted here was first read from the real Zed Octavia (`npm run test:openstack`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { isBadRequest, OctaviaClient, OpenStackError, type LoadBalancer } from '../../../src/openstack/index.ts';
import {
  budget,
  createVipNetwork,
  deleteVipNetwork,
  removeLoadBalancer,
  waitForActive,
  type VipNetwork,
} from './octavia-fixture.ts';
import { contractTargets, uniqueName, type ContractTarget } from './target.ts';

const v6Cidr = 'fd00:77::/64';

for (const factory of contractTargets()) {
  describe(`octavia listener, pool and monitor options; IPv6 VIPs (${factory.label})`, () => {
    let target: ContractTarget;
    let octavia: OctaviaClient;
    let net: VipNetwork;
    let v6SubnetId: string;
    let limits: { waitMs: number; pollMs: number };
    const created = new Set<string>();

    before(async () => {
      target = await factory.open();
      octavia = new OctaviaClient(target.session);
      limits = budget(target);
      net = await createVipNetwork(target.session, uniqueName('opt-net'));
      const subnet = await target.session.request<{ subnet: { id: string } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/subnets',
        body: {
          subnet: {
            network_id: net.networkId,
            cidr: v6Cidr,
            ip_version: 6,
            // The addresses the tests name (fd00:77::5, ::50) stay out of what Neutron hands out.
            allocation_pools: [{ start: 'fd00:77::1000', end: 'fd00:77::ffff' }],
            ipv6_address_mode: 'dhcpv6-stateful',
            ipv6_ra_mode: 'dhcpv6-stateful',
          },
        },
      });
      v6SubnetId = subnet.body.subnet.id;
    });

    after(async () => {
      try {
        for (const id of created) await removeLoadBalancer(octavia, id, limits);
        // The network's delete takes the v6 subnet with it once its ports are gone.
        await deleteVipNetwork(target.session, net);
      } finally {
        await target.close();
      }
    });

    const newLb = async (spec: Parameters<OctaviaClient['loadBalancers']['create']>[0]): Promise<LoadBalancer> => {
      const lb = await octavia.loadBalancers.create({ name: uniqueName('opt'), ...spec });
      created.add(lb.id);
      await waitForActive(octavia, lb.id, limits);
      return lb;
    };
    /** A VIP port as Raven makes it: one address per family, the primary first. */
    const dualPort = async (fixedIps: { subnet_id: string; ip_address: string }[]): Promise<string> => {
      const port = await target.session.request<{ port: { id: string } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/ports',
        body: { port: { network_id: net.networkId, name: uniqueName('dual-vip'), fixed_ips: fixedIps } },
      });
      return port.body.port.id;
    };
    const rejects = (p: Promise<unknown>, status: number, message: RegExp) =>
      assert.rejects(p, (err) => err instanceof OpenStackError && err.status === status && message.test(err.message));

    it('listener: allowed_cidrs normalised and of the VIP family only, cleared by null or []; limits and timeouts; X-Forwarded-For on HTTP only', async () => {
      const lb = await newLb({ vip_subnet_id: net.subnetId });
      const settle = () => waitForActive(octavia, lb.id, limits);
      await rejects(
        octavia.listeners.create({
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 80,
          allowed_cidrs: ['192.0.2.0/24', 'fd00::/8'],
        }),
        400,
        /CIDR fd00::\/8 IP version incompatible with VIP 10\.77\.0\.\d+ IP version/,
      );
      const l = await octavia.listeners.create({
        loadbalancer_id: lb.id,
        protocol: 'TCP',
        protocol_port: 80,
        allowed_cidrs: ['192.0.2.0/24', '192.0.2.1/24'],
        connection_limit: 100,
        timeout_client_data: 1000,
        timeout_member_connect: 2000,
        timeout_member_data: 3000,
        timeout_tcp_inspect: 4000,
      });
      assert.deepEqual(l.allowed_cidrs, ['192.0.2.0/24'], 'host bits dropped, duplicates merged');
      assert.deepEqual(
        [l.connection_limit, l.timeout_client_data, l.timeout_member_connect, l.timeout_member_data],
        [100, 1000, 2000, 3000],
      );
      assert.equal(l.timeout_tcp_inspect, 4000);
      await settle();
      for (const clear of [null, []] as const) {
        await octavia.listeners.update(l.id, { allowed_cidrs: ['198.51.100.0/24'] });
        await settle();
        const cleared = await octavia.listeners.update(l.id, { allowed_cidrs: clear as unknown as string[] });
        assert.equal(cleared.allowed_cidrs, null, `${JSON.stringify(clear)} clears the list`);
        await settle();
      }
      // null puts a timeout back to its default; -1 is "no limit".
      const reset = await octavia.listeners.update(l.id, {
        connection_limit: -1,
        timeout_client_data: null as unknown as number,
      });
      assert.deepEqual([reset.connection_limit, reset.timeout_client_data], [-1, 50000]);
      await settle();
      await rejects(
        octavia.listeners.update(l.id, { insert_headers: { 'X-Forwarded-For': 'true' } }),
        400,
        /insert-headers is not a valid option for a TCP protocol listener/,
      );
      const http = await octavia.listeners.create({
        loadbalancer_id: lb.id,
        protocol: 'HTTP',
        protocol_port: 8080,
        insert_headers: { 'X-Forwarded-For': 'true' },
      });
      assert.deepEqual(http.insert_headers, { 'X-Forwarded-For': 'true' });
      await settle();
      await rejects(
        octavia.pools.create({ listener_id: http.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' }),
        400,
        /The pool protocol 'TCP' is invalid while the listener protocol is 'HTTP'/,
      );
      await octavia.pools.create({ listener_id: http.id, protocol: 'PROXY', lb_algorithm: 'ROUND_ROBIN' });
      await settle();
    });

    it('pool: SOURCE_IP persistence (a timeout only on UDP), PROXYV2, lb_algorithm updates, protocol fixed; the amphora refuses SOURCE_IP_PORT; monitors per protocol', async () => {
      const lb = await newLb({ vip_subnet_id: net.subnetId });
      const settle = () => waitForActive(octavia, lb.id, limits);
      const tcp = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 443 });
      await settle();
      await rejects(
        octavia.pools.create({
          listener_id: tcp.id,
          protocol: 'TCP',
          lb_algorithm: 'ROUND_ROBIN',
          session_persistence: { type: 'SOURCE_IP', persistence_timeout: 300 },
        }),
        400,
        /persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools/,
      );
      await rejects(
        octavia.pools.create({ listener_id: tcp.id, protocol: 'TCP', lb_algorithm: 'SOURCE_IP_PORT' }),
        501,
        /Amphora provider does not support SOURCE_IP_PORT algorithm/,
      );
      const pool = await octavia.pools.create({
        listener_id: tcp.id,
        protocol: 'PROXYV2',
        lb_algorithm: 'ROUND_ROBIN',
        session_persistence: { type: 'SOURCE_IP' },
      });
      assert.deepEqual(pool.session_persistence, {
        type: 'SOURCE_IP',
        cookie_name: null,
        persistence_timeout: null,
        persistence_granularity: null,
      });
      await settle();
      const changed = await octavia.pools.update(pool.id, {
        session_persistence: null,
        lb_algorithm: 'LEAST_CONNECTIONS',
      });
      assert.deepEqual([changed.session_persistence, changed.lb_algorithm], [null, 'LEAST_CONNECTIONS']);
      await settle();
      await rejects(
        octavia.pools.update(pool.id, { protocol: 'TCP' } as never),
        400,
        /Unknown attribute for argument pool_\.pool: protocol/,
      );
      const monitor = await octavia.healthMonitors.create({
        pool_id: pool.id,
        type: 'TCP',
        delay: 5,
        timeout: 3,
        max_retries: 1,
        max_retries_down: 3,
      });
      await settle();
      const moved = await octavia.healthMonitors.update(monitor.id, {
        delay: 10,
        timeout: 4,
        max_retries: 2,
        max_retries_down: 4,
      });
      assert.deepEqual([moved.delay, moved.timeout, moved.max_retries, moved.max_retries_down], [10, 4, 2, 4]);
      await settle();
      assert.equal((await octavia.pools.get(pool.id)).healthmonitor_id, monitor.id);

      const udp = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'UDP', protocol_port: 53 });
      await settle();
      const udpPool = await octavia.pools.create({
        listener_id: udp.id,
        protocol: 'UDP',
        lb_algorithm: 'ROUND_ROBIN',
        session_persistence: { type: 'SOURCE_IP', persistence_timeout: 300 },
      });
      assert.equal(udpPool.session_persistence?.persistence_timeout, 300);
      await settle();
      await octavia.healthMonitors.create({
        pool_id: udpPool.id,
        type: 'UDP-CONNECT',
        delay: 5,
        timeout: 3,
        max_retries: 1,
      });
      await settle();
    });

    it('flavors and availability zones: none exist (noop driver); an unknown one is a 400 at create, and neither can change later', async () => {
      await rejects(
        octavia.loadBalancers.create({
          name: uniqueName('opt-fl'),
          vip_subnet_id: net.subnetId,
          flavor_id: '00000000-0000-0000-0000-000000000000',
        }),
        400,
        /The selected flavor is not allowed in this deployment: 00000000-0000-0000-0000-000000000000/,
      );
      await rejects(
        octavia.loadBalancers.create({
          name: uniqueName('opt-az'),
          vip_subnet_id: net.subnetId,
          availability_zone: 'nope',
        }),
        400,
        /Invalid availability zone/,
      );
      const lb = await newLb({ vip_subnet_id: net.subnetId });
      await rejects(
        octavia.loadBalancers.update(lb.id, { flavor_id: 'x' } as never),
        400,
        /Unknown attribute for argument load_balancer\.loadbalancer: flavor_id/,
      );
    });

    it('IPv6: a v6 VIP takes v6 allowed_cidrs only and members of either family', async () => {
      const lb = await newLb({ vip_subnet_id: v6SubnetId });
      assert.match(lb.vip_address, /^fd00:77::/);
      const settle = () => waitForActive(octavia, lb.id, limits);
      await rejects(
        octavia.listeners.create({
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 80,
          allowed_cidrs: ['10.0.0.0/8'],
        }),
        400,
        /CIDR 10\.0\.0\.0\/8 IP version incompatible with VIP fd00:77::\S+ IP version/,
      );
      const l = await octavia.listeners.create({
        loadbalancer_id: lb.id,
        protocol: 'TCP',
        protocol_port: 80,
        allowed_cidrs: ['fd00::/8', '::/128'],
      });
      assert.deepEqual([...(l.allowed_cidrs ?? [])].sort(), ['::/128', 'fd00::/8']);
      await settle();
      const pool = await octavia.pools.create({ listener_id: l.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' });
      await settle();
      await octavia.members.batchUpdate(pool.id, [
        { address: 'fd00:77::5', protocol_port: 80, subnet_id: v6SubnetId },
        { address: '10.77.0.5', protocol_port: 80, subnet_id: net.subnetId },
      ]);
      await settle();
      const members = (await octavia.members.list(pool.id)).map((m) => m.address).sort();
      assert.deepEqual(members, ['10.77.0.5', 'fd00:77::5']);
    });

    it('dual-stack: one load balancer on a port holding an address per family (vip_port_id + vip_subnet_id + additional_vips); allowed_cidrs follow the primary VIP only', async () => {
      const portId = await dualPort([
        { subnet_id: net.subnetId, ip_address: '10.77.0.50' },
        { subnet_id: v6SubnetId, ip_address: 'fd00:77::50' },
      ]);
      // Without a subnet, Octavia cannot tell which of the port's addresses is the VIP.
      await assert.rejects(
        octavia.loadBalancers.create({ name: uniqueName('opt-dual'), vip_port_id: portId }),
        (err) => isBadRequest(err) && /VIP port's subnet could not be determined/.test(err.message),
      );
      const lb = await newLb({
        vip_port_id: portId,
        vip_subnet_id: net.subnetId,
        vip_address: '10.77.0.50',
        additional_vips: [{ subnet_id: v6SubnetId, ip_address: 'fd00:77::50' }],
      });
      assert.equal(lb.vip_address, '10.77.0.50');
      assert.equal(lb.vip_port_id, portId);
      assert.deepEqual(lb.additional_vips, [{ subnet_id: v6SubnetId, ip_address: 'fd00:77::50' }]);
      const read = await octavia.loadBalancers.get(lb.id);
      assert.deepEqual(read.additional_vips, [{ subnet_id: v6SubnetId, ip_address: 'fd00:77::50' }]);
      await rejects(
        octavia.listeners.create({
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 80,
          allowed_cidrs: ['192.0.2.0/24', 'fd00::/8'],
        }),
        400,
        /CIDR fd00::\/8 IP version incompatible with VIP 10\.77\.0\.50 IP version/,
      );
    });

    it('dual-stack as Raven builds it: an IPv6 primary VIP with an IPv4 additional one, members of both families under one listener; additional VIPs cannot be changed', async () => {
      const portId = await dualPort([
        { subnet_id: v6SubnetId, ip_address: 'fd00:77::60' },
        { subnet_id: net.subnetId, ip_address: '10.77.0.60' },
      ]);
      const lb = await newLb({
        vip_port_id: portId,
        vip_subnet_id: v6SubnetId,
        vip_address: 'fd00:77::60',
        additional_vips: [{ subnet_id: net.subnetId, ip_address: '10.77.0.60' }],
      });
      assert.equal(lb.vip_address, 'fd00:77::60');
      assert.equal(lb.vip_subnet_id, v6SubnetId);
      assert.deepEqual(lb.additional_vips, [{ subnet_id: net.subnetId, ip_address: '10.77.0.60' }]);
      const settle = () => waitForActive(octavia, lb.id, limits);
      await rejects(
        octavia.loadBalancers.update(lb.id, { additional_vips: [] } as never),
        400,
        /Unknown attribute for argument load_balancer\.loadbalancer: additional_vips/,
      );
      const l = await octavia.listeners.create({
        loadbalancer_id: lb.id,
        protocol: 'TCP',
        protocol_port: 80,
        allowed_cidrs: ['fd00::/8'],
      });
      assert.deepEqual(l.allowed_cidrs, ['fd00::/8']);
      await settle();
      const pool = await octavia.pools.create({ listener_id: l.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' });
      await settle();
      await octavia.members.batchUpdate(pool.id, [
        { address: '10.77.0.7', protocol_port: 8080, subnet_id: net.subnetId },
        { address: 'fd00:77::7', protocol_port: 8080, subnet_id: v6SubnetId },
      ]);
      await settle();
      const members = await octavia.members.list(pool.id);
      assert.deepEqual(members.map((m) => [m.address, m.subnet_id]).sort(), [
        ['10.77.0.7', net.subnetId],
        ['fd00:77::7', v6SubnetId],
      ]);
    });
  });
}
