/**
 * Dual-stack end to end, once per subnet strategy: the embedded API server with an IPv4 and an IPv6 service range, the
 * cluster simulator (scheduler, kubelet, EndpointSlice controller) and Raven in process against the OpenStack
 * simulator. Pods get a Neutron port with an address per family, their VIF and `status.podIPs` list both; a
 * RequireDualStack LoadBalancer Service gets a clusterIP per family and one Octavia load balancer with a VIP per
 * family (the IPv6 one as an additional VIP on Raven's VIP port) and members of both families. Everything is read
 * back through the simulator's Neutron and Octavia APIs.
 */
import assert from 'node:assert/strict';
import { describe, it } from '../support/node-test.ts';
import type { Pod, Service, ServiceSpec } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import { OctaviaClient, provisioningState, type Member } from '../../src/openstack/index.ts';
import { loadRavenConfig } from '../../src/daemon/config/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../../src/reconcilers/index.ts';
import { runSimulator } from '../support/cluster-sim.ts';
import { waitFor } from '../support/wait.ts';
import { composeInProcess, startEnv, type Env } from './raven/support.ts';

const SERVICE_RANGES = '10.96.0.0/16,fd00:10:96::/112';

interface Case {
  title: string;
  strategy: 'shared' | 'namespace';
  settings: Record<string, string>;
  /** Made in the OpenStack simulator before Raven starts: more settings (an operator's existing subnets). */
  prepare?: (env: Env) => Promise<Record<string, string>>;
  /** The pod ranges, IPv4 then IPv6. */
  v4: RegExp;
  v6: RegExp;
  /** The pod network's primary family is IPv6 (listed first). */
  v6Primary?: boolean;
  /** NetworkPolicy translated (the default): members are routed (no subnet), a policy's rules cover both families. */
  policies: boolean;
}

const cases: Case[] = [
  {
    title: 'strategy shared',
    strategy: 'shared',
    settings: { RAVEN_POD_SUBNET_CIDRS: '10.245.0.0/16,fd00:10:245::/64', RAVEN_PORT_POOLS: 'false' },
    v4: /^10\.245\./,
    v6: /^fd00:10:245:/,
    policies: true,
  },
  {
    title: 'strategy namespace',
    strategy: 'namespace',
    settings: {
      RAVEN_NAMESPACE_CIDRS: '10.244.0.0/16,fd00:10:244::/56',
      RAVEN_NAMESPACE_IPV6_PREFIX_LENGTH: '64',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
    },
    v4: /^10\.244\./,
    v6: /^fd00:10:244:/,
    policies: false,
  },
  {
    title: 'strategy namespace from subnet pools (one per family)',
    strategy: 'namespace',
    settings: { RAVEN_NAMESPACE_IPV6_PREFIX_LENGTH: '64', RAVEN_TRANSLATE_NETWORK_POLICIES: 'false' },
    prepare: async ({ neutron }) => {
      const v4 = await neutron.subnetPools.create({ name: 'pods-v4', prefixes: ['10.248.0.0/16'] });
      const v6 = await neutron.subnetPools.create({ name: 'pods-v6', prefixes: ['fd00:10:248::/56'] });
      return { RAVEN_NAMESPACE_SUBNET_POOLS: `${v4.id},${v6.id}` };
    },
    v4: /^10\.248\./,
    v6: /^fd00:10:248:/,
    policies: false,
  },
  {
    title: "strategy shared on an operator's existing subnets (one per family, IPv6 primary)",
    strategy: 'shared',
    settings: { RAVEN_PORT_POOLS: 'false', RAVEN_TRANSLATE_NETWORK_POLICIES: 'false', RAVEN_ROUTER_CREATE: 'true' },
    prepare: async ({ neutron }) => {
      const net = await neutron.networks.create({ name: 'operators-pods' });
      const v6 = await neutron.subnets.create({
        network_id: net.id,
        cidr: 'fd00:10:252::/64',
        ip_version: 6,
        ipv6_ra_mode: 'dhcpv6-stateful',
        ipv6_address_mode: 'dhcpv6-stateful',
      });
      const v4 = await neutron.subnets.create({ network_id: net.id, cidr: '10.252.0.0/16', ip_version: 4 });
      return { RAVEN_POD_SUBNET_IDS: `${v6.id},${v4.id}` };
    },
    v4: /^10\.252\./,
    v6: /^fd00:10:252:/,
    v6Primary: true,
    policies: false,
  },
];

const podBody = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'dual', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

