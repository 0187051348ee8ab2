import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { silentLogger } from '../../core/index.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../openstack/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import { waitFor } from '../../../test/support/wait.ts';
import type { ClusterNetwork, ReconcilerConfig } from '../network/index.ts';
import { ClusterNetworkBootstrap, ensureClusterNetwork } from './bootstrap.ts';

const config = (clusterId: string, more: Partial<ReconcilerConfig> = {}): ReconcilerConfig => ({
  clusterId,
  subnets: { strategy: 'shared', shared: { cidr: '10.244.0.0/16' } },
  serviceSubnet: { cidr: '10.96.0.0/12' },
  router: { create: true },
  floatingIps: { allowExternalIPs: true, adoptCidrs: [], adoptProjects: [] },
  securityGroups: [],
  emulateKubeProxy: false,
  loadBalancer: { pendingRequeueMs: 100, stuckAfterSeconds: 600 },
  gc: { graceSeconds: 0 },
  portPools: {
    enabled: false,
    sizing: 'static',
    demandWindowSeconds: 60,
    trimIdleSeconds: 120,
    prefillNodes: 0,
    min: 0,
    max: 0,
    batch: 1,
    idleSeconds: 0,
    namespaces: [],
  },
  ...more,
});

describe('the cluster network bootstrap', () => {
  let sim: RunningOpenStackSim;
  let session: OpenStackSession;
  let neutron: NeutronClient;
  let octavia: OctaviaClient;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-bootstrap-'));
    const cloudsYamlOut = join(dir, 'clouds.yaml');
    sim = await runOpenStackSim({ auth: 'keystone', cloudsYamlOut });
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
    });
    neutron = new NeutronClient(session);
    octavia = new OctaviaClient(session);
  });
  after(async () => {
    await session.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a dual-stack pod and service network: a subnet per family (IPv6 dhcpv6-stateful), each routed; again changes nothing', async () => {
    const dual = config('dual', {
      subnets: { strategy: 'shared', shared: { cidrs: ['fd00:10:244::/64', '10.245.0.0/16'] } },
      serviceSubnet: { cidrs: ['10.97.0.0/16', 'fd00:10:96::/112'] },
    });
    const first = await ensureClusterNetwork({ neutron, octavia }, dual, { logger: silentLogger });
    assert.equal(first.podSubnet?.cidr, 'fd00:10:244::/64');
    assert.equal(first.podSubnet?.secondary?.cidr, '10.245.0.0/16');
    assert.equal(first.podSubnet?.gatewayIp, 'fd00:10:244::');
    assert.equal(first.serviceSubnet?.cidr, '10.97.0.0/16');
    assert.deepEqual(first.serviceSubnet?.secondary, {
      subnetId: first.serviceSubnet.secondary!.subnetId,
      cidr: 'fd00:10:96::/112',
      gatewayIp: 'fd00:10:96::ffff',
    });
    const v6 = await neutron.subnets.get(first.podSubnet.subnetId);
    assert.deepEqual([v6.ip_version, v6.ipv6_ra_mode, v6.ipv6_address_mode], [6, 'dhcpv6-stateful', 'dhcpv6-stateful']);
    assert.equal(
      first.podSubnet?.networkId,
      (await neutron.subnets.get(first.podSubnet.secondary.subnetId)).network_id,
    );
    const routed = (await neutron.ports.list({ device_id: first.routerId!, device_owner: 'network:router_interface' }))
      .flatMap((p) => p.fixed_ips.map((f) => f.ip_address))
      .sort();
    assert.deepEqual(routed, ['10.245.0.1', '10.97.255.254', 'fd00:10:244::', 'fd00:10:96::ffff']);
    const again = await ensureClusterNetwork({ neutron, octavia }, dual, { logger: silentLogger });
    assert.deepEqual(again, first);
  });

  it("attaches an operator's existing subnet to no router unless one is configured or asked for", async () => {
    const net = await neutron.networks.create({ name: 'operators' });
    const subnet = await neutron.subnets.create({ network_id: net.id, cidr: '10.50.0.0/24', ip_version: 4 });
    const shared = { strategy: 'shared' as const, shared: { subnetId: subnet.id } };
    const none = await ensureClusterNetwork(
      { neutron, octavia },
      config('existing', { subnets: shared, serviceSubnet: {}, router: { create: false } }),
      { logger: silentLogger },
    );
    assert.equal(none.routerId, undefined);
    assert.equal(none.podSubnet?.subnetId, subnet.id);
    assert.deepEqual(await neutron.routers.list({ name: 'raven/existing/router' }), [], 'a router was made');
    const interfaces = await neutron.ports.list({ network_id: net.id, device_owner: 'network:router_interface' });
    assert.deepEqual(interfaces, [], "the operator's subnet was attached");

    const asked = await ensureClusterNetwork(
      { neutron, octavia },
      config('existing', { subnets: shared, serviceSubnet: {}, router: { create: true } }),
      { logger: silentLogger },
    );
    assert.ok(asked.routerId);
    const attached = await neutron.ports.list({ network_id: net.id, device_owner: 'network:router_interface' });
    assert.equal(attached[0]?.device_id, asked.routerId);
  });

  it("takes an operator's dual-stack subnets (one per family on one network, the primary first), refuses two on different networks or of one family", async () => {
    const net = await neutron.networks.create({ name: 'operators-dual' });
    const v4 = await neutron.subnets.create({ network_id: net.id, cidr: '10.51.0.0/24', ip_version: 4 });
    const v6 = await neutron.subnets.create({
      network_id: net.id,
      cidr: 'fd00:51::/64',
      ip_version: 6,
      ipv6_address_mode: 'dhcpv6-stateful',
      ipv6_ra_mode: 'dhcpv6-stateful',
    });
    const existing = (subnetIds: string[]) =>
      ensureClusterNetwork(
        { neutron, octavia },
        config('existing-dual', {
          subnets: { strategy: 'shared', shared: { subnetIds } },
          serviceSubnet: {},
          router: { create: false },
        }),
        { logger: silentLogger },
      );
    const got = await existing([v6.id, v4.id]);
    assert.deepEqual(
      [
        got.podSubnet?.subnetId,
        got.podSubnet?.cidr,
        got.podSubnet?.secondary?.subnetId,
        got.podSubnet?.secondary?.cidr,
      ],
      [v6.id, 'fd00:51::/64', v4.id, '10.51.0.0/24'],
    );
    assert.equal(got.podSubnet?.networkId, net.id);

    const other = await neutron.networks.create({ name: 'operators-other' });
    const elsewhere = await neutron.subnets.create({ network_id: other.id, cidr: 'fd00:52::/64', ip_version: 6 });
    await assert.rejects(existing([v4.id, elsewhere.id]), {
      code: 'CONFIG_INVALID',
      message: new RegExp(`subnets.shared.subnetIds: subnets ${v4.id} and ${elsewhere.id} are on different networks`),
    });
    const second = await neutron.subnets.create({ network_id: net.id, cidr: '10.53.0.0/24', ip_version: 4 });
    await assert.rejects(existing([v4.id, second.id]), {
      code: 'CONFIG_INVALID',
      message: /are both IPv4; list one subnet per IP family/,
    });
    await assert.rejects(existing([v4.id, '0d9e5c43-5d0b-4a8c-9a55-0a3b0e4b8f11']), {
      code: 'CONFIG_INVALID',
      message: /subnet 0d9e5c43-5d0b-4a8c-9a55-0a3b0e4b8f11 does not exist in Neutron/,
    });
  });

  it('rebuilds a router and a pod network deleted behind its back when asked to recheck, and says so on ready', async () => {
    const bootstrap = new ClusterNetworkBootstrap({
      cloud: { neutron, octavia },
      config: config('heal'),
      logger: silentLogger,
    });
    const seen: ClusterNetwork[] = [];
    const stop = new AbortController();
    const unsubscribe = bootstrap.ready.source((n) => (seen.push(n), [])).start(() => undefined, silentLogger);
    const run = bootstrap.start(stop.signal);
    try {
      const first = await waitFor('the cluster network', () => bootstrap.current());
      const routerId = first.routerId!;
      const pods = first.podSubnet!;
      // Gone behind its back: the router (interfaces first, as Neutron requires) and the pod network.
      for (const subnetId of [pods.subnetId, first.serviceSubnet!.subnetId])
        await neutron.routers.removeInterface(routerId, { subnetId });
      await neutron.routers.delete(routerId);
      await neutron.subnets.delete(pods.subnetId);
      await neutron.networks.delete(pods.networkId);
      bootstrap.recheck();
      const rebuilt = await waitFor('rebuilt', () =>
        bootstrap.current()?.routerId !== routerId ? bootstrap.current() : undefined,
      );
      assert.notEqual(rebuilt.podSubnet?.networkId, pods.networkId);
      assert.equal(rebuilt.podSubnet?.cidr, pods.cidr);
      assert.equal(rebuilt.serviceSubnet?.subnetId, first.serviceSubnet?.subnetId, 'the intact subnet was kept');
      assert.equal((await neutron.routers.list({ id: rebuilt.routerId })).length, 1);
      const interfaces = await neutron.ports.list({
        device_id: rebuilt.routerId!,
        device_owner: 'network:router_interface',
      });
      assert.equal(interfaces.length, 2, 'both subnets are on the new router');
      await waitFor('two ready events', () => seen.length === 2);
      assert.deepEqual(seen[1], rebuilt);
    } finally {
      stop.abort();
      unsubscribe();
      await run;
    }
  });
});
