/**
 * Shared pieces of Raven's end-to-end fault tests: a real embedded API server and a real OpenStack simulator in the
 * test process, Raven (in process or as a child process) against them, pods in bulk, and the convergence check that
 * counts the cloud's resources through the simulator's Neutron API.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { silentLogger } from '../../../src/core/index.ts';
import type { KubeObject, NetworkPolicySpec } from '../../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession, type Port } from '../../../src/openstack/index.ts';
import { loadRavenConfig, type LoadRavenConfigOptions, type RavenConfig } from '../../../src/daemon/config/index.ts';
import { composeRaven, type ComposedRaven } from '../../../src/daemon/compose.ts';
import { runRaven } from '../../../src/daemon/run-raven.ts';
import { runOpenStackSim, type RunApiServerOptions, type RunningOpenStackSim } from '@raven/dev';
import { NETWORK_ANNOTATION, parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../support/server.ts';
import { ok } from '../../support/api.ts';
import { waitFor } from '../../support/wait.ts';
import type { World } from '../../support/netpol.ts';

export const CONVERGE_TIMEOUT_MS = 60_000;

export interface Env {
  server: TestServer;
  sim: RunningOpenStackSim;
  cloudsYaml: string;
  /** The test's own clients (never Raven's). */
  client: KubeClient;
  session: OpenStackSession;
  neutron: NeutronClient;
  stop(): Promise<void>;
}

/** `linuxbridgeHosts`: nodes whose ports the simulator binds (as `bridge`); others fail to bind. */
export async function startEnv(
  seed: number,
  serverOptions: RunApiServerOptions = {},
  simOptions: { linuxbridgeHosts?: string[] } = {},
): Promise<Env> {
  const server = await startTestServer(serverOptions);
  const cloudsYaml = join(server.dir, 'clouds.yaml');
  const sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut: cloudsYaml, seed, ...simOptions });
  const client = newKubeClient(server);
  const session = newSession(cloudsYaml);
  const neutron = new NeutronClient(session);
  return {
    server,
    sim,
    cloudsYaml,
    client,
    session,
    neutron,
    async stop() {
      await session.close();
      await client.close();
      await sim.close();
      await server.stop();
    },
  };
}

export function newKubeClient(server: TestServer): KubeClient {
  return new KubeClient({
    connection: testConnection(server),
    qps: 1000,
    burst: 2000,
  });
}

/** The namespaced rules {@link namespaceUser} gives by default: pods and services. */
const POD_AND_SERVICE_RULES = [
  {
    apiGroups: [''],
    resources: ['pods', 'services'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
];

/** A tenant's rules: everything in its own namespace (as the `admin` ClusterRole bound there would be, and more). */
export const NAMESPACE_OWNER_RULES = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

/**
 * A namespace user, as a cluster admin would make one: a ServiceAccount `name` in `namespace`, a Role with `rules`
 * there (default: read and write pods and services), a ClusterRole that lets it patch that one Namespace object (its
 * labels and annotations), and a token minted for it (the API server must run with RBAC on).
 */
export async function namespaceUserToken(
  env: Env,
  namespace: string,
  name: string,
  rules: readonly object[] = POD_AND_SERVICE_RULES,
): Promise<string> {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const meta = { name, namespace };
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  const clusterName = `${namespace}-${name}-namespace`;
  const post = (path: string, body: object) => ok(env.server, 'POST', path, body);
  await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta,
  });
  await post(`/apis/${rbac}/namespaces/${namespace}/roles`, { apiVersion: rbac, kind: 'Role', metadata: meta, rules });
  await post(`/apis/${rbac}/namespaces/${namespace}/rolebindings`, {
    apiVersion: rbac,
    kind: 'RoleBinding',
    metadata: meta,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects,
  });
  await post(`/apis/${rbac}/clusterroles`, {
    apiVersion: rbac,
    kind: 'ClusterRole',
    metadata: { name: clusterName },
    rules: [{ apiGroups: [''], resources: ['namespaces'], resourceNames: [namespace], verbs: ['get', 'patch'] }],
  });
  await post(`/apis/${rbac}/clusterrolebindings`, {
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name: clusterName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
    subjects,
  });
  const minted = await ok(env.server, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  return (minted.status as { token: string }).token;
}

/** A client of the environment's API server that sends `token`. */
export function tokenClient(env: Env, token: string): KubeClient {
  return new KubeClient({
    connection: { ...testConnection(env.server), credentials: () => Promise.resolve({ kind: 'bearer', token }) },
    qps: 1000,
    burst: 2000,
  });
}

/** {@link namespaceUserToken}'s user (pods and services of `namespace`), as a client. */
export async function namespaceUser(env: Env, namespace: string, name: string): Promise<KubeClient> {
  return tokenClient(env, await namespaceUserToken(env, namespace, name));
}

export function newSession(cloudsYaml: string): OpenStackSession {
  return new OpenStackSession({
    cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYaml } }),
  });
}