/** The cluster simulator and Raven (in process, `settings` over one replica's) against `env`. */
async function startCluster(env: Env, settings: Record<string, string>) {
  const config = loadRavenConfig({
    env: {
      RAVEN_LEADER_ELECT: 'false',
      RAVEN_OPS_PORT: '0',
      RAVEN_RESYNC_PERIOD_SECONDS: '0',
      RAVEN_LOG_LEVEL: 'silent',
      ...settings,
    },
    flags: { loadBalancer: { pendingRequeueMs: 100 } },
  });
  const cluster = runSimulator(env.server);
  const raven = await composeInProcess(env, config);
  return {
    octavia: new OctaviaClient(env.session),
    stop: async (): Promise<void> => {
      await raven.stop();
      await cluster.stop();
    },
  };
}

/** Namespace `dual` and its LoadBalancer Service `web` (port 80 → the pods' `http`), with `spec` merged in. */
async function createService(env: Env, spec: ServiceSpec): Promise<Service> {
  await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dual' } });
  return env.client.create(
    resources.services,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'dual' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
        ...spec,
      },
    } satisfies Service,
    { namespace: 'dual' },
  );
}

/**
 * A NetworkPolicy admitting `app=web` pods to each other on `http`: the target set's group holds a rule naming the
 * peer set's group for each family (a rule of one family would drop the other family's packets).
 */
