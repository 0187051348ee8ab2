/**
 * `raven plan` is the daemon's own path: the plan (the CLI, as a user runs it) of a cluster Raven has never seen — with
 * NetworkPolicy and warm pools on (min == max, so the pools' steady state is one number) — names the same networks,
 * subnets, router interfaces, security groups (and their rule counts), pod ports, pool ports, load balancers,
 * listeners, pools, members and floating IPs as the daemon then makes, counted in the OpenStack simulator before and
 * after; the plan changes nothing, and once the daemon has converged it has nothing to do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { OctaviaClient } from '../../../src/openstack/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { POD_DEVICE_OWNER } from '../../../src/reconcilers/index.ts';
import {
  createPolicy,
  endpointSlice,
  podBody,
  ravenPlan,
  ravenSettings,
  startEnv,
  startRavenInProcess,
  untilNothingToDo,
  type Env,
} from './support.ts';

const CLUSTER = 'agree';

/** What the simulator holds, by what the plan lines name: sorted, so that the two sides compare as lists. */
interface CloudFacts {
  networks: string[];
  /** `name cidr`. */
  subnets: string[];
  /** The subnets (by name) the router has an interface on. */
  routerInterfaces: string[];
  /** `name: N rule(s)`. */
  securityGroups: string[];
  /** Pod ports by name (claimed pool ports under their pod's name). */
  podPorts: string[];
  /** `node: N` free pool ports. */
  poolPorts: string[];
  loadBalancers: string[];
  /** `protocol:port of lb`. */
  listeners: string[];
  pools: string[];
  /** `pool: address:port, …`. */
  members: string[];
  floatingIps: number;
}