/** The `RAVEN_*` settings of a test cluster: one replica (no leader election), ops on a free port, no resync. */
export function ravenSettings(clusterId: string, strategy: 'shared' | 'namespace'): Record<string, string> {
  return {
    RAVEN_CLUSTER_ID: clusterId,
    RAVEN_SUBNET_STRATEGY: strategy,
    ...(strategy === 'shared'
      ? { RAVEN_POD_SUBNET_CIDR: '10.244.0.0/16' }
      : { RAVEN_NAMESPACE_CIDR: '10.244.0.0/16', RAVEN_NAMESPACE_PREFIX_LENGTH: '24' }),
    RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
    RAVEN_LEADER_ELECT: 'false',
    RAVEN_OPS_PORT: '0',
    RAVEN_RESYNC_PERIOD_SECONDS: '0',
    RAVEN_LOG_LEVEL: 'silent',
    // Services here name free addresses of the pool; the tenancy rules that refuse them are proven on their own
    // (src/reconcilers/tenants.test.ts).
    RAVEN_FLOATING_IP_ALLOW_FREE_ADDRESSES: 'true',
  };
}

/** Raven as a child process (`controller-child.ts`), for the SIGKILL tests. */
export interface ControllerChild {
  proc: ChildProcess;
  /** The ops server's URL, once it listens. */
  opsUrl: Promise<string>;
  /** The end of its stderr. */
  stderr: () => string;
  exited: Promise<unknown>;
}

/** A controller child still running is SIGKILLed, and its exit awaited (a test's `after`). */
export async function killChild(child: ControllerChild | undefined): Promise<void> {
  if (child && child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  await child?.exited;
}

const childPath = fileURLToPath(new URL('./controller-child.ts', import.meta.url));

/**
 * Starts Raven as a child process against `env`, with `settings` (`RAVEN_*`) and nothing of this process's own
 * `RAVEN_*`/`OS_*` variables: the kubeconfig and clouds.yaml are the environment's.
 */
export function startControllerChild(
  env: Pick<Env, 'server' | 'cloudsYaml'> & { cloud?: string },
  settings: Record<string, string>,
): ControllerChild {
  const { NODE_TEST_CONTEXT: _t, NODE_OPTIONS: _o, ...inherited } = process.env;
  const proc = spawn(process.execPath, ['--import', 'tsx', childPath], {
    env: {
      ...Object.fromEntries(Object.entries(inherited).filter(([k]) => !k.startsWith('RAVEN_') && !k.startsWith('OS_'))),
      RAVEN_LOG_LEVEL: 'warn',
      ...settings,
      RAVEN_TEST_KUBECONFIG: env.server.kubeconfig,
      OS_CLIENT_CONFIG_FILE: env.cloudsYaml,
      OS_CLOUD: env.cloud ?? 'raven-sim',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-4000);
  });
  const exited = once(proc, 'exit');
  const opsUrl = new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /^ready (\S+)$/m.exec(out)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error(`the controller exited before it was ready: ${err}`)));
  });
  opsUrl.catch(() => undefined);
  return { proc, opsUrl, stderr: () => err, exited };
}

