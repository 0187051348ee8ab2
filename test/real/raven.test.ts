/**
 * test/real: Raven end to end against a REAL Neutron — the subset `npm run test:openstack` runs
 * (scripts/openstack/test-real.sh), because the simulator can only be as right as our reading of Neutron. Skipped
 * unless `RAVEN_OPENSTACK_TARGET=real` (with `RAVEN_OPENSTACK_CLOUDS` and `RAVEN_OPENSTACK_AUTH`, as the contract
 * suite).
 *
 * The embedded API server, the cluster simulator and Raven (`runRaven`, in process) run here against the real cloud;
 * each describe uses its own cluster id (`real-<random>`), so runs sharing one long-lived Neutron never see each
 * other's resources, and removes everything tagged or named for it at the end — on failure too.
 * - `namespace` strategy: a network + subnet + router interface per namespace with the owner tags; one port per pod
 *   (`device_id` = pod uid, `compute:raven`, `binding:host_id` = node, owner tags) whose address is the VIF's and the
 *   pod's `status.podIP`, inside its namespace's subnet; deleted pods and namespaces leave nothing behind; `raven
 *   plan` and `raven gc [--yes]` (the real CLI, as a child process) on what happened while Raven was down.
 * - `shared` strategy: every pod's port on the cluster's one pod subnet; deleting the namespaces deletes them.
 * These two run the cold path (warm pools off), where each pod's port is made for it and deleted with it.
 * - warm pools: the first pod on a node is served cold and its pool fills (one bulk create); later pods take pool
 *   ports, claimed in Neutron (`device_id`, name) by a compare-and-swap on the revision; a deleted pod's port goes
 *   back to the pool; deleting the namespace drains it.
 * Real Neutron is slow (a few ports a second on 2 cores): few pods, generous timeouts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';
import { silentLogger, type Logger } from '../../src/core/index.ts';
import { ClusterSimulator } from '@raven/cluster-sim';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { SharedInformerFactory } from '../../src/kube/cache/index.ts';
import { KubeClient, resources, type ClusterConnection } from '../../src/kube/client/index.ts';
import {
  loadCloudConfig,
  NeutronClient,
  OpenStackSession,
  type CloudConfig,
  type Port,
} from '../../src/openstack/index.ts';
import { loadRavenConfig } from '../../src/daemon/config/index.ts';
import { createLogger } from '../../src/daemon/logger.ts';
import { runRaven } from '../../src/daemon/run-raven.ts';
import {
  clusterTag,
  NETWORK_ANNOTATION,
  ownerOf,
  parseVif,
  POD_DEVICE_OWNER,
  VIF_ANNOTATION,
  type SubnetInfo,
} from '../../src/reconcilers/index.ts';
import { createNamespaces, podPorts, ravenSettings } from '../e2e/raven/support.ts';
import { leftovers, purgeCluster } from '../support/neutron-cluster.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { teardown } from '../support/teardown.ts';
import { waitFor } from '../support/wait.ts';

const real = process.env.RAVEN_OPENSTACK_TARGET === 'real';
const wanted = process.env.RAVEN_OPENSTACK_AUTH ?? 'both';
const modes = (wanted === 'both' ? ['keystone', 'noauth'] : [wanted]) as ('keystone' | 'noauth')[];
const skip = !real && 'needs RAVEN_OPENSTACK_TARGET=real (npm run test:openstack)';

/** Convergence and clean-up on a real, CPU-bound Neutron. */
const CONVERGE_MS = 120_000;
const CLI_MS = 120_000;
const ravenBin = new URL('../../bin/raven.js', import.meta.url).pathname;
const run = promisify(execFile);
const ACTIVE_NODE = 'host-ovs-filter-active';
const NODES = ['node-1', 'node-2', ACTIVE_NODE];

/** `RAVEN_TEST_LOG=1` prints Raven's JSON logs (debugging a failing run). */
const logger: Logger = process.env.RAVEN_TEST_LOG ? createLogger('info') : silentLogger;

function cloudName(auth: 'keystone' | 'noauth'): string {
  return auth === 'keystone' ? 'raven-real' : 'raven-real-noauth';
}

function cloudsFile(): string {
  const file = process.env.RAVEN_OPENSTACK_CLOUDS;
  if (!file)
    throw new Error(
      'RAVEN_OPENSTACK_TARGET=real needs RAVEN_OPENSTACK_CLOUDS (the clouds.yaml scripts/openstack/real-openstack.sh writes)',
    );
  return file;
}

/** The embedded API server and the cluster simulator here, the real cloud there, and the test's own clients. */
interface RealEnv {
  auth: 'keystone' | 'noauth';
  server: TestServer;
  cloud: CloudConfig;
  client: KubeClient;
  neutron: NeutronClient;
  stop(): Promise<void>;
}

function connectionTo(server: TestServer): ClusterConnection {
  return {
    server: server.url,
    ca: server.caPem,
    credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
    source: 'test',
  };
}

function realSession(cloud: CloudConfig): OpenStackSession {
  // A bulk of ports can take tens of seconds on a 2-core Neutron (docs/openstack.md, "Neutron").
  return new OpenStackSession({ cloud, timeoutMs: 120_000 });
}

