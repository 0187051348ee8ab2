/**
 * Services with `loadBalancer.provider: ovn` (docs/translation.md, "Providers"): the load balancer is the OVN
 * provider's — its own VIP port on the clusterIP, SOURCE_IP_PORT pools, members with their subnet, no
 * `allowed_cidrs` (the client's address reaches the members, whose groups carry NetworkPolicy) — and a Service asking
 * for what the provider cannot do is told so. Raven, the cluster simulator and the OpenStack simulator, whose `ovn`
 * provider behaves as the real one (test/contract/openstack/octavia-ovn-provider.test.ts); read back through the APIs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { silentLogger } from '../../../src/core/index.ts';
import { POD_DEVICE_OWNER, type Event, type KubeObject, type Service } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { OctaviaClient, provisioningState, type LoadBalancer } from '../../../src/openstack/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { runSimulator } from '../../support/cluster-sim.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'ovn-lb';
const NS = 'shop';

const pod = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels },
  spec: { containers: [{ name: 'c', image: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

const service = (name: string, annotations: Record<string, string> = {}): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS, annotations },
  spec: {
    type: 'LoadBalancer',
    selector: { app: 'web' },
    ports: [
      { name: 'http', port: 80, targetPort: 8080 },
      { name: 'dns', port: 53, targetPort: 8080, protocol: 'UDP' },
    ],
  },
});

describe('Services on the OVN provider', { timeout: 180_000 }, () => {
  let env: Env;
  let octavia: OctaviaClient;
  let stop: (() => Promise<void>) | undefined;

  const activeLb = async (name: string): Promise<LoadBalancer | undefined> => {
    const [lb] = await octavia.loadBalancers.list({ name: `raven/${CLUSTER}/${NS}/${name}` });
    return lb && provisioningState(lb).state === 'ACTIVE' ? lb : undefined;
  };
  const warned = async (reason: string, name: string, text: string) =>
    (await env.client.list<Event>(resources.events, { namespace: NS })).items.some(
      (e) => e.reason === reason && e.involvedObject.name === name && (e.message ?? '').includes(text),
    );

  before(async () => {
    env = await startEnv(16_270);
    octavia = new OctaviaClient(env.session);
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const raven = await composeInProcess(
      env,
      loadRavenConfig({
        env: { ...ravenSettings(CLUSTER, 'shared'), RAVEN_LOAD_BALANCER_PROVIDER: 'ovn' },
        flags: { loadBalancer: { pendingRequeueMs: 200 } },
      }),
    );
    const cluster = runSimulator(env.server, { logger: silentLogger, deleteGraceMs: 200 });
    stop = async () => {
      await cluster.stop();
      await raven.stop();
    };
    for (const name of ['web-1', 'web-2'])
      await env.client.create(resources.pods, pod(name, { app: 'web' }), { namespace: NS });
    await env.client.create(resources.pods, pod('client-1', { role: 'client' }), { namespace: NS });
  });
  after(async () => {
    await stop?.();
    await env.stop();
  });

  it("the provider's load balancer: its VIP port on the clusterIP, SOURCE_IP_PORT, members on their subnet", async () => {
    await env.client.create(resources.services, service('web'), { namespace: NS });
    const lb = await waitFor('web ACTIVE', () => activeLb('web'), { timeoutMs: 30_000 });
    const svc = await env.client.get(resources.services, 'web', NS);
    assert.equal(lb.provider, 'ovn');
    assert.equal(lb.vip_address, svc.spec?.clusterIP);
    const vipPort = await env.neutron.ports.get(lb.vip_port_id);
    assert.equal(vipPort.name, `ovn-lb-vip-${lb.id}`, "the VIP port is the provider's");
    assert.deepEqual(
      vipPort.fixed_ips.map((ip) => ip.ip_address),
      [svc.spec?.clusterIP],
    );
    assert.deepEqual(await env.neutron.ports.list({ name: `raven/${CLUSTER}/${NS}/web/vip` }), [], 'no port of Raven');
    const web = await Promise.all(
      ['web-1', 'web-2'].map(async (n) => (await env.client.get(resources.pods, n, NS)).status?.podIP),
    );
    const pools = await waitFor(
      'both pools',
      async () => {
        const list = (await octavia.pools.list()).filter((p) => p.loadbalancers.some((r) => r.id === lb.id));
        return list.length === 2 ? list : undefined;
      },
      { timeoutMs: 30_000 },
    ).catch(async (err) => {
      const events = (await env.client.list<Event>(resources.events, { namespace: NS })).items;
      throw new Error(`${String(err)}; events: ${events.map((e) => `${e.reason}: ${e.message}`).join(' | ')}`);
    });
    assert.deepEqual(pools.map((p) => `${p.protocol} ${p.lb_algorithm}`).sort(), [
      'TCP SOURCE_IP_PORT',
      'UDP SOURCE_IP_PORT',
    ]);
    await waitFor(
      'both members, with their subnet, in each pool',
      async () => {
        for (const p of pools) {
          const members = await octavia.members.list(p.id);
          const addresses = members.map((m) => m.address).sort();
          if (JSON.stringify(addresses) !== JSON.stringify([...web].sort())) return false;
          if (members.some((m) => !m.subnet_id)) return false;
        }
        return true;
      },
      { timeoutMs: 30_000 },
    );
  });

  it('a NetworkPolicy on the members leaves the listeners open: the members’ groups decide', async () => {
    await env.client.create(
      resources.networkpolicies,
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'web-from-clients', namespace: NS },
        spec: {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 'http' }] }],
        },
      },
      { namespace: NS },
    );
    const lb = await waitFor('web ACTIVE', () => activeLb('web'));
    // Give the policy time to reach the Service (it would be queued at once): the listeners stay open, both members stay.
    await waitFor('the web pods isolated (a policy group on their ports)', async () => {
      const ports = await env.neutron.ports.list({ device_owner: POD_DEVICE_OWNER });
      const web = await env.client.get(resources.pods, 'web-1', NS);
      const port = ports.find((p) => p.device_id === web.metadata.uid);
      return port && port.security_groups.length > 1;
    });
    const listeners = (await octavia.listeners.list()).filter((l) => l.loadbalancers.some((r) => r.id === lb.id));
    assert.equal(listeners.length, 2);
    assert.ok(
      listeners.every((l) => l.allowed_cidrs == null),
      JSON.stringify(listeners.map((l) => l.allowed_cidrs)),
    );
  });

  it('an option the provider cannot do is refused with a Warning; one it ignores is built and said', async () => {
    await env.client.create(
      resources.services,
      service('rr', { 'loadbalancer.openstack.org/lb-method': 'ROUND_ROBIN' }),
      { namespace: NS },
    );
    await env.client.create(
      resources.services,
      service('limited', { 'loadbalancer.openstack.org/connection-limit': '100' }),
      { namespace: NS },
    );
    await waitFor('rr refused', () => warned('InvalidLoadBalancerOption', 'rr', 'SOURCE_IP_PORT (provider ovn)'));
    await waitFor('limited ACTIVE', () => activeLb('limited'), { timeoutMs: 30_000 });
    await waitFor('limited warned', () => warned('LoadBalancerOptionIgnored', 'limited', 'connection-limit'));
    assert.deepEqual(await octavia.loadBalancers.list({ name: `raven/${CLUSTER}/${NS}/rr` }), []);
  });

  it("a deleted Service's load balancer goes, and the provider's VIP port with it", async () => {
    const lb = await waitFor('limited ACTIVE', () => activeLb('limited'));
    await env.client.delete(resources.services, 'limited', NS);
    await waitFor(
      'load balancer and VIP port gone',
      async () =>
        (await octavia.loadBalancers.find(lb.id)) === undefined &&
        (await env.neutron.ports.list({ id: lb.vip_port_id })).length === 0,
      { timeoutMs: 30_000 },
    );
  });
});
