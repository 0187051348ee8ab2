/**
 * Ingress policies and load balancers: with the amphora provider a member sees the amphora's address, not the
 * client's, so Raven decides "allowed from the load balancer" at the listener: its `allowed_cidrs` are what every
 * member's ingress policies admit on its port (docs/policy.md, "Load balancers (Octavia)"). Raven, the cluster
 * simulator (scheduler, kubelet, EndpointSlices) and the OpenStack simulator; read back through Octavia's API.
 */
import { after, before, describe, it } from '../../support/node-test.ts';
import { cidrContains, cidrSize, parseCidr, silentLogger } from '../../../src/core/index.ts';
import type { Event, KubeObject, NetworkPolicy, NetworkPolicyPeer } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { OctaviaClient, provisioningState, type Listener } from '../../../src/openstack/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { runSimulator } from '../../support/cluster-sim.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'netpol-lb';
const NS = 'shop';

const pod = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels },
  spec: { containers: [{ name: 'c', image: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

const policy = (name: string, spec: NetworkPolicy['spec']): NetworkPolicy => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name, namespace: NS },
  spec,
});

describe('ingress NetworkPolicy decides who a load balancer lets through', { timeout: 180_000 }, () => {
  let env: Env;
  let octavia: OctaviaClient;
  let stop: (() => Promise<void>) | undefined;

  /** The web Service's one listener, once its load balancer is ACTIVE. */
  const listener = async (): Promise<Listener | undefined> => {
    const [lb] = await octavia.loadBalancers.list({ name: `raven/${CLUSTER}/${NS}/web` });
    if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
    return (await octavia.listeners.list()).find((l) => l.loadbalancers.some((r) => r.id === lb.id));
  };
  const members = async (): Promise<string[]> => {
    const l = await listener();
    return l?.default_pool_id ? (await octavia.members.list(l.default_pool_id)).map((m) => m.address).sort() : [];
  };
  const podIP = async (name: string, namespace = NS): Promise<string> =>
    waitFor(`${name}'s address`, async () => {
      const got = await env.client.get(resources.pods, name, namespace);
      return got.status?.podIP;
    });
  /** web-from-clients admits these peers (and role=client pods) on `http`. */
  const allowFrom = (...more: NetworkPolicyPeer[]) =>
    env.client.patch(
      resources.networkpolicies,
      'web-from-clients',
      NS,
      {
        spec: {
          ingress: [
            { from: [{ podSelector: { matchLabels: { role: 'client' } } }, ...more], ports: [{ port: 'http' }] },
          ],
        },
      },
      'merge',
    );
  /** Whether the listener admits exactly these addresses and ranges (however they are aggregated), and no more. */
  const admitsExactly = (l: Listener | undefined, wanted: string[]): boolean => {
    const cidrs = (l?.allowed_cidrs ?? []).map((c) => parseCidr(c)!.cidr);
    if (!l || l.allowed_cidrs == null) return false;
    const want = wanted.map((w) => parseCidr(w.includes('/') ? w : `${w}/32`)!.cidr);
    const size = (list: typeof cidrs) => list.reduce((n, c) => n + cidrSize(c), 0n);
    const inside = want.every((w) => cidrs.some((c) => cidrContains(c, { version: w.version, value: w.network })));
    return inside && size(cidrs) === size(want);
  };
  const until = (what: string, check: (l: Listener | undefined) => boolean | Promise<boolean>) =>
    waitFor(what, async () => check(await listener()), { timeoutMs: 30_000 }).catch(async (err) => {
      const l = await listener();
      throw new Error(`${String(err)}; allowed_cidrs ${JSON.stringify(l?.allowed_cidrs)}`);
    });

  before(async () => {
    env = await startEnv(16_260);
    octavia = new OctaviaClient(env.session);
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const raven = await composeInProcess(
      env,
      loadRavenConfig({
        env: ravenSettings(CLUSTER, 'shared'),
        flags: { loadBalancer: { pendingRequeueMs: 200 } },
      }),
    );
    const cluster = runSimulator(env.server, { logger: silentLogger, deleteGraceMs: 200 });
    stop = async () => {
      await cluster.stop();
      await raven.stop();
    };
    for (const name of ['web-1', 'web-2'])
      await env.client.create(resources.pods, pod(name, { app: 'web', tier: 'front' }), { namespace: NS });
    await env.client.create(resources.pods, pod('client-1', { role: 'client' }), { namespace: NS });
    await env.client.create(resources.pods, pod('bystander', {}), { namespace: NS });
    await env.client.create(
      resources.services,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
      { namespace: NS },
    );
  });
  after(async () => {
    await stop?.();
    await env.stop();
  });

  it('a Service whose pods no policy isolates: its listener is open to all', async () => {
    const web = [await podIP('web-1'), await podIP('web-2')].sort();
    await waitFor('both members', async () => JSON.stringify(await members()) === JSON.stringify(web), {
      timeoutMs: 30_000,
    });
    await until('open to all', (l) => l !== undefined && l.allowed_cidrs == null);
  });

  it("pods isolated to role=client: the listener admits exactly the clients' addresses; a new client adds its own", async () => {
    await env.client.create(
      resources.networkpolicies,
      policy('deny-all', { podSelector: {}, policyTypes: ['Ingress'] }),
      {
        namespace: NS,
      },
    );
    await env.client.create(
      resources.networkpolicies,
      policy('web-from-clients', {
        podSelector: { matchLabels: { tier: 'front' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 'http' }] }],
      }),
      { namespace: NS },
    );
    const first = await podIP('client-1');
    await until(`only ${first}`, (l) => admitsExactly(l, [first]));
    await env.client.create(resources.pods, pod('client-2', { role: 'client' }), { namespace: NS });
    const second = await podIP('client-2');
    await until(`${first} and ${second}`, (l) => admitsExactly(l, [first, second]));
  });

  it('loadBalancerSourceRanges intersect with what the policies admit', async () => {
    const clients = [await podIP('client-1'), await podIP('client-2')];
    await allowFrom({ ipBlock: { cidr: '198.51.100.0/24' } });
    await until('clients and the ipBlock', (l) => admitsExactly(l, [...clients, '198.51.100.0/24']));
    await env.client.patch(
      resources.services,
      'web',
      NS,
      { spec: { loadBalancerSourceRanges: ['198.51.100.128/25', '203.0.113.0/24'] } },
      'merge',
    );
    // The pods' ranges stay (in-cluster clients of the clusterIP), so the clients stay; the outside is cut to both.
    await until('clients and the overlap', (l) => admitsExactly(l, [...clients, '198.51.100.128/25']));
  });

  it('a policy that admits everyone on the port lifts the restriction, and its delete puts it back', async () => {
    await env.client.create(
      resources.networkpolicies,
      policy('web-open', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{}] }),
      { namespace: NS },
    );
    // Only loadBalancerSourceRanges are left, with the pods' range, as without policies.
    const ranges = ['10.244.0.0/16', '198.51.100.128/25', '203.0.113.0/24'];
    await until('the source ranges only', (l) => JSON.stringify(l?.allowed_cidrs) === JSON.stringify(ranges));
    await env.client.delete(resources.networkpolicies, 'web-open', NS);
    const clients = [await podIP('client-1'), await podIP('client-2')];
    await until('restricted again', (l) => admitsExactly(l, [...clients, '198.51.100.128/25']));
  });

  it('a member whose policies admit no one on its port is left out, with a Warning on the Service', async () => {
    // web-3 is selected by deny-all only.
    await env.client.create(resources.pods, pod('web-3', { app: 'web' }), { namespace: NS });
    const third = await podIP('web-3');
    const web = [await podIP('web-1'), await podIP('web-2')].sort();
    const warned = async () =>
      (await env.client.list<Event>(resources.events, { namespace: NS })).items.some(
        (e) => e.reason === 'EndpointNotAdmitted' && e.involvedObject.name === 'web' && e.message?.includes(third),
      );
    await waitFor('the Warning', warned, { timeoutMs: 30_000 });
    // The listener's pool (ACTIVE again after the pass that warned) holds the other two only.
    await waitFor('two members', async () => JSON.stringify(await members()) === JSON.stringify(web), {
      timeoutMs: 30_000,
    });
    // Let in: it becomes a member.
    await env.client.patch(resources.pods, 'web-3', NS, { metadata: { labels: { tier: 'front' } } }, 'merge');
    await waitFor('three members', async () => (await members()).includes(third), { timeoutMs: 30_000 });
  });

  it("a namespace labelled into a namespaceSelector peer adds its pods' addresses", async () => {
    await env.client.create(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'partner' },
    });
    await env.client.create(
      resources.pods,
      { ...pod('visitor', {}), metadata: { name: 'visitor', namespace: 'partner' } },
      {
        namespace: 'partner',
      },
    );
    const visitor = await podIP('visitor', 'partner');
    const clients = [await podIP('client-1'), await podIP('client-2')];
    await allowFrom(
      { ipBlock: { cidr: '198.51.100.0/24' } },
      { namespaceSelector: { matchLabels: { access: 'granted' } } },
    );
    // No namespace has the label yet: nothing changes.
    await until('as before', (l) => admitsExactly(l, [...clients, '198.51.100.128/25']));
    await env.client.patch(
      resources.namespaces,
      'partner',
      undefined,
      { metadata: { labels: { access: 'granted' } } },
      'merge',
    );
    await until(`and ${visitor}`, (l) => admitsExactly(l, [...clients, visitor, '198.51.100.128/25']));
  });
});