async function startRealEnv(auth: 'keystone' | 'noauth'): Promise<RealEnv> {
  const cloud = loadCloudConfig({ cloud: cloudName(auth), env: { OS_CLIENT_CONFIG_FILE: cloudsFile() } });
  const server = await startTestServer();
  const connection = connectionTo(server);
  const client = new KubeClient({ connection, qps: 1000, burst: 2000 });
  const simClient = new KubeClient({ connection, qps: 1000, burst: 2000 });
  // On `host-ovs-filter-active` the loopback Neutron's ML2 driver binds a port (ACTIVE at once); elsewhere the
  // binding fails and the port stays DOWN (scripts/openstack/README.md): the VIF's `active` must say which.
  const sim = new ClusterSimulator({
    client: simClient,
    connection,
    informers: new SharedInformerFactory({ client: simClient }),
    nodes: NODES,
    logger,
  });
  const simStop = new AbortController();
  const simRun = sim.run(simStop.signal);
  const session = realSession(cloud);
  return {
    auth,
    server,
    cloud,
    client,
    neutron: new NeutronClient(session),
    async stop() {
      simStop.abort();
      await simRun.catch(() => undefined);
      await simClient.close();
      await session.close();
      await client.close();
      await server.stop();
    },
  };
}

interface RavenInProcess {
  /** The base URL of its `/metrics` (and health) endpoints, once they listen. */
  opsUrl: Promise<string>;
  stop(): Promise<void>;
}

/** Raven (`runRaven`, the daemon's own wiring) in this process against the real cloud; stop() aborts and waits. */
function startRaven(env: RealEnv, settings: Record<string, string>): RavenInProcess {
  const config = loadRavenConfig({ env: settings });
  const client = new KubeClient({ connection: connectionTo(env.server), qps: 1000, burst: 2000 });
  const session = realSession(env.cloud);
  const abort = new AbortController();
  let listening!: (url: string) => void;
  let failed!: (err: unknown) => void;
  const opsUrl = new Promise<string>((resolve, reject) => ((listening = resolve), (failed = reject)));
  opsUrl.catch(() => undefined);
  const running = runRaven({ config, logger, client, session, onListening: listening }, abort.signal);
  // A Raven that stops before it listens fails whoever waits for its URL, instead of leaving them waiting.
  running.then(() => failed(new Error('Raven stopped before its ops endpoints listened')), failed);
  let stopped: Promise<void> | undefined;
  return {
    opsUrl,
    stop() {
      stopped ??= (async () => {
        abort.abort();
        await running.catch(() => undefined);
        await session.close();
        await client.close();
      })();
      return stopped;
    },
  };
}

/**
 * The cold path: warm pools off, so each pod's port is created for it and deleted with it — what these describes
 * count. The warm pools have their own describe.
 */
function coldSettings(clusterId: string, strategy: 'shared' | 'namespace'): Record<string, string> {
  return { ...ravenSettings(clusterId, strategy), RAVEN_PORT_POOLS: 'false' };
}

/**
 * The config file the CLI runs with: the cluster's settings and a GC grace of 0 (nothing here is too young to sweep).
 */
async function cliConfig(env: RealEnv, clusterId: string, strategy: 'shared' | 'namespace'): Promise<string> {
  const file = join(env.server.dir, `raven-${clusterId}.yaml`);
  const subnets =
    strategy === 'shared'
      ? { strategy, shared: { cidr: '10.244.0.0/16' } }
      : { strategy, namespace: { cidr: '10.244.0.0/16', prefixLength: 24 } };
  // JSON is YAML.
  await writeFile(
    file,
    JSON.stringify({
      clusterId,
      subnets,
      serviceSubnet: { cidr: '10.96.0.0/12' },
      gc: { graceSeconds: 0 },
      portPools: { enabled: false },
      openstack: { cloud: cloudName(env.auth), timeoutMs: 120_000 },
      leaderElection: { enabled: false },
      logLevel: 'silent',
    }),
  );
  return file;
}

/** Runs the real `raven` command line (`bin/raven.js`) against the embedded API server and the real cloud. */
async function raven(env: RealEnv, config: string, ...args: string[]): Promise<string> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, OS_CLIENT_CONFIG_FILE: cloudsFile() };
  for (const key of Object.keys(childEnv))
    if (key.startsWith('RAVEN_') || key === 'OS_CLOUD' || key === 'KUBECONFIG') delete childEnv[key];
  try {
    const { stdout } = await run(
      process.execPath,
      [ravenBin, ...args, '--config', config, '--kubeconfig', env.server.kubeconfig],
      { env: childEnv, timeout: CLI_MS },
    );
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`raven ${args.join(' ')} failed: ${e.stderr || e.message}\n${e.stdout ?? ''}`, { cause: err });
  }
}