async function policyCoversBothFamilies(env: Env, strategy: string): Promise<void> {
  await env.client.create(
    resources.networkpolicies,
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'web', namespace: 'dual' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port: 'http' }] }],
      },
    },
    { namespace: 'dual' },
  );
  const rules = await waitFor(
    "the policy's member rules for both families",
    async () => {
      const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=dual-${strategy}`] });
      const found = groups
        .flatMap((g) => g.security_group_rules ?? [])
        .filter((r) => r.remote_group_id && r.direction === 'ingress' && r.port_range_min === 8080);
      return found.length >= 2 ? found : undefined;
    },
    { timeoutMs: 30_000 },
  );
  assert.deepEqual(rules.map((r) => r.ethertype).sort(), ['IPv4', 'IPv6']);
}

async function run(env: Env, c: Case): Promise<void> {
  const { octavia, stop } = await startCluster(env, {
    RAVEN_CLUSTER_ID: `dual-${c.strategy}`,
    RAVEN_SUBNET_STRATEGY: c.strategy,
    RAVEN_SERVICE_SUBNET_CIDRS: SERVICE_RANGES,
    ...c.settings,
    ...(await c.prepare?.(env)),
  });
  try {
    const { client, neutron } = env;
    const svc = await createService(env, { ipFamilyPolicy: 'RequireDualStack' });
    for (const name of ['a', 'b']) await client.create(resources.pods, podBody(name), { namespace: 'dual' });
    const [v4ClusterIP, v6ClusterIP] = svc.spec?.clusterIPs ?? [];
    assert.deepEqual(svc.spec?.ipFamilies, ['IPv4', 'IPv6']);
    assert.match(v4ClusterIP ?? '', /^10\.96\./);
    assert.match(v6ClusterIP ?? '', /^fd00:10:96::/);

    // Pods: Running with an address per family, from the port Raven made.
    const pods = await waitFor(
      'both pods running with two podIPs',
      async () => {
        const list = (await client.list(resources.pods, { namespace: 'dual' })).items;
        return list.length === 2 && list.every((p) => p.status?.podIPs?.length === 2) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const ports = await neutron.ports.list({ device_owner: POD_DEVICE_OWNER });
    const addresses: string[] = [];
    for (const pod of pods) {
      const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])!;
      const port = ports.find((p) => p.id === vif.portId)!;
      assert.equal(port.device_id, pod.metadata.uid);
      const v4 = port.fixed_ips.find((f) => !f.ip_address.includes(':'));
      const v6 = port.fixed_ips.find((f) => f.ip_address.includes(':'));
      assert.match(v4!.ip_address, c.v4);
      assert.match(v6!.ip_address, c.v6);
      // The primary family first: in the port, its VIF and its podIPs.
      const inOrder = c.v6Primary ? [v6!, v4!] : [v4!, v6!];
      assert.deepEqual(
        port.fixed_ips.map((f) => f.ip_address),
        inOrder.map((f) => f.ip_address),
      );
      const v4Prefix = c.strategy === 'shared' ? 16 : 24;
      assert.deepEqual(
        vif.ips.map((ip) => [ip.address, ip.prefixLength]),
        inOrder.map((f) => [f.ip_address, f === v4 ? v4Prefix : 64]),
      );
      assert.deepEqual(
        pod.status?.podIPs?.map((p) => p.ip),
        inOrder.map((f) => f.ip_address),
      );
      const v6Subnet = await neutron.subnets.get(v6!.subnet_id);
      assert.deepEqual([v6Subnet.ip_version, v6Subnet.ipv6_address_mode], [6, 'dhcpv6-stateful']);
      addresses.push(v4!.ip_address, v6!.ip_address);
    }

    // The Service: one load balancer, a VIP per family on Raven's port, members of both families.
    const lbName = `raven/dual-${c.strategy}/dual/web`;
    const built = await waitFor(
      'an ACTIVE load balancer with members of both families',
      async () => {
        const [lb] = await octavia.loadBalancers.list({ name: lbName });
        if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
        const [pool] = await octavia.pools.list({ loadbalancer_id: lb.id });
        const members: Member[] = pool ? await octavia.members.list(pool.id) : [];
        return members.length === 4 ? { lb, members } : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const { lb, members } = built;
    assert.equal(lb.vip_address, v4ClusterIP);
    const vipPort = await neutron.ports.get(lb.vip_port_id);
    assert.equal(vipPort.name, `${lbName}/vip`);
    const v6Vip = vipPort.fixed_ips.find((f) => f.ip_address === v6ClusterIP)!;
    assert.ok(v6Vip, 'the VIP port holds the IPv6 clusterIP');
    assert.deepEqual(lb.additional_vips, [{ subnet_id: v6Vip.subnet_id, ip_address: v6ClusterIP }]);
    assert.deepEqual(members.map((m) => m.address).sort(), [...addresses].sort());
    assert.ok(members.every((m) => m.protocol_port === 8080));
    // Each member on the pod subnet of its family; under NetworkPolicy routed from the VIP subnet (no subnet).
    for (const m of members) {
      const port = ports.find((p) => p.fixed_ips.some((f) => f.ip_address === m.address))!;
      const own = port.fixed_ips.find((f) => f.ip_address === m.address)!.subnet_id;
      assert.equal(m.subnet_id ?? undefined, c.policies ? undefined : own);
    }
    if (c.policies) await policyCoversBothFamilies(env, c.strategy);
    const slices = (await client.list(resources.endpointslices, { namespace: 'dual' })).items;
    assert.deepEqual(slices.map((s) => s.addressType).sort(), ['IPv4', 'IPv6']);

    // Deleting the namespace takes the load balancer, the ports and (strategy namespace) both subnets with it.
    await client.delete(resources.namespaces, 'dual');
    await waitFor(
      'nothing of the namespace left in Neutron and Octavia',
      async () => {
        const [left, lbs, subnets] = await Promise.all([
          neutron.ports.list({}),
          octavia.loadBalancers.list({ name: lbName }),
          neutron.subnets.list({ name: `raven/dual-${c.strategy}/dual` }),
        ]);
        const named = left.filter((p) => p.name.startsWith(`raven/dual-${c.strategy}/dual/`));
        return named.length === 0 && lbs.length === 0 && subnets.length === 0;
      },
      { timeoutMs: 60_000 },
    );
  } finally {
    await stop();
  }
}

describe('dual-stack pods and services, end to end', { timeout: 240_000 }, () => {
  for (const c of cases) {
    it(`${c.title}: pods with both families, a Service with a VIP per family and members of both`, async () => {
      const env = await startEnv(17, { serviceCidr: SERVICE_RANGES });
      try {
        await run(env, c);
      } finally {
        await env.stop();
      }
    });
  }
});

describe('two subnet pools of one family', { timeout: 60_000 }, () => {
  it('are refused with a Warning on the namespace naming both, and no network is made', async () => {
    const env = await startEnv(19);
    const a = await env.neutron.subnetPools.create({ name: 'a', prefixes: ['10.248.0.0/16'] });
    const b = await env.neutron.subnetPools.create({ name: 'b', prefixes: ['10.249.0.0/16'] });
    const { stop } = await startCluster(env, {
      RAVEN_CLUSTER_ID: 'two-v4',
      RAVEN_SUBNET_STRATEGY: 'namespace',
      RAVEN_NAMESPACE_SUBNET_POOLS: `${a.id},${b.id}`,
      RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
    });
    try {
      await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
      const event = await waitFor('a Warning on the namespace', async () =>
        (await env.client.list(resources.events, { namespace: 'default' })).items
          .concat((await env.client.list(resources.events, { namespace: 'ns' })).items)
          .find((e) => e.involvedObject?.name === 'ns' && e.reason === 'InvalidConfiguration'),
      );
      assert.equal(event.type, 'Warning');
      assert.match(event.message ?? '', new RegExp(`subnet pools ${a.id} and ${b.id} are both IPv4`));
      assert.deepEqual(await env.neutron.networks.list({ name: 'raven/two-v4/ns' }), []);
    } finally {
      await stop();
      await env.stop();
    }
  });
});

describe('an IPv6-primary dual-stack LoadBalancer Service', { timeout: 120_000 }, () => {
  it('gets its IPv6 clusterIP as the VIP, the IPv4 one as an additional VIP, and a floating IP on the IPv4 one in its ingress', async () => {
    const env = await startEnv(18, { serviceCidr: SERVICE_RANGES });
    const externalNetworkId = await ensureDevExternalNetwork(env.neutron);
    const { octavia, stop } = await startCluster(env, {
      RAVEN_CLUSTER_ID: 'six-first',
      RAVEN_SUBNET_STRATEGY: 'shared',
      RAVEN_POD_SUBNET_CIDRS: '10.245.0.0/16,fd00:10:245::/64',
      RAVEN_SERVICE_SUBNET_CIDRS: SERVICE_RANGES,
      RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
    });
    try {
      const svc = await createService(env, { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6', 'IPv4'] });
      await env.client.create(resources.pods, podBody('a'), { namespace: 'dual' });
      const [v6ClusterIP, v4ClusterIP] = svc.spec?.clusterIPs ?? [];
      assert.match(v6ClusterIP ?? '', /^fd00:10:96::/);
      assert.match(v4ClusterIP ?? '', /^10\.96\./);
      const ingress = await waitFor(
        'the floating IP in status.loadBalancer.ingress',
        async () => (await env.client.get(resources.services, 'web', 'dual')).status?.loadBalancer?.ingress?.[0]?.ip,
        { timeoutMs: 60_000 },
      );
      const [lb] = await octavia.loadBalancers.list({ name: 'raven/six-first/dual/web' });
      assert.equal(lb?.vip_address, v6ClusterIP);
      assert.deepEqual(
        lb?.additional_vips?.map((v) => v.ip_address),
        [v4ClusterIP],
      );
      const [fip] = await env.neutron.floatingIps.list({ floating_ip_address: ingress });
      assert.deepEqual([fip?.port_id, fip?.fixed_ip_address], [lb?.vip_port_id, v4ClusterIP]);
      assert.equal(fip?.floating_network_id, externalNetworkId);
    } finally {
      await stop();
      await env.stop();
    }
  });
});

describe('IPv6 only, end to end', { timeout: 120_000 }, () => {
  it('an IPv6 pod range and service range: pods get an IPv6 port (once every reconcile failed on ip_version 4), a Service an IPv6 VIP and members', async () => {
    const range = 'fd00:10:97::/112';
    const env = await startEnv(6, { serviceCidr: range });
    const { octavia, stop } = await startCluster(env, {
      RAVEN_CLUSTER_ID: 'six',
      RAVEN_SUBNET_STRATEGY: 'shared',
      RAVEN_POD_SUBNET_CIDR: 'fd00:10:246::/64',
      RAVEN_SERVICE_SUBNET_CIDR: range,
    });
    try {
      const { client } = env;
      const svc = await createService(env, {});
      await client.create(resources.pods, podBody('a'), { namespace: 'dual' });
      assert.deepEqual([svc.spec?.ipFamilies, svc.spec?.ipFamilyPolicy], [['IPv6'], 'SingleStack']);
      const pod = await waitFor(
        'the pod running with an IPv6 address',
        async () => {
          const p = await client.get(resources.pods, 'a', 'dual');
          return p.status?.podIPs?.length ? p : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])!;
      assert.match(vif.ips[0]!.address, /^fd00:10:246:/);
      assert.deepEqual([vif.ips.length, vif.ips[0]!.prefixLength, vif.ips[0]!.gateway], [1, 64, 'fd00:10:246::']);
      assert.deepEqual(pod.status?.podIPs, [{ ip: vif.ips[0]!.address }]);
      const lb = await waitFor(
        'an ACTIVE IPv6 load balancer with the pod as member',
        async () => {
          const [found] = await octavia.loadBalancers.list({ name: 'raven/six/dual/web' });
          if (!found || provisioningState(found).state !== 'ACTIVE') return undefined;
          const [pool] = await octavia.pools.list({ loadbalancer_id: found.id });
          const members = pool ? await octavia.members.list(pool.id) : [];
          return members.length === 1 && members[0]!.address === vif.ips[0]!.address ? found : undefined;
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(lb.vip_address, svc.spec?.clusterIP);
      assert.deepEqual(lb.additional_vips, []);
    } finally {
      await stop();
      await env.stop();
    }
  });
});
