/**
 * Octavia contract for the OVN provider (`provider: ovn`, ovn-octavia-provider on ML2/OVN): what it refuses and with
 * which answer, the VIP port it makes, and the statuses over a load balancer's life (docs/openstack.md, "Octavia's
 * OVN provider"). Runs against the simulator, or against a real Octavia with the `ovn` provider (target.ts,
 * `ovnProviderTargets`); a real Octavia without it skips every test, saying so.
 * Every value here was read from the provider's and Octavia Zed's code, not yet measured on a real cloud.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { OctaviaClient, OpenStackError, type LoadBalancer } from '../../../src/openstack/index.ts';
import {
  budget,
  callerProject,
  createVipNetwork,
  deleteVipNetwork,
  findPort,
  removeLoadBalancer,
  waitFor,
  waitForActive,
  waitForGone,
  type VipNetwork,
} from './octavia-fixture.ts';
import { ovnProviderTargets, uniqueName, type ContractTarget } from './target.ts';

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const option = (detail: string) => `Provider 'ovn' does not support a requested option: ${detail}`;
const action = (detail: string) => `Provider 'ovn' does not support a requested action: ${detail}`;

for (const factory of ovnProviderTargets()) {
  describe(`octavia OVN provider (${factory.label})`, () => {
    let target: ContractTarget;
    let octavia: OctaviaClient;
    let net: VipNetwork;
    let otherSubnetId: string;
    /** The second network (members outside the VIP subnet). */
    let otherNet: string | undefined;
    let limits: { waitMs: number; pollMs: number };
    /** Why the tests skip (no `ovn` provider on this target), or undefined. */
    let skip: string | undefined;
    const created = new Set<string>();

    before(async () => {
      target = await factory.open();
      octavia = new OctaviaClient(target.session);
      limits = budget(target);
      const { body } = await target.session.request<{ providers: { name: string }[] }>({
        service: 'load-balancer',
        method: 'GET',
        path: '/v2/lbaas/providers',
      });
      // The simulator always has it; a real Octavia may not (the test:openstack one has amphora and noop only).
      if (target.kind === 'real' && !body.providers.some((p) => p.name === 'ovn')) {
        skip = `this Octavia has no ovn provider (${body.providers.map((p) => p.name).join(', ')})`;
        return;
      }
      net = await createVipNetwork(target.session, uniqueName('ovn-net'));
      const other = await target.session.request<{ network: { id: string } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/networks',
        body: { network: { name: uniqueName('ovn-other') } },
      });
      otherNet = other.body.network.id;
      const subnet = await target.session.request<{ subnet: { id: string } }>({
        service: 'network',
        method: 'POST',
        path: '/v2.0/subnets',
        body: { subnet: { network_id: otherNet, cidr: '10.78.0.0/24', ip_version: 4 } },
      });
      otherSubnetId = subnet.body.subnet.id;
    });

    after(async () => {
      try {
        if (!skip) {
          for (const id of created) await removeLoadBalancer(octavia, id, limits);
          await deleteVipNetwork(target.session, net);
          if (otherNet)
            await deleteVipNetwork(target.session, {
              networkId: otherNet,
              subnetId: otherSubnetId,
              cidr: '10.78.0.0/24',
            });
        }
      } finally {
        await target.close();
      }
    });

    /** A test that runs only where the `ovn` provider is enabled. */
    const ovnIt = (name: string, fn: () => Promise<void>) =>
      it(name, async (t) => {
        if (skip) {
          t.skip(skip);
          return;
        }
        await fn();
      });

    /** A raw call (no retries: a 500 must come back as it is). */
    const call = async <T = Record<string, unknown>>(
      method: 'GET' | 'POST' | 'PUT' | 'DELETE',
      path: string,
      body?: unknown,
    ): Promise<{ status: number; body: T }> => {
      const res = await target.session.request<T>({
        service: 'load-balancer',
        method,
        path: `/v2/lbaas${path}`,
        ...(body !== undefined ? { body } : {}),
        idempotent: false,
      });
      return { status: res.status, body: res.body };
    };
    /** The request is refused with exactly this status and faultstring (or a faultstring matching the pattern). */
    const refused = async (p: Promise<unknown>, status: number, fault: string | RegExp) => {
      await assert.rejects(p, (err: unknown) => {
        assert.ok(err instanceof OpenStackError, String(err));
        assert.equal(err.status, status, err.message);
        const text = err.message.slice(err.message.indexOf(`: ${status}: `) + `: ${status}: `.length);
        if (typeof fault === 'string') assert.equal(text, fault);
        else assert.match(text, fault);
        return true;
      });
    };

    const newLb = async (extra: Record<string, unknown> = {}): Promise<LoadBalancer> => {
      const lb = await octavia.loadBalancers.create({
        name: uniqueName('ovn'),
        vip_subnet_id: net.subnetId,
        provider: 'ovn',
        ...extra,
      });
      created.add(lb.id);
      return lb;
    };
    const settle = (lbId: string) => waitForActive(octavia, lbId, limits);
    /** An ACTIVE load balancer with a TCP listener on 80 and its SOURCE_IP_PORT pool. */
    const withPool = async () => {
      const lb = await newLb();
      await settle(lb.id);
      const listener = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 });
      await settle(lb.id);
      const pool = await octavia.pools.create({
        listener_id: listener.id,
        protocol: 'TCP',
        lb_algorithm: 'SOURCE_IP_PORT',
      });
      await settle(lb.id);
      return { lb, listener, pool };
    };

    ovnIt('is listed among the providers; it has neither flavor nor availability zone capabilities', async () => {
      const { body } = await call<{ providers: { name: string; description: string }[] }>('GET', '/providers');
      const ovn = body.providers.find((p) => p.name === 'ovn');
      assert.equal(typeof ovn?.description, 'string');
      await refused(
        call('GET', '/providers/ovn/flavor_capabilities'),
        501,
        action('This provider does not support getting the supported flavor metadata.'),
      );
      await refused(
        call('GET', '/providers/ovn/availability_zone_capabilities'),
        501,
        action('This provider does not support getting the supported availability zone metadata.'),
      );
    });

    ovnIt(
      'makes its own VIP port ovn-lb-vip-<id> at the requested address; ACTIVE and ONLINE; members; the cascade delete takes the port',
      async () => {
        const lb = await newLb({ vip_address: '10.77.0.20' });
        assert.equal(lb.provider, 'ovn');
        assert.equal(lb.vip_address, '10.77.0.20');
        assert.equal(lb.vip_subnet_id, net.subnetId);
        assert.equal(lb.vip_network_id, net.networkId);
        const port = await findPort(target.session, lb.vip_port_id);
        assert.ok(port, 'the VIP port exists');
        assert.equal(port.name, `ovn-lb-vip-${lb.id}`);
        assert.equal(port.device_owner, '');
        assert.equal(port.admin_state_up, true);
        assert.deepEqual(port.fixed_ips, [{ subnet_id: net.subnetId, ip_address: '10.77.0.20' }]);
        const project = await callerProject(target);
        if (project) assert.equal(port.project_id, project);
        assert.equal(port.project_id, lb.project_id);

        const active = await settle(lb.id);
        assert.equal(active.operating_status, 'ONLINE');
        const listener = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 });
        await settle(lb.id);
        const l = await octavia.listeners.get(listener.id);
        assert.deepEqual([l.provisioning_status, l.operating_status], ['ACTIVE', 'ONLINE']);
        const udp = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'UDP', protocol_port: 53 });
        await settle(lb.id);
        assert.equal((await octavia.listeners.get(udp.id)).operating_status, 'ONLINE');

        const pool = await octavia.pools.create({
          listener_id: listener.id,
          protocol: 'TCP',
          lb_algorithm: 'SOURCE_IP_PORT',
          session_persistence: { type: 'SOURCE_IP' },
        });
        await settle(lb.id);
        const p = await octavia.pools.get(pool.id);
        assert.deepEqual(
          [p.provisioning_status, p.operating_status],
          ['ACTIVE', 'ONLINE'],
          'a listener pool is ONLINE',
        );
        assert.equal(p.session_persistence?.type, 'SOURCE_IP', 'session persistence is stored (OVN ignores it)');
        const spare = await octavia.pools.create({
          loadbalancer_id: lb.id,
          protocol: 'UDP',
          lb_algorithm: 'SOURCE_IP_PORT',
        });
        await settle(lb.id);
        assert.equal((await octavia.pools.get(spare.id)).operating_status, 'OFFLINE', 'a pool without listener');

        // A member in the VIP subnet needs no subnet_id; one elsewhere names its subnet.
        const m1 = await octavia.members.create(pool.id, { address: '10.77.0.30', protocol_port: 8080 });
        await settle(lb.id);
        const m2 = await octavia.members.create(pool.id, {
          address: '10.78.0.30',
          protocol_port: 8080,
          subnet_id: otherSubnetId,
        });
        await settle(lb.id);
        const members = await octavia.members.list(pool.id);
        assert.deepEqual(
          members.map((m) => [m.address, m.provisioning_status, m.operating_status, m.subnet_id]).sort(),
          [
            ['10.77.0.30', 'ACTIVE', 'NO_MONITOR', null],
            ['10.78.0.30', 'ACTIVE', 'NO_MONITOR', otherSubnetId],
          ],
        );
        assert.equal((await octavia.pools.get(spare.id)).operating_status, 'OFFLINE');
        await octavia.members.delete(pool.id, m1.id);
        await settle(lb.id);
        assert.equal((await octavia.pools.get(pool.id)).operating_status, 'ONLINE', 'one member left');
        await octavia.members.delete(pool.id, m2.id);
        await settle(lb.id);
        assert.equal((await octavia.pools.get(pool.id)).operating_status, 'OFFLINE', 'no member left');

        // admin_state_up false: OFFLINE, on the listener, the pool and the load balancer.
        await octavia.listeners.update(listener.id, { admin_state_up: false });
        await settle(lb.id);
        assert.equal((await octavia.listeners.get(listener.id)).operating_status, 'OFFLINE');
        await octavia.pools.update(pool.id, { admin_state_up: false });
        await settle(lb.id);
        assert.equal((await octavia.pools.get(pool.id)).operating_status, 'OFFLINE');
        await octavia.loadBalancers.update(lb.id, { admin_state_up: false });
        assert.equal((await settle(lb.id)).operating_status, 'OFFLINE');

        await refused(
          call('DELETE', `/loadbalancers/${lb.id}`),
          400,
          `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`,
        );
        await octavia.loadBalancers.delete(lb.id, { cascade: true });
        await waitForGone(`load balancer ${lb.id}`, () => octavia.loadBalancers.find(lb.id), limits);
        created.delete(lb.id);
        assert.equal(await octavia.listeners.find(listener.id), undefined);
        assert.equal(await octavia.pools.find(pool.id), undefined);
        await waitFor(
          'the VIP port deleted',
          () => findPort(target.session, lb.vip_port_id),
          (p) => p === undefined,
          limits,
        );
      },
    );

    ovnIt('refuses L7 protocols and source ranges on listeners; nothing is made or changed', async () => {
      const lb = await newLb();
      await settle(lb.id);
      for (const protocol of ['HTTP', 'HTTPS'] as const) {
        await refused(
          call('POST', '/listeners', { listener: { loadbalancer_id: lb.id, protocol, protocol_port: 80 } }),
          501,
          option(`OVN provider does not support ${protocol} protocol`),
        );
      }
      await refused(
        call('POST', '/listeners', {
          listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80, allowed_cidrs: ['192.0.2.0/24'] },
        }),
        501,
        option('OVN provider does not support allowed_cidrs option'),
      );
      // The API's own checks come first: a source range of the other family is its 400.
      await refused(
        call('POST', '/listeners', {
          listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80, allowed_cidrs: ['fd00::/8'] },
        }),
        400,
        /^Validation failure: CIDR fd00::\/8 IP version incompatible with VIP/,
      );
      assert.deepEqual(await octavia.listeners.list({ loadbalancer_id: lb.id }), [], 'no listener was made');
      assert.equal((await octavia.loadBalancers.get(lb.id)).provisioning_status, 'ACTIVE', 'the LB was not locked');

      const sctp = await octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'SCTP', protocol_port: 80 });
      await settle(lb.id);
      await refused(
        call('PUT', `/listeners/${sctp.id}`, { listener: { allowed_cidrs: ['192.0.2.0/24'] } }),
        501,
        option('OVN provider does not support allowed_cidrs option'),
      );
      for (const clear of [[], null]) {
        const { status, body } = await call<{ listener: { allowed_cidrs: unknown } }>('PUT', `/listeners/${sctp.id}`, {
          listener: { allowed_cidrs: clear },
        });
        assert.equal(status, 200);
        assert.equal(body.listener.allowed_cidrs, null);
        await settle(lb.id);
      }

      await refused(
        call('POST', '/l7policies', { l7policy: { listener_id: sctp.id, action: 'REJECT' } }),
        501,
        action('This provider does not support creating l7policies.'),
      );
    });

    ovnIt('pools: TCP, UDP and SCTP with SOURCE_IP_PORT only', async () => {
      const lb = await newLb();
      await settle(lb.id);
      for (const algorithm of ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP'] as const) {
        await refused(
          call('POST', '/pools', { pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: algorithm } }),
          501,
          option(`OVN provider does not support ${algorithm} algorithm`),
        );
      }
      // The protocol is checked before the algorithm.
      for (const protocol of ['HTTP', 'PROXY'] as const) {
        await refused(
          call('POST', '/pools', { pool: { loadbalancer_id: lb.id, protocol, lb_algorithm: 'ROUND_ROBIN' } }),
          501,
          option(`OVN provider does not support ${protocol} protocol`),
        );
      }
      assert.deepEqual(await octavia.pools.list({ loadbalancer_id: lb.id }), []);
      const pool = await octavia.pools.create({
        loadbalancer_id: lb.id,
        protocol: 'SCTP',
        lb_algorithm: 'SOURCE_IP_PORT',
      });
      await settle(lb.id);
      await refused(
        call('PUT', `/pools/${pool.id}`, { pool: { lb_algorithm: 'ROUND_ROBIN' } }),
        501,
        option('OVN provider does not support ROUND_ROBIN algorithm'),
      );
      assert.equal((await octavia.pools.get(pool.id)).lb_algorithm, 'SOURCE_IP_PORT');
    });

    ovnIt('members: no monitor address or port, one IP family, the VIP subnet unless subnet_id is given', async () => {
      const { lb, pool } = await withPool();
      const members = (body: Record<string, unknown>) => call('POST', `/pools/${pool.id}/members`, { member: body });
      await refused(
        members({ address: '10.77.0.31', protocol_port: 80, monitor_port: 9000 }),
        501,
        option('OVN Load Balancer does not support different member monitor address or port.'),
      );
      await refused(
        members({ address: '10.77.0.31', protocol_port: 80, monitor_address: '10.77.0.32' }),
        501,
        option('OVN Load Balancer does not support different member monitor address or port.'),
      );
      await refused(
        members({ address: 'fd00:77::31', protocol_port: 80 }),
        501,
        option('OVN provider does not support mixing IPv4/IPv6 configuration within the same Load Balancer.'),
      );
      await refused(
        members({ address: '10.78.0.31', protocol_port: 80 }),
        501,
        option(
          'Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member creation with ' +
            'OVN Provider Driver if it is not the same as LB VIP subnet',
        ),
      );
      assert.deepEqual(await octavia.members.list(pool.id), [], 'nothing was made');

      // A PUT of a member stored without subnet_id fails in the driver; one with its subnet_id goes through.
      const bare = await octavia.members.create(pool.id, { address: '10.77.0.33', protocol_port: 80 });
      await settle(lb.id);
      await refused(
        call('PUT', `/pools/${pool.id}/members/${bare.id}`, { member: { weight: 5 } }),
        500,
        "Provider 'ovn' reports error: failed to detect a valid IP address from Unset",
      );
      const named = await octavia.members.create(pool.id, {
        address: '10.77.0.34',
        protocol_port: 80,
        subnet_id: net.subnetId,
      });
      await settle(lb.id);
      assert.equal((await octavia.members.update(pool.id, named.id, { weight: 5 })).weight, 5);
      await settle(lb.id);

      // Batches: a member with monitor options is skipped, and named — but the rest is applied first: the member the
      // batch leaves out (10.77.0.33) is deleted (measured on Zed). One outside the VIP subnet fails the batch at once.
      await refused(
        call('PUT', `/pools/${pool.id}/members`, {
          members: [
            { address: '10.77.0.34', protocol_port: 80, subnet_id: net.subnetId },
            { address: '10.77.0.35', protocol_port: 80, monitor_port: 9000 },
          ],
        }),
        501,
        new RegExp(
          `^${option('OVN provider does not support monitor options, so following members skipped: ').replace(
            /[()]/g,
            '\\$&',
          )}\\['${uuid.source}'\\]$`,
        ),
      );
      // The deletion is the provider's request thread's, after the answer. It reports to Octavia through the driver
      // agent, which waits on the row locks of any call in flight, and a failed report is retried after 1, 2, 4 … s
      // without a log line. So it is awaited before the next call (CI once saw it still pending 30 s later with the
      // next refused batch sent 0.1 s after this one), and for longer than a change Octavia makes itself.
      await waitFor(
        'the member the refused batch left out deleted',
        async () => (await octavia.members.list(pool.id)).map((m) => m.address).sort(),
        (addresses) => JSON.stringify(addresses) === JSON.stringify(['10.77.0.34']),
        { ...limits, waitMs: limits.waitMs * 3 },
      );
      await refused(
        call('PUT', `/pools/${pool.id}/members`, {
          members: [
            { address: '10.77.0.34', protocol_port: 80, subnet_id: net.subnetId },
            { address: '10.78.0.35', protocol_port: 80 },
          ],
        }),
        501,
        option(
          'Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member batch update ' +
            'with OVN Provider Driver if it is not the same as LB VIP subnet',
        ),
      );
      // Nothing else changed: the refusal above came before anything was queued.
      assert.deepEqual((await octavia.members.list(pool.id)).map((m) => m.address).sort(), ['10.77.0.34']);
      const { status } = await call('PUT', `/pools/${pool.id}/members`, {
        members: [
          { address: '10.77.0.34', protocol_port: 80, subnet_id: net.subnetId },
          { address: '10.77.0.36', protocol_port: 80 },
        ],
      });
      assert.equal(status, 202);
      await settle(lb.id);
      const after = await octavia.members.list(pool.id);
      assert.deepEqual(after.map((m) => m.address).sort(), ['10.77.0.34', '10.77.0.36']);
      assert.ok(after.every((m) => m.provisioning_status === 'ACTIVE'));
    });

    ovnIt('health monitors: TCP and UDP-CONNECT only; ERROR where OVN cannot probe a member', async () => {
      const { lb, listener, pool } = await withPool();
      for (const type of ['HTTP', 'HTTPS', 'PING', 'TLS-HELLO'] as const) {
        await refused(
          call('POST', '/healthmonitors', {
            healthmonitor: { pool_id: pool.id, type, delay: 5, timeout: 3, max_retries: 2 },
          }),
          501,
          option(`OVN provider does not support ${type} health monitor type. Supported types: UDP-CONNECT, TCP`),
        );
      }
      assert.deepEqual(await octavia.healthMonitors.list({ pool_id: pool.id }), []);
      // No members: nothing to probe, the monitor is ACTIVE and ONLINE.
      const tcpMonitor = { pool_id: pool.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 2 } as const;
      const hm = await octavia.healthMonitors.create(tcpMonitor);
      await settle(lb.id);
      const h = await octavia.healthMonitors.get(hm.id);
      assert.deepEqual([h.provisioning_status, h.operating_status], ['ACTIVE', 'ONLINE']);
      // The driver's report of a monitor change names no listener: the pool's listener stays PENDING_UPDATE (the
      // load balancer, which is what locks changes, is ACTIVE).
      assert.equal((await octavia.listeners.get(listener.id)).provisioning_status, 'PENDING_UPDATE');
      await octavia.healthMonitors.delete(hm.id);
      await settle(lb.id);

      // A member at an address no port has: OVN finds no logical switch port to probe.
      await octavia.members.create(pool.id, { address: '10.77.0.40', protocol_port: 80 });
      await settle(lb.id);
      const broken = await octavia.healthMonitors.create(tcpMonitor);
      await settle(lb.id);
      const b = await octavia.healthMonitors.get(broken.id);
      assert.deepEqual([b.provisioning_status, b.operating_status], ['ERROR', 'ERROR']);
    });

    ovnIt('a fully populated create is checked by the driver as a whole: a refusal makes nothing', async () => {
      const name = uniqueName('ovn-tree');
      await refused(
        call('POST', '/loadbalancers', {
          loadbalancer: {
            name,
            vip_subnet_id: net.subnetId,
            provider: 'ovn',
            listeners: [
              {
                protocol: 'HTTP',
                protocol_port: 80,
                default_pool: { name: 'p', protocol: 'HTTP', lb_algorithm: 'ROUND_ROBIN' },
              },
            ],
          },
        }),
        501,
        option('OVN provider does not support HTTP protocol'),
      );
      assert.deepEqual(await octavia.loadBalancers.list({ name }), [], 'no load balancer');

      const { status, body } = await call<{ loadbalancer: { id: string } }>('POST', '/loadbalancers', {
        loadbalancer: {
          name,
          vip_subnet_id: net.subnetId,
          provider: 'ovn',
          listeners: [
            {
              protocol: 'TCP',
              protocol_port: 80,
              default_pool: {
                name: 'p',
                protocol: 'TCP',
                lb_algorithm: 'SOURCE_IP_PORT',
                members: [{ address: '10.77.0.50', protocol_port: 80 }],
              },
            },
          ],
        },
      });
      assert.equal(status, 201);
      created.add(body.loadbalancer.id);
      const lb = await settle(body.loadbalancer.id);
      assert.equal(lb.operating_status, 'ONLINE');
      const [listener] = await octavia.listeners.list({ loadbalancer_id: lb.id });
      await waitFor(
        'the tree listener ACTIVE',
        () => octavia.listeners.get(listener!.id),
        (l) => l.provisioning_status === 'ACTIVE',
        limits,
      );
      assert.equal((await octavia.listeners.get(listener!.id)).operating_status, 'ONLINE');
    });

    ovnIt(
      'a VIP port of the caller cannot be used: the driver makes its own at that address, which Neutron refuses',
      async () => {
        const port = await target.session.request<{ port: { id: string } }>({
          service: 'network',
          method: 'POST',
          path: '/v2.0/ports',
          body: {
            port: { network_id: net.networkId, name: uniqueName('own-vip'), fixed_ips: [{ ip_address: '10.77.0.60' }] },
          },
        });
        await refused(
          call('POST', '/loadbalancers', {
            loadbalancer: { name: uniqueName('ovn'), vip_port_id: port.body.port.id, provider: 'ovn' },
          }),
          500,
          new RegExp(
            `^Provider 'ovn' reports error: IP address 10\\.77\\.0\\.60 already allocated in subnet ${net.subnetId}\\n` +
              `Neutron server returns request_ids: \\['req-${uuid.source}'\\]$`,
          ),
        );
      },
    );
  });
}