const podBody = (namespace: string, name: string): KubeObject => ({
  // Not pre-scheduled: the cluster simulator's scheduler binds it, so binding:host_id follows a real bind.
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

async function createPods(client: KubeClient, pods: readonly { namespace: string; name: string }[]): Promise<void> {
  await Promise.all(
    pods.map((p) => client.create(resources.pods, podBody(p.namespace, p.name), { namespace: p.namespace })),
  );
}

async function podsIn(client: KubeClient, namespaces: readonly string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const ns of namespaces) out.push(...(await client.listAll(resources.pods, { namespace: ns })).items);
  return out;
}

interface PodStatus {
  phase?: string;
  podIP?: string;
}

/**
 * Waits until every pod of `namespaces` is Running with a `podIP`, its VIF names its own port, and the cluster has
 * exactly one pod port per pod; returns the pods and their ports then. With `pooled`, ports no pod owns (free pool
 * ports) are left out of the count and of the answer.
 */
async function converged(
  env: RealEnv,
  clusterId: string,
  namespaces: readonly string[],
  { pooled = false } = {},
): Promise<{ pods: KubeObject[]; ports: Port[] }> {
  let problems: string[] = [];
  try {
    return await waitFor(
      'convergence',
      async () => {
        const pods = await podsIn(env.client, namespaces);
        const uids = new Set(pods.map((p) => p.metadata.uid));
        const ports = (await podPorts(env.neutron, clusterId)).filter((p) => !pooled || uids.has(p.device_id));
        problems = [];
        for (const pod of pods) {
          const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
          const mine = ports.filter((p) => p.device_id === pod.metadata.uid);
          const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
          const status = pod.status as PodStatus | undefined;
          if (mine.length !== 1) problems.push(`${key}: ${mine.length} ports`);
          else if (vif?.portId !== mine[0]!.id) problems.push(`${key}: VIF ${vif?.portId ?? 'missing'}`);
          else if (status?.phase !== 'Running' || !status.podIP)
            problems.push(`${key}: ${status?.phase ?? 'no phase'}, podIP ${status?.podIP ?? 'none'}`);
        }
        if (ports.length !== pods.length) problems.push(`${ports.length} pod ports for ${pods.length} pods`);
        return problems.length === 0 ? { pods, ports } : undefined;
      },
      { timeoutMs: CONVERGE_MS, intervalMs: 500 },
    );
  } catch {
    return assert.fail(`not converged after ${CONVERGE_MS} ms: ${problems.slice(0, 8).join('; ')}`);
  }
}

function inCidr(address: string, cidr: string): boolean {
  return ipaddr.IPv4.parse(address).match(ipaddr.IPv4.parseCIDR(cidr));
}

/** Asserts one pod's port in Neutron: marks, binding, and the address the VIF and the pod status carry, in `subnet`. */
function assertPodPort(
  clusterId: string,
  pod: KubeObject,
  port: Port,
  subnet: Pick<SubnetInfo, 'networkId' | 'subnetId' | 'cidr'>,
): void {
  const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
  const uid = pod.metadata.uid!;
  assert.equal(port.name, `raven/${clusterId}/${key}`);
  assert.equal(port.device_id, uid, `${key}: device_id`);
  assert.equal(port.device_owner, POD_DEVICE_OWNER, `${key}: device_owner`);
  assert.equal(port['binding:host_id'], (pod.spec as { nodeName?: string }).nodeName, `${key}: binding:host_id`);
  assert.deepEqual([...port.tags].sort(), [`raven.cluster=${clusterId}`, 'raven.kind=pod'], `${key}: tags`);
  assert.equal(port.network_id, subnet.networkId, `${key}: network`);
  assert.equal(port.fixed_ips.length, 1, `${key}: fixed IPs`);
  const [ip] = port.fixed_ips;
  assert.equal(ip!.subnet_id, subnet.subnetId, `${key}: subnet`);
  assert.ok(inCidr(ip!.ip_address, subnet.cidr), `${key}: ${ip!.ip_address} is outside ${subnet.cidr}`);
  const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])!;
  assert.equal(vif.podUid, uid);
  assert.equal(vif.portId, port.id);
  assert.equal(vif.networkId, subnet.networkId);
  assert.equal(vif.subnetId, subnet.subnetId);
  assert.equal(vif.mac, port.mac_address);
  assert.deepEqual(
    vif.ips.map((i) => i.address),
    [ip!.ip_address],
    `${key}: VIF addresses`,
  );
  assert.equal((pod.status as PodStatus).podIP, ip!.ip_address, `${key}: status.podIP`);
  const bound = port['binding:host_id'] === ACTIVE_NODE;
  assert.equal(port.status, bound ? 'ACTIVE' : 'DOWN', `${key}: port status on ${port['binding:host_id']}`);
  assert.equal(vif.active, bound, `${key}: VIF active`);
}

/** The cluster's router (`raven/<id>/router`, tagged kind=cluster): exactly one. */
async function clusterRouter(neutron: NeutronClient, clusterId: string): Promise<string> {
  const routers = (await neutron.routers.list({ tags: [clusterTag(clusterId)] })).filter(
    (r) => r.name === `raven/${clusterId}/router`,
  );
  assert.equal(routers.length, 1, 'one cluster router');
  assert.deepEqual(ownerOf(routers[0]!.tags), { cluster: clusterId, kind: 'cluster', uid: clusterId });
  return routers[0]!.id;
}

/**
 * A cluster-level network (`pods`, `services`): tagged kind=cluster, one subnet with `cidr`, plugged into the router.
 */
async function assertClusterSubnet(
  neutron: NeutronClient,
  clusterId: string,
  routerId: string,
  role: 'pods' | 'services',
  cidr: string,
): Promise<SubnetInfo> {
  const [network, ...more] = (await neutron.networks.list({ tags: [clusterTag(clusterId)] })).filter(
    (n) => n.name === `raven/${clusterId}/${role}`,
  );
  assert.ok(network && more.length === 0, `one ${role} network`);
  assert.deepEqual(ownerOf(network.tags), { cluster: clusterId, kind: 'cluster', uid: clusterId });
  const [subnet, ...others] = await neutron.subnets.list({ network_id: network.id });
  assert.ok(subnet && others.length === 0, `one ${role} subnet`);
  assert.equal(subnet.cidr, cidr);
  assert.deepEqual(ownerOf(subnet.tags), { cluster: clusterId, kind: 'cluster', uid: clusterId });
  await assertRouterInterface(neutron, routerId, subnet.id);
  return {
    networkId: network.id,
    subnetId: subnet.id,
    cidr: subnet.cidr,
    gatewayIp: subnet.gateway_ip,
    mtu: network.mtu,
  };
}

async function assertRouterInterface(neutron: NeutronClient, routerId: string, subnetId: string): Promise<void> {
  const ports = await neutron.ports.list({
    device_id: routerId,
    device_owner: 'network:router_interface',
    fixed_ips: { subnet_id: subnetId },
  });
  assert.equal(ports.length, 1, `one router interface on subnet ${subnetId}`);
}