/** Raven composed in this process (as `raven run` builds it) on the environment's own connections; stop() aborts. */
export async function composeInProcess(
  env: Env,
  config: RavenConfig,
): Promise<{ composed: ComposedRaven; stop: () => Promise<void> }> {
  const client = newKubeClient(env.server);
  const session = newSession(env.cloudsYaml);
  const composed = await composeRaven({
    config,
    logger: silentLogger,
    connections: { client, eventsClient: client, session },
    closeConnections: false,
  });
  const abort = new AbortController();
  const run = composed.manager.start(abort.signal);
  return {
    composed,
    async stop() {
      abort.abort();
      await run;
      await Promise.all([client.close(), session.close()]);
    },
  };
}

/**
 * Runs Raven in this process, with its own Kubernetes client and OpenStack session; stop() aborts and waits.
 * `flags` are settings with no environment variable (as the command line's flags would give them).
 */
export function startRavenInProcess(
  env: Env,
  settings: Record<string, string>,
  flags?: LoadRavenConfigOptions['flags'],
): { stop(): Promise<void> } {
  const config = loadRavenConfig({ env: settings, flags });
  const client = newKubeClient(env.server);
  const session = newSession(env.cloudsYaml);
  const abort = new AbortController();
  const run = runRaven({ config, logger: silentLogger, client, session }, abort.signal);
  return {
    async stop() {
      abort.abort();
      await run.catch(() => undefined);
      await session.close();
      await client.close();
    },
  };
}

export const podBody = (
  namespace: string,
  name: string,
  node = 'node-1',
  labels?: Record<string, string>,
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, ...(labels ? { labels } : {}) },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
});

/** Creates a NetworkPolicy with this spec. */
export function createPolicy(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: NetworkPolicySpec,
): Promise<KubeObject> {
  return client.create(
    resources.networkpolicies,
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace }, spec },
    { namespace },
  );
}

/** Waits until the pod's VIF annotation is there; its port id. */
export function waitForPort(client: KubeClient, namespace: string, name: string, timeoutMs?: number): Promise<string> {
  return waitFor(
    `pod ${namespace}/${name} wired`,
    async () =>
      parseVif((await client.get(resources.pods, name, namespace)).metadata.annotations?.[VIF_ANNOTATION])?.portId,
    timeoutMs === undefined ? {} : { timeoutMs },
  );
}