describe('raven plan and the daemon agree', { timeout: 240_000 }, () => {
  let env: Env;
  let octavia: OctaviaClient;
  let externalNetworkId: string;

  before(async () => {
    env = await startEnv(15_016);
    octavia = new OctaviaClient(env.session);
    externalNetworkId = await ensureDevExternalNetwork(env.neutron);
  });
  after(async () => {
    await env.stop();
  });

  const settings = (): Record<string, string> => ({
    ...ravenSettings(CLUSTER, 'namespace'),
    RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
    RAVEN_TRANSLATE_NETWORK_POLICIES: 'true',
    RAVEN_PORT_POOLS: 'true',
    RAVEN_PORT_POOL_MIN: '2',
    RAVEN_PORT_POOL_MAX: '2',
    RAVEN_PORT_POOL_BATCH: '2',
  });

  const plan = () => ravenPlan(env, settings());

  /** Everything of the cluster in the simulator, as {@link CloudFacts}. */
  async function facts(): Promise<CloudFacts> {
    const mine = (name: string) => name.startsWith(`raven/${CLUSTER}/`);
    const [networks, subnets, ports, groups, rules, fips] = await Promise.all([
      env.neutron.networks.list({}),
      env.neutron.subnets.list({}),
      env.neutron.ports.list({}),
      env.neutron.securityGroups.list({}),
      env.neutron.securityGroupRules.list({}),
      env.neutron.floatingIps.list({}),
    ]);
    const subnetName = new Map(subnets.map((s) => [s.id, s.name]));
    const [router] = await env.neutron.routers.list({ name: `raven/${CLUSTER}/router` });
    const lbs = (await octavia.loadBalancers.list()).filter((lb) => mine(lb.name));
    const lbName = new Map(lbs.map((lb) => [lb.id, lb.name]));
    const listeners = (await octavia.listeners.list()).filter((l) => l.loadbalancers.some((r) => lbName.has(r.id)));
    const pools = (await octavia.pools.list()).filter((p) => p.loadbalancers.some((r) => lbName.has(r.id)));
    const members = await Promise.all(pools.map(async (p) => ({ pool: p, list: await octavia.members.list(p.id) })));
    const podPorts = ports.filter((p) => p.device_owner === POD_DEVICE_OWNER && mine(p.name));
    const pool = podPorts.filter((p) => /\/pool\//.test(p.name));
    const perNode = new Map<string, number>();
    for (const p of pool) perNode.set(p.name, (perNode.get(p.name) ?? 0) + 1);
    const sorted = (list: string[]) => [...list].sort();
    return {
      networks: sorted(networks.filter((n) => mine(n.name)).map((n) => n.name)),
      subnets: sorted(subnets.filter((s) => mine(s.name)).map((s) => `${s.name} ${s.cidr}`)),
      routerInterfaces: sorted(
        ports
          .filter((p) => router && p.device_id === router.id && p.device_owner === 'network:router_interface')
          .flatMap((p) => p.fixed_ips.map((ip) => subnetName.get(ip.subnet_id) ?? ip.subnet_id)),
      ),
      securityGroups: sorted(
        groups
          .filter((g) => mine(g.name))
          .map((g) => `${g.name}: ${rules.filter((r) => r.security_group_id === g.id).length} rule(s)`),
      ),
      podPorts: sorted(podPorts.filter((p) => !pool.includes(p)).map((p) => p.name)),
      poolPorts: sorted([...perNode].map(([name, n]) => `${name}: ${n}`)),
      loadBalancers: sorted(lbs.map((lb) => lb.name)),
      listeners: sorted(
        listeners.map((l) => `${l.protocol}:${l.protocol_port} of ${lbName.get(l.loadbalancers[0]!.id) ?? ''}`),
      ),
      pools: sorted(pools.map((p) => p.name)),
      members: sorted(
        members.map(
          ({ pool, list }) =>
            `${pool.name}: ${list
              .map((m) => `${m.address}:${m.protocol_port}`)
              .sort()
              .join(', ')}`,
        ),
      ),
      floatingIps: fips.filter((f) => f.port_id !== null).length,
    };
  }

  /** The same facts, read from the plan's lines (the cloud was empty of the cluster before). */
  function planFacts(lines: string[]): CloudFacts {
    const all = (re: RegExp) => lines.flatMap((l) => re.exec(l)?.slice(1) ?? []);
    const groups = lines.flatMap((l) => {
      const m = /^\+ security group (\S+) with (\d+) rule\(s\)$/.exec(l);
      return m ? [`${m[1]}: ${m[2]} rule(s)`] : [];
    });
    const ports = lines.flatMap((l) => {
      const m = /^\+ port (\S+)/.exec(l);
      return m ? [m[1]!] : [];
    });
    const perNode = new Map<string, number>();
    for (const p of ports.filter((p) => /\/pool\//.test(p))) perNode.set(p, (perNode.get(p) ?? 0) + 1);
    const listeners = lines.flatMap((l) => {
      const m = /^\+ listener (\S+) of load balancer (\S+)$/.exec(l);
      return m ? [`${m[1]} of ${m[2]}`] : [];
    });
    const members = lines.flatMap((l) => {
      const m = /^~ members of pool (\S+): (.*)$/.exec(l);
      return m ? [`${m[1]}: ${m[2] === '(none)' ? '' : m[2]}`] : [];
    });
    const sorted = (list: string[]) => [...list].sort();
    return {
      networks: sorted(all(/^\+ network (\S+)/)),
      subnets: sorted(lines.flatMap((l) => /^\+ subnet (\S+) (\S+) on network /.exec(l)?.slice(1, 3).join(' ') ?? [])),
      routerInterfaces: sorted(all(/^\+ interface of router \S+ on subnet (\S+)$/)),
      securityGroups: sorted(groups),
      // VIP ports are Octavia's, not pods'.
      podPorts: sorted(ports.filter((p) => !/\/pool\//.test(p) && !p.endsWith('/vip'))),
      poolPorts: sorted([...perNode].map(([name, n]) => `${name}: ${n}`)),
      loadBalancers: sorted(all(/^\+ load balancer (\S+)/)),
      listeners: sorted(listeners),
      pools: sorted(all(/^\+ pool (\S+) /)),
      members: sorted(members),
      floatingIps: lines.filter((l) => l.startsWith('+ floating IP ')).length,
    };
  }

  it('the plan of a new cluster is what the daemon makes, and then there is nothing to do', async () => {
    for (const node of ['node-1', 'node-2'])
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
    for (const name of ['shop', 'lab'])
      await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const pods = [
      podBody('shop', 'web-0', 'node-1', { app: 'web' }),
      podBody('shop', 'web-1', 'node-2', { app: 'web' }),
      podBody('shop', 'client', 'node-1', { app: 'client' }),
      podBody('lab', 'x', 'node-2'),
    ];
    for (const pod of pods) await env.client.create(resources.pods, pod, { namespace: pod.metadata.namespace });
    await createPolicy(env.client, 'shop', 'web-from-client', {
      podSelector: { matchLabels: { app: 'web' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'client' } } }], ports: [{ port: 8080 }] }],
    });
    // Without a selector: its hand-written slice names addresses outside the cluster (TEST-NET-1).
    await env.client.create(
      resources.services,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
      { namespace: 'shop' },
    );
    await env.client.create(resources.endpointslices, endpointSlice('shop', 'web', ['192.0.2.50', '192.0.2.51']), {
      namespace: 'shop',
    });

    const before = await facts();
    assert.deepEqual(before.networks, [], 'the cloud holds nothing of the cluster yet');
    const lines = await plan();
    assert.equal(lines[0], `cluster ${CLUSTER}: ${lines.filter((l) => /^[+~-] /.test(l)).length} change(s)`);
    assert.deepEqual(await facts(), before, 'raven plan changed the cloud');
    const planned = planFacts(lines);

    const raven = startRavenInProcess(env, settings(), { gc: { intervalSeconds: 1, graceSeconds: 0 } });
    try {
      await untilNothingToDo(plan, CLUSTER, 90_000, `\n\nthe first plan:\n${lines.join('\n')}`);
    } finally {
      await raven.stop();
    }
    const made = await facts();
    const context = `the plan:\n${lines.join('\n')}`;
    assert.deepEqual(planned.networks, made.networks, context);
    // Which namespace gets which carved range depends on the order its workers reconcile them in: the names, and the
    // ranges as a set.
    const names = (list: string[]) => list.map((s) => s.split(' ')[0]).sort();
    const ranges = (list: string[]) => list.map((s) => s.split(' ')[1]).sort();
    assert.deepEqual(names(planned.subnets), names(made.subnets), context);
    assert.deepEqual(ranges(planned.subnets), ranges(made.subnets), context);
    assert.deepEqual(planned.routerInterfaces, made.routerInterfaces, context);
    assert.deepEqual(planned.securityGroups, made.securityGroups, context);
    assert.deepEqual(planned.podPorts, made.podPorts, context);
    assert.deepEqual(planned.poolPorts, made.poolPorts, context);
    assert.deepEqual(planned.loadBalancers, made.loadBalancers, context);
    assert.deepEqual(planned.listeners, made.listeners, context);
    assert.deepEqual(planned.pools, made.pools, context);
    assert.deepEqual(planned.members, made.members, context);
    assert.equal(planned.floatingIps, made.floatingIps, context);
    // Each kind is really there: the comparison is not of two empty lists.
    assert.ok(made.securityGroups.length > 0 && made.poolPorts.length > 0 && made.members.length > 0, context);
  });
});