/** Deletes the namespaces and waits until none of their pod ports, networks or subnets is left in Neutron. */
async function deleteNamespacesAndAssertClean(
  env: RealEnv,
  clusterId: string,
  namespaces: readonly string[],
): Promise<void> {
  for (const ns of namespaces) await env.client.delete(resources.namespaces, ns);
  const names = new Set(namespaces.map((ns) => `raven/${clusterId}/${ns}`));
  const inThem = (name: string) => [...names].some((n) => name === n || name.startsWith(`${n}/`));
  let left = '';
  try {
    await waitFor(
      'clean-up',
      async () => {
        const [ports, networks, subnets] = await Promise.all([
          env.neutron.ports.list({}),
          env.neutron.networks.list({}),
          env.neutron.subnets.list({}),
        ]);
        const what = [
          ...ports.filter((p) => inThem(p.name)).map((p) => `port ${p.name}`),
          ...networks.filter((n) => names.has(n.name)).map((n) => `network ${n.name}`),
          ...subnets.filter((s) => names.has(s.name)).map((s) => `subnet ${s.name}`),
        ];
        left = what.join(', ');
        return what.length === 0;
      },
      { timeoutMs: CONVERGE_MS, intervalMs: 500 },
    );
  } catch {
    assert.fail(`not cleaned up after ${CONVERGE_MS} ms: ${left} left`);
  }
  await waitFor(
    'the namespaces gone from the API',
    async () => {
      const all = (await env.client.listAll(resources.namespaces)).items.map((n) => n.metadata.name);
      return namespaces.every((ns) => !all.includes(ns));
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

/** The tear-down every describe ends with: nothing named or tagged for the cluster stays in Neutron. */
async function tearDownAndAssertNothingLeft(env: RealEnv, clusterId: string): Promise<void> {
  await purgeCluster(env.neutron, clusterId);
  assert.deepEqual(await leftovers(env.neutron, clusterId), []);
}

const suffix = (): string => randomBytes(3).toString('hex');

for (const auth of modes) {
  describe(`Raven against real Neutron, namespace strategy, cold path (${auth})`, { skip, timeout: 600_000 }, () => {
    const clusterId = `real-${suffix()}`;
    const namespaces = ['alpha', 'beta'];
    const pods = [0, 1, 2].flatMap((i) => namespaces.map((namespace) => ({ namespace, name: `p${i}` })));
    let env: RealEnv | undefined;
    let ravenProcess: { stop(): Promise<void> } | undefined;
    let config = '';

    before(async () => {
      env = await startRealEnv(auth);
      config = await cliConfig(env, clusterId, 'namespace');
      ravenProcess = startRaven(env, coldSettings(clusterId, 'namespace'));
    });
    after(() =>
      teardown(
        () => ravenProcess?.stop(),
        () => env && purgeCluster(env.neutron, clusterId),
        () => env?.stop(),
      ),
    );

    it("2 namespaces, 6 pods → a tagged network, subnet and router interface per namespace; one tagged port per pod at the pod's IP", async () => {
      const e = env!;
      await createNamespaces(e.client, namespaces);
      await createPods(e.client, pods);
      const { pods: live, ports } = await converged(e, clusterId, namespaces);

      const routerId = await clusterRouter(e.neutron, clusterId);
      await assertClusterSubnet(e.neutron, clusterId, routerId, 'services', '10.96.0.0/12');
      // Every namespace of the cluster — the test's and the API server's own (default, kube-system…) — has one.
      const all = (await e.client.listAll(resources.namespaces)).items;
      const networks = await e.neutron.networks.list({ tags: [clusterTag(clusterId), 'raven.kind=namespace'] });
      assert.deepEqual(
        networks.map((n) => n.name).sort(),
        all.map((ns) => `raven/${clusterId}/${ns.metadata.name}`).sort(),
      );
      const subnets = new Map<string, SubnetInfo>();
      for (const ns of all) {
        const name = ns.metadata.name!;
        const network = networks.find((n) => n.name === `raven/${clusterId}/${name}`)!;
        assert.deepEqual(
          ownerOf(network.tags),
          { cluster: clusterId, kind: 'namespace', uid: ns.metadata.uid },
          `${name}: network tags`,
        );
        const [subnet, ...more] = await e.neutron.subnets.list({ network_id: network.id });
        assert.ok(subnet && more.length === 0, `${name}: one subnet`);
        assert.equal(subnet.name, network.name);
        assert.deepEqual(
          ownerOf(subnet.tags),
          { cluster: clusterId, kind: 'namespace', uid: ns.metadata.uid },
          `${name}: subnet tags`,
        );
        assert.ok(
          subnet.cidr.endsWith('/24') && inCidr(subnet.cidr.split('/')[0]!, '10.244.0.0/16'),
          `${name}: ${subnet.cidr}`,
        );
        await assertRouterInterface(e.neutron, routerId, subnet.id);
        const annotation = JSON.parse(ns.metadata.annotations?.[NETWORK_ANNOTATION] ?? '{}') as Partial<SubnetInfo>;
        assert.equal(annotation.networkId, network.id, `${name}: ${NETWORK_ANNOTATION}`);
        assert.equal(annotation.subnetId, subnet.id);
        assert.equal(annotation.cidr, subnet.cidr);
        subnets.set(name, {
          networkId: network.id,
          subnetId: subnet.id,
          cidr: subnet.cidr,
          gatewayIp: subnet.gateway_ip,
          mtu: network.mtu,
        });
      }
      assert.equal(
        new Set([...subnets.values()].map((s) => s.cidr)).size,
        subnets.size,
        'every namespace its own CIDR',
      );

      assert.equal(live.length, pods.length);
      for (const pod of live) {
        const [port, ...more] = ports.filter((p) => p.device_id === pod.metadata.uid);
        assert.ok(port && more.length === 0);
        assertPodPort(clusterId, pod, port, subnets.get(pod.metadata.namespace!)!);
      }
      assert.equal(
        new Set(ports.flatMap((p) => p.fixed_ips.map((ip) => ip.ip_address))).size,
        ports.length,
        'distinct addresses',
      );
      assert.deepEqual(
        new Set(ports.map((p) => p['binding:host_id'])),
        new Set(NODES),
        'the scheduler spread the pods over every node',
      );
      // The NetworkPolicy translation is on (the default) and no policy selects these pods: every port carries
      // Raven's two open groups, never the project's `default` group.
      const groups = await e.neutron.securityGroups.list({ tags: [clusterTag(clusterId)] });
      for (const port of ports)
        assert.deepEqual(
          port.security_groups.map((id) => groups.find((g) => g.id === id)?.name ?? id).sort(),
          [`raven/${clusterId}/sg/open-egress`, `raven/${clusterId}/sg/open-ingress`],
          `${port.name}: security groups`,
        );
    });

    it('deleting pods deletes exactly their ports', async () => {
      const e = env!;
      const before = await podPorts(e.neutron, clusterId);
      const gone = pods.filter((p) => p.name === 'p2');
      for (const p of gone) await e.client.delete(resources.pods, p.name, p.namespace);
      await waitFor(
        "the deleted pods' ports gone",
        async () => (await podPorts(e.neutron, clusterId)).length === before.length - gone.length,
        { timeoutMs: CONVERGE_MS, intervalMs: 500 },
      );
      const { ports } = await converged(e, clusterId, namespaces);
      assert.deepEqual(
        ports.map((p) => p.id).sort(),
        before
          .filter((p) => !gone.some((g) => p.name === `raven/${clusterId}/${g.namespace}/${g.name}`))
          .map((p) => p.id)
          .sort(),
      );
    });

    it('raven plan and raven gc (the CLI) on changes made while Raven is down: plan and gc without --yes change nothing, gc --yes deletes the orphan', async () => {
      const e = env!;
      await ravenProcess!.stop();
      ravenProcess = undefined;
      const victim = await e.client.get(resources.pods, 'p0', 'alpha');
      const [orphan] = (await podPorts(e.neutron, clusterId)).filter((p) => p.device_id === victim.metadata.uid);
      assert.ok(orphan, 'the pod has its port before');
      await e.client.delete(resources.pods, 'p0', 'alpha');
      await e.client.create(resources.pods, podBody('alpha', 'late'), { namespace: 'alpha' });
      await waitFor(
        'the new pod scheduled, the old one gone',
        async () => {
          const list = (await e.client.listAll(resources.pods, { namespace: 'alpha' })).items;
          const late = list.find((p) => p.metadata.name === 'late');
          return !list.some((p) => p.metadata.name === 'p0') && Boolean(late?.spec?.nodeName);
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      const portsBefore = (await podPorts(e.neutron, clusterId)).map((p) => p.id).sort();

      const plan = await raven(e, config, 'plan');
      const lines = plan.trim().split('\n');
      // The daemon's own run on a dry-run cloud: the new pod's port and its VIF annotation, the gone pod's port.
      assert.equal(lines[0], `cluster ${clusterId}: 3 change(s)`, plan);
      assert.ok(
        lines.some((l) => l.startsWith(`+ port raven/${clusterId}/alpha/late (pod alpha/late) on subnet raven/`)),
        plan,
      );
      assert.ok(lines.includes(`~ annotation ${VIF_ANNOTATION} on pod alpha/late`), plan);
      assert.ok(
        lines.some((l) =>
          l.startsWith(`- port raven/${clusterId}/alpha/p0 (pod ${victim.metadata.uid} is gone) on subnet raven/`),
        ),
        plan,
      );
      assert.equal(lines.length, 4, plan);
      assert.deepEqual(
        (await podPorts(e.neutron, clusterId)).map((p) => p.id).sort(),
        portsBefore,
        'plan changed nothing',
      );

      const dry = await raven(e, config, 'gc');
      assert.deepEqual(
        dry
          .trim()
          .split('\n')
          .map((l) => l.split('\t').slice(0, 4).join('\t')),
        [
          `port\t${orphan.id}\traven/${clusterId}/alpha/p0\towner pod ${victim.metadata.uid}`,
          `1 orphan(s) of cluster ${clusterId}; run with --yes to delete them`,
        ],
        dry,
      );
      assert.deepEqual(
        (await podPorts(e.neutron, clusterId)).map((p) => p.id).sort(),
        portsBefore,
        'gc without --yes changed nothing',
      );

      const yes = await raven(e, config, 'gc', '--yes');
      assert.match(yes, new RegExp(`^port\\t${orphan.id}\\t`, 'm'));
      assert.match(yes, /^1 deleted, 0 left for a later run$/m);
      assert.deepEqual(
        (await podPorts(e.neutron, clusterId)).map((p) => p.id).sort(),
        portsBefore.filter((p) => p !== orphan.id),
        'gc --yes deleted the orphan, and only it',
      );
      assert.equal((await e.neutron.ports.list({ id: orphan.id })).length, 0);

      // Raven back: the pod made while it was down gets its port, and then there is nothing left to plan.
      ravenProcess = startRaven(e, coldSettings(clusterId, 'namespace'));
      const { pods: live, ports } = await converged(e, clusterId, namespaces);
      const late = live.find((p) => p.metadata.name === 'late')!;
      const annotation = JSON.parse(
        (await e.client.get(resources.namespaces, 'alpha')).metadata.annotations![NETWORK_ANNOTATION]!,
      ) as SubnetInfo;
      assertPodPort(
        clusterId,
        late,
        ports.find((p) => p.device_id === late.metadata.uid)!,
        annotation,
      );
      assert.equal((await raven(e, config, 'plan')).trim(), `cluster ${clusterId}: nothing to do`);
    });

    it('deleting the namespaces deletes their ports, subnets, networks and router interfaces', async () => {
      const e = env!;
      const routerId = await clusterRouter(e.neutron, clusterId);
      const subnetIds = (await e.neutron.networks.list({ tags: [clusterTag(clusterId), 'raven.kind=namespace'] }))
        .filter((n) => namespaces.some((ns) => n.name === `raven/${clusterId}/${ns}`))
        .flatMap((n) => n.subnets);
      assert.equal(subnetIds.length, namespaces.length);
      await deleteNamespacesAndAssertClean(e, clusterId, namespaces);
      assert.equal((await podPorts(e.neutron, clusterId)).length, 0);
      const interfaces = await e.neutron.ports.list({ device_id: routerId, device_owner: 'network:router_interface' });
      assert.ok(
        interfaces.every((p) => p.fixed_ips.every((ip) => !subnetIds.includes(ip.subnet_id))),
        'a router interface on a deleted namespace subnet',
      );
    });

    it('raven gc --teardown lists everything of the cluster, and with --yes deletes it all: nothing is left', async () => {
      await ravenProcess?.stop();
      ravenProcess = undefined;
      const e = env!;
      const listed = await raven(e, config, 'gc', '--teardown');
      const routerId = await clusterRouter(e.neutron, clusterId);
      assert.match(listed, new RegExp(`^router\t${routerId}\traven/${clusterId}/router\t`, 'm'));
      assert.match(listed, new RegExp(`^network\t\\S+\traven/${clusterId}/services\t`, 'm'));
      // The built-in namespaces still exist in the API, but a teardown does not ask it: their networks go too.
      assert.match(listed, new RegExp(`^network\t\\S+\traven/${clusterId}/default\towner namespace `, 'm'));
      assert.notDeepEqual(await leftovers(e.neutron, clusterId), [], 'a teardown without --yes deleted something');
      const out = await raven(e, config, 'gc', '--teardown', '--yes');
      assert.match(out, new RegExp(`cluster ${clusterId}: nothing left`));
      assert.deepEqual(await leftovers(e.neutron, clusterId), []);
    });
  });

  describe(`Raven against real Neutron, shared strategy, cold path (${auth})`, { skip, timeout: 600_000 }, () => {
    const clusterId = `real-${suffix()}`;
    const namespaces = ['gamma', 'delta'];
    const pods = [0, 1].flatMap((i) => namespaces.map((namespace) => ({ namespace, name: `s${i}` })));
    let env: RealEnv | undefined;
    let ravenProcess: { stop(): Promise<void> } | undefined;

    before(async () => {
      env = await startRealEnv(auth);
      ravenProcess = startRaven(env, coldSettings(clusterId, 'shared'));
    });
    after(() =>
      teardown(
        () => ravenProcess?.stop(),
        () => env && purgeCluster(env.neutron, clusterId),
        () => env?.stop(),
      ),
    );

    it('pods of two namespaces → tagged ports on the one shared pod subnet; no namespace networks', async () => {
      const e = env!;
      await createNamespaces(e.client, namespaces);
      await createPods(e.client, pods);
      const { pods: live, ports } = await converged(e, clusterId, namespaces);
      const routerId = await clusterRouter(e.neutron, clusterId);
      const shared = await assertClusterSubnet(e.neutron, clusterId, routerId, 'pods', '10.244.0.0/16');
      await assertClusterSubnet(e.neutron, clusterId, routerId, 'services', '10.96.0.0/12');
      assert.equal(
        (await e.neutron.networks.list({ tags: [clusterTag(clusterId), 'raven.kind=namespace'] })).length,
        0,
      );
      assert.equal(live.length, pods.length);
      for (const pod of live)
        assertPodPort(
          clusterId,
          pod,
          ports.find((p) => p.device_id === pod.metadata.uid)!,
          shared,
        );
    });

    it('deleting the namespaces deletes every pod port; tear-down leaves nothing of the cluster', async () => {
      const e = env!;
      await deleteNamespacesAndAssertClean(e, clusterId, namespaces);
      assert.equal((await podPorts(e.neutron, clusterId)).length, 0);
      await ravenProcess!.stop();
      ravenProcess = undefined;
      await tearDownAndAssertNothingLeft(e, clusterId);
    });
  });
  describe(`Raven against real Neutron, warm port pools (${auth})`, { skip, timeout: 600_000 }, () => {
    const clusterId = `real-${suffix()}`;
    const namespace = 'warm';
    const sizes = { min: 2, max: 3, batch: 2 };
    let env: RealEnv | undefined;
    let ravenProcess: RavenInProcess | undefined;
    let subnet: SubnetInfo | undefined;

    before(async () => {
      env = await startRealEnv(auth);
      ravenProcess = startRaven(env, {
        ...ravenSettings(clusterId, 'namespace'),
        RAVEN_PORT_POOL_MIN: String(sizes.min),
        RAVEN_PORT_POOL_MAX: String(sizes.max),
        RAVEN_PORT_POOL_BATCH: String(sizes.batch),
      });
    });
    after(() =>
      teardown(
        () => ravenProcess?.stop(),
        () => env && purgeCluster(env.neutron, clusterId),
        () => env?.stop(),
      ),
    );

    /** Pre-scheduled on the node whose bindings the loopback Neutron makes ACTIVE: one pool for the describe. */
    const createWarmPod = (e: RealEnv, name: string) =>
      e.client.create(
        resources.pods,
        { ...podBody(namespace, name), spec: { nodeName: ACTIVE_NODE, containers: [{ name: 'c', image: 'busybox' }] } },
        { namespace },
      );

    /** The free ports of the node's pool, as Raven exports them. */
    const poolSize = async () => {
      const text = await (await fetch(`${await ravenProcess!.opsUrl}/metrics`)).text();
      return Number(
        new RegExp(`^raven_port_pool_size\\{node="${ACTIVE_NODE}",[^}]*} (\\d+)$`, 'm').exec(text)?.[1] ?? 0,
      );
    };

    /**
     * The pool's free ports in Neutron once they are all ready — tagged (a bulk create is tagged by a second request
     * where Neutron cannot tag in the create) and in Raven's pool (Neutron shows the last tag before Raven has its
     * answer) — each checked to be ready for a pod of the namespace on the node.
     */
    async function freePorts(e: RealEnv, ready: (free: Port[]) => boolean, what: string): Promise<Port[]> {
      const free = await waitFor(
        what,
        async () => {
          const live = new Set((await podsIn(e.client, [namespace])).map((p) => p.metadata.uid));
          const ports = (await podPorts(e.neutron, clusterId)).filter((p) => !live.has(p.device_id));
          const pooled = ports.every((p) => p.tags.length > 0) && (await poolSize()) === ports.length;
          return pooled && ready(ports) ? ports : undefined;
        },
        { timeoutMs: CONVERGE_MS, intervalMs: 500 },
      );
      for (const port of free) {
        assert.deepEqual([...port.tags].sort(), [`raven.cluster=${clusterId}`, 'raven.kind=pod'], `${port.id}: tags`);
        assert.equal(port.device_owner, POD_DEVICE_OWNER, `${port.id}: device_owner`);
        assert.equal(port['binding:host_id'], ACTIVE_NODE, `${port.id}: bound to the pool's node`);
        assert.equal(port.network_id, subnet!.networkId, `${port.id}: network`);
        assert.deepEqual(
          port.fixed_ips.map((ip) => ip.subnet_id),
          [subnet!.subnetId],
          `${port.id}: an address on the namespace's subnet`,
        );
      }
      assert.ok(free.length <= sizes.max, `${free.length} free ports, max ${sizes.max}`);
      return free;
    }

    const reasons = async (e: RealEnv, pod: string) =>
      (await e.client.listAll(resources.events, { namespace })).items
        .filter((ev) => (ev as { involvedObject?: { name?: string } }).involvedObject?.name === pod)
        .map((ev) => ev as { reason?: string; message?: string });

    it("the first pod is served cold and its pool fills; the next pods take the pool's ports, claimed in Neutron", async () => {
      const e = env!;
      await createNamespaces(e.client, [namespace]);
      await createWarmPod(e, 'w0');
      await converged(e, clusterId, [namespace], { pooled: true });
      subnet = JSON.parse(
        (await e.client.get(resources.namespaces, namespace)).metadata.annotations![NETWORK_ANNOTATION]!,
      ) as SubnetInfo;
      const created = await waitFor('PortCreated on w0', async () =>
        (await reasons(e, 'w0')).find((ev) => ev.reason === 'PortCreated'),
      );
      assert.match(created.message ?? '', new RegExp(`the warm pool of node ${ACTIVE_NODE} had no free port`));

      const filled = await freePorts(e, (free) => free.length >= sizes.min, 'the pool filled to its min');
      for (const port of filled) {
        assert.ok(port.name.startsWith(`raven/${clusterId}/pool/${ACTIVE_NODE}/`), port.name);
        assert.equal(port.device_id, '');
      }

      await createWarmPod(e, 'w1');
      await createWarmPod(e, 'w2');
      const { pods: live, ports } = await converged(e, clusterId, [namespace], { pooled: true });
      for (const name of ['w1', 'w2']) {
        const pod = live.find((p) => p.metadata.name === name)!;
        const port = ports.find((p) => p.device_id === pod.metadata.uid)!;
        assert.ok(
          filled.some((f) => f.id === port.id),
          `${name} took a pool port (${port.id} is not one of ${filled.map((f) => f.id).join(', ')})`,
        );
        assertPodPort(clusterId, pod, port, subnet);
        // A warm hit's one Kubernetes write is its VIF: no Event (a cold create has PortCreated).
        assert.deepEqual(
          (await reasons(e, name)).map((ev) => ev.reason),
          [],
          `${name}: no Event`,
        );
      }
    });

    it("a deleted pod's port goes back to its pool (not deleted), and the next pod takes a pool port", async () => {
      const e = env!;
      const pod = await e.client.get(resources.pods, 'w1', namespace);
      const port = (await podPorts(e.neutron, clusterId)).find((p) => p.device_id === pod.metadata.uid)!;
      await e.client.delete(resources.pods, 'w1', namespace);
      await waitFor(
        'w1 gone',
        async () => !(await podsIn(e.client, [namespace])).some((p) => p.metadata.name === 'w1'),
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      // The pool refilled behind w1 and w2, so w1's port makes it max or below: it stays, free.
      const free = await freePorts(
        e,
        (ports) => ports.length >= sizes.min && (ports.some((p) => p.id === port.id) || ports.length === sizes.max),
        'the pool at rest',
      );
      assert.ok(
        free.some((p) => p.id === port.id) || free.length === sizes.max,
        "w1's port is free in its pool, or the pool was full and it was trimmed",
      );

      await createWarmPod(e, 'w3');
      const { pods: live, ports } = await converged(e, clusterId, [namespace], { pooled: true });
      const w3 = live.find((p) => p.metadata.name === 'w3')!;
      const mine = ports.find((p) => p.device_id === w3.metadata.uid)!;
      assert.ok(
        free.some((p) => p.id === mine.id),
        'w3 took a pool port',
      );
      assertPodPort(clusterId, w3, mine, subnet!);
      await freePorts(e, (ports) => ports.length >= sizes.min, 'the pool refilled');
    });

    it('deleting the namespace drains its pool and deletes its network: no port is left on its subnet', async () => {
      const e = env!;
      await deleteNamespacesAndAssertClean(e, clusterId, [namespace]);
      const left = (await e.neutron.ports.list({ network_id: subnet!.networkId })).map((p) => `${p.name} ${p.id}`);
      assert.deepEqual(left, []);
      assert.equal((await podPorts(e.neutron, clusterId)).length, 0, 'no pod or pool port of the cluster is left');
      await ravenProcess!.stop();
      ravenProcess = undefined;
      await tearDownAndAssertNothingLeft(e, clusterId);
    });
  });

  describe(
    `Raven against real Neutron, dual-stack namespaces, warm pools (${auth})`,
    { skip, timeout: 600_000 },
    () => {
      const clusterId = `real-${suffix()}`;
      const namespace = 'dual';
      let env: RealEnv | undefined;
      let ravenProcess: { stop(): Promise<void> } | undefined;

      before(async () => {
        env = await startRealEnv(auth);
        const {
          RAVEN_NAMESPACE_CIDR: _n,
          RAVEN_SERVICE_SUBNET_CIDR: _s,
          ...base
        } = ravenSettings(clusterId, 'namespace');
        ravenProcess = startRaven(env, {
          ...base,
          RAVEN_NAMESPACE_CIDRS: '10.244.0.0/16,fd00:10:244::/56',
          RAVEN_NAMESPACE_IPV6_PREFIX_LENGTH: '64',
          RAVEN_SERVICE_SUBNET_CIDRS: '10.96.0.0/12,fd00:10:96::/112',
          // Warm pools on (the default), and the namespace deleted while they may still refill: its pools drain
          // with it. The pool ports hold an address of each family too.
        });
      });
      after(() =>
        teardown(
          () => ravenProcess?.stop(),
          () => env && purgeCluster(env.neutron, clusterId),
          () => env?.stop(),
        ),
      );

      it('a namespace network with a subnet per family (IPv6 dhcpv6-stateful), both routed; each pod a port with an address per family, its VIF and podIPs both; deleting the namespace removes it all', async () => {
        const e = env!;
        await createNamespaces(e.client, [namespace]);
        await createPods(
          e.client,
          [0, 1, 2].map((i) => ({ namespace, name: `d${i}` })),
        );
        const live = await waitFor(
          'three pods with two podIPs',
          async () => {
            const list = await podsIn(e.client, [namespace]);
            const ips = (p: KubeObject) => (p.status as { podIPs?: { ip: string }[] } | undefined)?.podIPs ?? [];
            return list.length === 3 && list.every((p) => ips(p).length === 2) ? list : undefined;
          },
          { timeoutMs: CONVERGE_MS, intervalMs: 500 },
        );
        const [network] = await e.neutron.networks.list({ name: `raven/${clusterId}/${namespace}` });
        const subnets = await e.neutron.subnets.list({ network_id: network!.id });
        const v4 = subnets.find((s) => s.ip_version === 4)!;
        const v6 = subnets.find((s) => s.ip_version === 6)!;
        assert.equal(subnets.length, 2);
        assert.ok(inCidr(v4.cidr.split('/')[0]!, '10.244.0.0/16') && v4.cidr.endsWith('/24'), v4.cidr);
        assert.ok(v6.cidr.startsWith('fd00:10:244:') && v6.cidr.endsWith('/64'), v6.cidr);
        assert.deepEqual([v6.ipv6_ra_mode, v6.ipv6_address_mode], ['dhcpv6-stateful', 'dhcpv6-stateful']);
        const routerId = await clusterRouter(e.neutron, clusterId);
        const routed = (
          await e.neutron.ports.list({ device_id: routerId, device_owner: 'network:router_interface' })
        ).flatMap((p) => p.fixed_ips.map((f) => f.subnet_id));
        assert.ok(routed.includes(v4.id) && routed.includes(v6.id), 'both subnets on the cluster router');
        // A pod on a pool port is claimed (device_id) after its VIF is out: wait for every claim.
        const ports = await waitFor(
          "every pod's port claimed",
          async () => {
            const all = await podPorts(e.neutron, clusterId);
            const claimed = live.every((pod) => all.some((p) => p.device_id === pod.metadata.uid));
            return claimed ? all : undefined;
          },
          { timeoutMs: CONVERGE_MS, intervalMs: 500 },
        );
        // Pool ports too hold an address of each family (a bulk create lists them in any order).
        for (const port of ports)
          assert.deepEqual(port.fixed_ips.map((f) => f.subnet_id).sort(), [v4.id, v6.id].sort());
        for (const pod of live) {
          const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])!;
          const port = ports.find((p) => p.id === vif.portId)!;
          assert.equal(port.device_id, pod.metadata.uid);
          // The primary family (IPv4 here) first, whatever the port's order.
          const addresses = [v4.id, v6.id].map((id) => port.fixed_ips.find((f) => f.subnet_id === id)!.ip_address);
          assert.deepEqual(
            vif.ips.map((ip) => ip.address),
            addresses,
          );
          assert.deepEqual(
            vif.ips.map((ip) => ip.gateway),
            [v4.gateway_ip, v6.gateway_ip],
          );
          const podIPs = (pod.status as { podIPs: { ip: string }[] }).podIPs.map((p) => p.ip);
          assert.deepEqual(podIPs, addresses);
        }
        await deleteNamespacesAndAssertClean(e, clusterId, [namespace]);
      });
    },
  );
}