/** Runs `fn` over `items`, `concurrency` at a time. */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export async function createNamespaces(client: KubeClient, names: readonly string[]): Promise<void> {
  for (const name of names)
    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** Creates `count` pre-scheduled pods `<prefix>-<i>` spread over `namespaces` and nodes. */
export async function createPods(
  client: KubeClient,
  namespaces: readonly string[],
  count: number,
  prefix: string,
): Promise<void> {
  const specs = Array.from({ length: count }, (_, i) =>
    podBody(namespaces[i % namespaces.length]!, `${prefix}-${i}`, `node-${i % 3}`),
  );
  await inParallel(specs, 16, (p) => client.create(resources.pods, p, { namespace: p.metadata.namespace }));
}

export async function deletePods(
  client: KubeClient,
  pods: readonly { namespace: string; name: string }[],
): Promise<void> {
  await inParallel(pods, 16, (p) => client.delete(resources.pods, p.name, p.namespace));
}

/** Every Raven pod port of the cluster (found as the garbage collector does: device_owner + name, tagged or not). */
export async function podPorts(neutron: NeutronClient, clusterId: string): Promise<Port[]> {
  return (await neutron.ports.list({ device_owner: POD_DEVICE_OWNER })).filter((p) =>
    p.name.startsWith(`raven/${clusterId}/`),
  );
}

export interface Counts {
  pods: number;
  ports: number;
}

/** What is wrong with the cluster's translation right now, or the counts when nothing is. */
export async function convergence(
  env: Env,
  clusterId: string,
  namespaces: readonly string[],
): Promise<{ problems: string[]; counts: Counts }> {
  const pods: KubeObject[] = [];
  for (const ns of namespaces) pods.push(...(await env.client.listAll(resources.pods, { namespace: ns })).items);
  const ports = await podPorts(env.neutron, clusterId);
  const problems: string[] = [];
  const byDevice = new Map<string, Port[]>();
  for (const port of ports) byDevice.set(port.device_id, [...(byDevice.get(port.device_id) ?? []), port]);
  for (const pod of pods) {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const mine = byDevice.get(pod.metadata.uid!) ?? [];
    if (mine.length !== 1) problems.push(`${key}: ${mine.length} ports`);
    const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
    if (!vif || vif.podUid !== pod.metadata.uid || vif.portId !== mine[0]?.id)
      problems.push(`${key}: VIF ${vif ? vif.portId : 'missing'}`);
    else if (vif.ips[0]?.address !== mine[0].fixed_ips[0]?.ip_address)
      problems.push(`${key}: VIF address ${vif.ips[0]?.address} is not the port's`);
    if (mine[0] && mine[0].name !== `raven/${clusterId}/${key}`) problems.push(`${key}: port name ${mine[0].name}`);
  }
  if (ports.length !== pods.length) problems.push(`${ports.length} compute:raven ports for ${pods.length} pods`);
  const ips = ports.flatMap((p) => p.fixed_ips.map((ip) => ip.ip_address));
  if (new Set(ips).size !== ips.length) problems.push('two ports share an IP address');
  return { problems, counts: { pods: pods.length, ports: ports.length } };
}

/** Waits (bounded) until every pod has exactly one port named in its VIF and nothing else exists; asserts it. */
export async function assertConverged(
  env: Env,
  clusterId: string,
  namespaces: readonly string[],
  timeoutMs = CONVERGE_TIMEOUT_MS,
): Promise<Counts> {
  let last: { problems: string[]; counts: Counts } | undefined;
  try {
    await waitFor(
      'convergence',
      async () => {
        last = await convergence(env, clusterId, namespaces);
        return last.problems.length === 0;
      },
      { timeoutMs, intervalMs: 250 },
    );
  } catch {
    assert.fail(
      `not converged after ${timeoutMs} ms: ${last?.problems.length} problems, e.g. ${last?.problems.slice(0, 8).join('; ')}`,
    );
  }
  return last!.counts;
}

/**
 * Deletes the namespaces and waits until no pod port and no network, subnet or namespace annotation of them is left.
 */
export async function deleteAllAndAssertClean(
  env: Env,
  clusterId: string,
  namespaces: readonly string[],
  timeoutMs = CONVERGE_TIMEOUT_MS,
): Promise<void> {
  for (const ns of namespaces) await env.client.delete(resources.namespaces, ns);
  const names = new Set(namespaces.map((ns) => `raven/${clusterId}/${ns}`));
  let left = '';
  try {
    await waitFor(
      'clean-up',
      async () => {
        const ports = await podPorts(env.neutron, clusterId);
        const nets = (await env.neutron.networks.list({ tags: [`raven.cluster=${clusterId}`] })).filter((n) =>
          names.has(n.name),
        );
        const subnets = (await env.neutron.subnets.list({})).filter((s) => names.has(s.name));
        const untagged = (await env.neutron.networks.list({})).filter((n) => names.has(n.name));
        left = `${ports.length} ports, ${nets.length} tagged networks, ${untagged.length} networks by name, ${subnets.length} subnets`;
        return ports.length === 0 && nets.length === 0 && subnets.length === 0 && untagged.length === 0;
      },
      { timeoutMs, intervalMs: 250 },
    );
  } catch {
    assert.fail(`not cleaned up after ${timeoutMs} ms: ${left} left`);
  }
}

/** The namespaces' network annotations (namespace strategy): one distinct subnet each. */
export async function namespaceSubnets(client: KubeClient, namespaces: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const ns of namespaces) {
    const value = (await client.get(resources.namespaces, ns)).metadata.annotations?.[NETWORK_ANNOTATION];
    if (value) out.push((JSON.parse(value) as { subnetId: string }).subnetId);
  }
  return out;
}

export { seeded } from '../../support/seeded.ts';

const ravenBin = fileURLToPath(new URL('../../../bin/raven.js', import.meta.url));

/** `raven plan` (the CLI, as a user runs it) against the environment with these `RAVEN_*` settings: its lines. */
export async function ravenPlan(env: Env, settings: Record<string, string>, timeoutMs = 90_000): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [ravenBin, 'plan'], {
    env: {
      ...process.env,
      ...settings,
      OS_CLIENT_CONFIG_FILE: env.cloudsYaml,
      OS_CLOUD: 'raven-sim',
      KUBECONFIG: env.server.kubeconfig,
    },
    timeout: timeoutMs,
  });
  return stdout.trim().split('\n');
}

/** Waits until `plan` says `cluster <id>: nothing to do`; fails with what it said last (and `context`). */
export async function untilNothingToDo(
  plan: () => Promise<string[]>,
  clusterId: string,
  timeoutMs = 60_000,
  context = '',
): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      'raven plan: nothing to do',
      async () => {
        last = await plan();
        return last.join('\n') === `cluster ${clusterId}: nothing to do`;
      },
      { timeoutMs, intervalMs: 500 },
    );
  } catch {
    assert.fail(`raven plan after convergence:\n${last.join('\n')}${context}`);
  }
}

/** A hand-written EndpointSlice of `service` (port `http` 8080): for a Service without a selector. */
export const endpointSlice = (ns: string, service: string, addresses: string[]): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${service}-x`, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});

/**
 * The NetworkPolicy truth table's world (`test/support/netpol.ts`) made for real: its Nodes, namespaces and pods on
 * the API server, with Raven composed over them (namespace subnets carved from 10.0.0.0/16, the range the cases'
 * ipBlocks name; warm pools of 1–3; a GC sweep every 2 s). Each world pod's address becomes its port's; returns Raven
 * and each pod's port id by `namespace/name`.
 */
export async function wireTruthTableWorld(
  env: Env,
  clusterId: string,
  world: Omit<World, 'policies'>,
): Promise<{ raven: { composed: ComposedRaven; stop(): Promise<void> }; portOf: Map<string, string> }> {
  for (const node of world.nodes)
    await env.client.create(resources.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: node.name },
      status: { addresses: [{ type: 'InternalIP', address: node.ip }] },
    });
  for (const ns of world.namespaces)
    await env.client.create(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns.name, labels: ns.labels },
    });
  const raven = await composeInProcess(
    env,
    loadRavenConfig({
      env: {
        ...ravenSettings(clusterId, 'namespace'),
        RAVEN_NAMESPACE_CIDR: '10.0.0.0/16',
        RAVEN_PORT_POOL_MIN: '1',
        RAVEN_PORT_POOL_MAX: '3',
        RAVEN_PORT_POOL_BATCH: '1',
      },
      flags: { gc: { intervalSeconds: 2, graceSeconds: 0 } },
    }),
  );
  for (const pod of world.pods)
    await env.client.create(
      resources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod.name, namespace: pod.namespace, labels: pod.labels },
        spec: {
          nodeName: pod.node,
          containers: [{ name: 'c', image: 'nginx', ports: pod.ports.map((p) => ({ ...p })) }],
        },
      },
      { namespace: pod.namespace },
    );
  const portOf = new Map<string, string>();
  for (const pod of world.pods) {
    const vif = await waitFor(`${pod.namespace}/${pod.name} wired`, async () => {
      const got = await env.client.get(resources.pods, pod.name, pod.namespace);
      const v = parseVif(got.metadata.annotations?.[VIF_ANNOTATION]);
      return v && v.podUid === got.metadata.uid ? v : undefined;
    });
    pod.ip = vif.ips[0]!.address;
    portOf.set(`${pod.namespace}/${pod.name}`, vif.portId);
  }
  return { raven, portOf };
}

/**
 * A Nova VM as nested mode finds it (docs/nested.md): a server's port (`compute:nova`) on a network of VMs of its own,
 * and a Node whose `providerID` names the server. Resolves with the server's port, the trunk's parent to be.
 */
export async function createVmNode(env: Env, name: string, cidr: string): Promise<Port> {
  const vms = await env.neutron.networks.create({ name: `vms-${name}` });
  await env.neutron.subnets.create({ network_id: vms.id, cidr, ip_version: 4 });
  const server = randomUUID();
  const port = await env.neutron.ports.create({ network_id: vms.id, device_id: server, device_owner: 'compute:nova' });
  await env.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { providerID: `openstack:///${server}` },
  });
  return port;
}
