/**
 * A cluster on the real Neutron dataplane (scripts/dataplane/rig.sh): the embedded API server, the cluster
 * simulator whose one node is the agents' host and whose runtime plugs every pod through `raven-cni` into a network
 * namespace, and Raven itself (in process, restartable) against the rig's Neutron. Probes run only between the pod
 * namespaces made here. `RAVEN_DATAPLANE_ENV` names the rig's env file; without it the dataplane tests skip.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Logger } from '../../src/core/index.ts';
import { podNetnsName, type DataplaneRuntime } from '@raven/cluster-sim';
import {
  dataplaneRuntime,
  ravenCniDir,
  readDataplaneRig,
  startRigNode,
  type DataplaneRig,
} from '@raven/dev/dataplane.ts';
import { loadRavenConfig } from '../../src/daemon/config/index.ts';
import { createLogger } from '../../src/daemon/logger.ts';
import { runRaven } from '../../src/daemon/run-raven.ts';
import type { Pod } from '../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import {
  loadCloudConfig,
  NeutronClient,
  OctaviaClient,
  OpenStackSession,
  type CloudConfig,
} from '../../src/openstack/index.ts';
import { runSimulator, type RunningSimulator } from './cluster-sim.ts';
import { purgeCluster } from './neutron-cluster.ts';
import { clusterTag } from '../../src/reconcilers/index.ts';
import { startTestServer, testConnection, type TestServer } from './server.ts';
import { teardown } from './teardown.ts';

const sh = promisify(execFile);

export type Rig = DataplaneRig;

/** The running rig, or undefined (tests skip) when `RAVEN_DATAPLANE_ENV` is not set. */
export async function readRig(): Promise<Rig | undefined> {
  const file = process.env.RAVEN_DATAPLANE_ENV;
  return file ? readDataplaneRig(file) : undefined;
}

export const skipWithoutRig = !process.env.RAVEN_DATAPLANE_ENV && 'needs the dataplane rig (npm run test:dataplane)';

/** Also skips on a rig without Octavia (the linuxbridge rig): Services are not translated there. */
export const skipWithoutOctavia =
  skipWithoutRig ||
  (!/^RAVEN_DATAPLANE_OCTAVIA_URL=./m.test(readEnvFile(process.env.RAVEN_DATAPLANE_ENV!)) &&
    'the rig runs no Octavia (only the OVN rig does): Services are not translated on it');

function readEnvFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Raven's logs (info and above): the last {@link LOG_RING} lines are kept for a failing wait's message (CI shows only
 * the test output); `RAVEN_TEST_LOG=1` also prints them all.
 */
const LOG_RING = 400;
const logRing: string[] = [];
export const logger: Logger = createLogger('info', 'json', {
  write(line: string) {
    logRing.push(line);
    if (logRing.length > LOG_RING) logRing.shift();
    if (process.env.RAVEN_TEST_LOG) process.stderr.write(line);
  },
});

/**
 * Raven's last `count` log lines that match `filter`, shortened (level, message, then the other fields): what a
 * failing wait's message carries so that a failure in CI says what Raven was doing.
 */
export function recentLogs(count: number, filter: (entry: Record<string, unknown>) => boolean = () => true): string {
  const entries = logRing.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  return entries
    .filter(filter)
    .slice(-count)
    .map(({ level, time, msg, pid: _pid, hostname: _host, ...rest }) => {
      const at = new Date(Number(time)).toISOString().slice(11, 23);
      return `${at} ${Number(level) >= 40 ? 'WARN+' : 'info'} ${String(msg)} ${JSON.stringify(rest)}`;
    })
    .join('\n');
}

export interface DataplaneClusterOptions {
  strategy: 'namespace' | 'shared';
  /** Pod networks with an IPv6 subnet beside the IPv4 one (each pod an address of each family). */
  dualStack?: boolean;
  /** raven-cni forwards to `raven node` (run here, on a unix socket of the test's own) instead of doing the work. */
  nodeDaemon?: boolean;
  /**
   * Translate Services, with the rig's Octavia and its provider (only a rig with Octavia: the OVN rig); every Service
   * with a clusterIP gets a load balancer, as kube-proxy would serve it. Off by default: the other tests' clusters need
   * no load balancers.
   */
  services?: boolean;
  /** Plugins chained after raven-cni in the conflist (Debian's stock plugins, from /usr/lib/cni). */
  chain?: { type: string; [key: string]: unknown }[];
}

export interface PodOptions {
  labels?: Record<string, string>;
  ports?: { name?: string; containerPort: number; protocol?: 'TCP' | 'UDP' }[];
}

export interface DataplaneCluster {
  clusterId: string;
  rig: Rig;
  server: TestServer;
  client: KubeClient;
  neutron: NeutronClient;
  /** The rig's Octavia when the cluster translates Services (`services`). */
  octavia: OctaviaClient | undefined;
  runtime: DataplaneRuntime;
  /** Starts Raven (again); each start is a fresh process-like instance with its own connections. */
  startRaven(): void;
  stopRaven(): Promise<void>;
  createNamespace(name: string, labels?: Record<string, string>): Promise<void>;
  /** A pod on the node; its responder listens on the declared container ports (TCP and UDP 8080 by default). */
  createPod(namespace: string, name: string, options?: PodOptions): Promise<Pod>;
  /** The pod's network namespace name (`ip netns exec <name> …`). */
  netnsOf(pod: Pod): string;
  /**
   * How many answers Neutron has given Raven so far (every Raven started here): a wait for a pod gives a slow but
   * working Neutron more time while this moves (`waitFor`'s `progress`).
   */
  progress: () => number;
  stop(): Promise<void>;
}

/** How long a pod may take to be plugged, or traffic to pass, while nothing moves (agents poll every 2 s; the first
 * router on a host passes traffic after ≈ 13 s, docs/dataplane.md). */
export const CONVERGE_MS = 90_000;
/** A test waits for its pods while Neutron answers Raven, up to 4 × CONVERGE_MS each (`waitFor`'s `progress`). */
export const TEST_MS = 600_000;

/** The pod subnet ranges the tests use: addresses Neutron hands out inside the test's own namespaces only. */
const podCidr = '10.251.0.0/16';
const podCidrV6 = 'fd00:251::/48';
const serviceCidr = '10.96.0.0/12';

export async function startDataplaneCluster(rig: Rig, options: DataplaneClusterOptions): Promise<DataplaneCluster> {
  const clusterId = `dp-${randomBytes(3).toString('hex')}`;
  if (options.services && !rig.octavia) throw new Error('Services need a rig with Octavia (the OVN rig)');
  const services = options.services ? rig.octavia : undefined;
  const podCidrs = options.dualStack ? [podCidr, podCidrV6] : [podCidr];
  const dir = await mkdtemp(join(tmpdir(), 'raven-dataplane-'));
  const server = await startTestServer();
  const daemonSocket = options.nodeDaemon ? join(dir, 'raven-node.sock') : undefined;
  const nodeStop = new AbortController();
  const node = daemonSocket
    ? await startRigNode(
        rig,
        { kubeconfig: server.kubeconfig, socketPath: daemonSocket, log: (entry) => logger.debug(entry, 'raven node') },
        nodeStop.signal,
      )
    : undefined;
  // Raven signs VIFs and the node plugs on the signature (docs/pools.md, "Signed VIFs"): the path a pod takes.
  const vifKeyFile = join(dir, 'vif.key');
  await writeFile(vifKeyFile, randomBytes(32), { mode: 0o600 });
  const runtime = dataplaneRuntime(rig, {
    ...(daemonSocket ? { daemonSocket } : {}),
    node: { vifKeyFile, stateDir: join(dir, 'cni-state') },
    kubeconfig: server.kubeconfig,
    pluginDirs: [await ravenCniDir(join(dir, 'cni-bin')), '/usr/lib/cni'],
    chain: options.chain ?? [],
    logger,
  });
  const sim: RunningSimulator = runSimulator(server, { nodes: [rig.host], runtime, workers: 20 });
  const client = new KubeClient({ connection: testConnection(server), qps: 1000, burst: 2000 });
  const cloud: CloudConfig = loadCloudConfig({ cloud: rig.cloud, env: { OS_CLIENT_CONFIG_FILE: rig.cloudsYaml } });
  const session = new OpenStackSession({ cloud, timeoutMs: 120_000 });
  const neutron = new NeutronClient(session);
  const octavia = services ? new OctaviaClient(session) : undefined;
  const configFile = join(dir, 'raven.json');
  await writeFile(
    configFile,
    JSON.stringify({
      clusterId,
      subnets:
        options.strategy === 'shared'
          ? { strategy: 'shared', shared: { cidrs: podCidrs } }
          : { strategy: 'namespace', namespace: { cidrs: podCidrs, prefixLength: 24, ipv6PrefixLength: 64 } },
      serviceSubnet: { cidr: serviceCidr },
      ...(services
        ? { translations: { services: true }, emulateKubeProxy: true, loadBalancer: { provider: services.provider } }
        : { translations: { services: false } }),
      leaderElection: { enabled: false },
      vif: { keyFile: vifKeyFile },
      ops: { port: 0 },
      resyncPeriodSeconds: 0,
      logLevel: 'silent',
    }),
  );

  let answers = 0;
  let raven:
    { abort: AbortController; running: Promise<void>; client: KubeClient; session: OpenStackSession } | undefined;
  const stopRaven = async () => {
    if (!raven) return;
    const { abort, running, client: ravenClient, session: ravenSession } = raven;
    raven = undefined;
    abort.abort();
    await running.catch(() => undefined);
    await Promise.all([ravenClient.close(), ravenSession.close()]);
  };

  return {
    clusterId,
    rig,
    server,
    client,
    neutron,
    octavia,
    runtime,
    startRaven() {
      if (raven) throw new Error('Raven is running already');
      const config = loadRavenConfig({ file: configFile, env: {} });
      const ravenClient = new KubeClient({ connection: testConnection(server), qps: 1000, burst: 2000 });
      const ravenSession = new OpenStackSession({ cloud, timeoutMs: 120_000, onRequest: () => answers++ });
      const abort = new AbortController();
      const running = runRaven({ config, logger, client: ravenClient, session: ravenSession }, abort.signal);
      raven = { abort, running, client: ravenClient, session: ravenSession };
    },
    stopRaven,
    async createNamespace(name, labels) {
      await client.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, ...(labels ? { labels } : {}) },
      });
    },
    createPod(namespace, name, options = {}) {
      return client.create(resources.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, ...(options.labels ? { labels: options.labels } : {}) },
        spec: {
          containers: [{ name: 'app', image: 'responder', ports: options.ports ?? [{ containerPort: 8080 }] }],
        },
      });
    },
    netnsOf: (pod) => podNetnsName(pod.metadata.uid ?? '', rig.netnsPrefix),
    progress: () => answers,
    async stop() {
      // The kubelet first (it would plug a pod again), then its sandboxes (DEL through the plugin, namespaces
      // deleted), then Raven, then whatever Raven left in Neutron.
      await teardown(
        () => sim.stop(),
        () => runtime.removeAll(),
        () => {
          nodeStop.abort();
          return node?.stopped;
        },
        stopRaven,
        // the load balancers first: the provider's VIP ports hold the service network
        () => (octavia ? purgeLoadBalancers(octavia, clusterId) : undefined),
        () => purgeCluster(neutron, clusterId),
        () => Promise.all([client.close(), session.close()]),
        () => server.stop(),
        () => rm(dir, { recursive: true, force: true }),
      );
    },
  };
}

/**
 * Deletes the cluster's load balancers (tagged for it) with their trees, and waits until Octavia has let them go:
 * bounded, 60 s.
 */
export async function purgeLoadBalancers(octavia: OctaviaClient, clusterId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const mine = (await octavia.loadBalancers.list({})).filter((lb) => lb.tags?.includes(clusterTag(clusterId)));
    if (mine.length === 0) return;
    if (Date.now() > deadline) throw new Error(`load balancers of cluster ${clusterId} still in Octavia after 60 s`);
    // one change at a time: a load balancer that is PENDING is deleted on a later round
    for (const lb of mine.filter((l) => !l.provisioning_status.startsWith('PENDING')))
      await octavia.loadBalancers.delete(lb.id, { cascade: true });
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The rig's Neutron API as its admin (noauth: no project header): `(method, path, body?)` → the answer's JSON. */
export function neutronAdmin(url: string) {
  return async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}/v2.0/${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
}

/**
 * The Neutron objects a dataplane test makes through the rig's admin API (`make`), for its `after`: `release` lets go
 * of what holds other objects (every trunk's subports, every router's interfaces), `deleteAll` deletes them, newest
 * first. Between the two, the test deletes what Raven made on them.
 */
export function neutronScratch(neutron: ReturnType<typeof neutronAdmin>) {
  const created: { kind: string; id: string }[] = [];
  return {
    async make(kind: string, body: object): Promise<Record<string, unknown> & { id: string }> {
      const plural = `${kind.replace('_', '-')}s`;
      const answer = await neutron<Record<string, Record<string, unknown> & { id: string }>>('POST', plural, {
        [kind]: body,
      });
      const made = answer[kind]!;
      created.push({ kind: plural, id: made.id });
      return made;
    },
    async release(): Promise<void> {
      for (const { kind, id } of created) {
        if (kind === 'trunks') {
          const { sub_ports } = await neutron<{ sub_ports: { port_id: string }[] }>('GET', `trunks/${id}/get_subports`);
          if (sub_ports.length)
            await neutron('PUT', `trunks/${id}/remove_subports`, {
              sub_ports: sub_ports.map(({ port_id }) => ({ port_id })),
            });
        }
        if (kind === 'routers') {
          const { ports } = await neutron<{ ports: { id: string }[] }>('GET', `ports?device_id=${id}`);
          for (const p of ports) await neutron('PUT', `routers/${id}/remove_router_interface`, { port_id: p.id });
        }
      }
    },
    async deleteAll(): Promise<void> {
      for (const { kind, id } of created.splice(0).reverse()) await neutron('DELETE', `${kind}/${id}`);
    },
  };
}

/**
 * A device of this host (a veth end, a VM's tap) up and on the rig's integration bridge as `port`, as Nova's VIF
 * driver plugs one: OVN binds the port to the chassis by `iface-id`.
 */
export async function plugIntoBridge(rig: Rig, device: string, port: { id: string; mac_address: string }) {
  await sh('ip', ['link', 'set', device, 'up']);
  await sh(
    'ovs-vsctl',
    [
      `--db=${rig.ovs!.database}`,
      '--timeout=10',
      'add-port',
      rig.ovs!.bridge,
      device,
      '--',
      'set',
      'Interface',
      device,
      `external_ids:iface-id=${port.id}`,
      `external_ids:attached-mac=${port.mac_address}`,
      'external_ids:iface-status=active',
    ],
    { timeout: 15_000 },
  );
}

/**
 * Raven's controller in this process, on the test's API server and `session`, with `settings` (what its config file
 * would hold): the function that stops it. `onListening` is given its ops server's URL.
 */
export async function runController(
  server: TestServer,
  session: OpenStackSession,
  settings: object,
  onListening?: (opsUrl: string) => void,
): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-controller-'));
  let config;
  try {
    const file = join(dir, 'raven.json');
    await writeFile(file, JSON.stringify(settings));
    config = loadRavenConfig({ file, env: {} });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const client = new KubeClient({ connection: testConnection(server) });
  const abort = new AbortController();
  const running = runRaven({ config, logger, client, session, ...(onListening ? { onListening } : {}) }, abort.signal);
  return async () => {
    abort.abort();
    await running.catch(() => undefined);
    await client.close();
  };
}

/** The Node of a Nova VM as openstack-cloud-controller-manager registers it: `providerID` names the server. */
export function registerVmNode(kube: KubeClient, name: string, serverId: string) {
  return kube.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { providerID: `openstack:///${serverId}` },
  });
}

/**
 * `ping -c 1 -W <waitSeconds>` from one pod namespace to an address: whether it was answered. Bounded: one packet,
 * one second by default.
 */
export async function pings(fromNetns: string, address: string, waitSeconds = 1): Promise<boolean> {
  try {
    const ping = ['ping', '-n', '-q', '-c', '1', '-W', String(waitSeconds), address];
    await sh('ip', ['netns', 'exec', fromNetns, ...ping], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * A TCP connect from one pod namespace to `address:port`, reading what the responder there says (its pod name), or
 * undefined when nothing answered within two seconds.
 */
export async function tcpHello(fromNetns: string, address: string, port = 8080): Promise<string | undefined> {
  const script =
    'import socket,sys\n' +
    's=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=2)\n' +
    'print(s.recv(256).decode().strip())';
  try {
    const { stdout } = await sh(
      'ip',
      ['netns', 'exec', fromNetns, '/usr/bin/python3', '-c', script, address, String(port)],
      { timeout: 5000 },
    );
    return stdout.trim();
  } catch {
    return undefined;
  }
}

export interface ProbeTarget {
  protocol: 'TCP' | 'UDP';
  address: string;
  port: number;
}

/**
 * Many probes from one pod namespace at once (one Python process, a thread per target): for each target what the
 * responder there answered (its pod name), or undefined when nothing answered within `timeoutSeconds` — a TCP connect,
 * or a UDP datagram and its echo. Bounded: the process is killed after `timeoutSeconds` + 5 s.
 */
export async function probeMany(
  fromNetns: string,
  targets: readonly ProbeTarget[],
  timeoutSeconds = 1,
): Promise<(string | undefined)[]> {
  const script = `
import json, socket, sys, threading
t = float(sys.argv[1]); targets = sys.argv[2:]; out = [None] * len(targets)
def probe(i, proto, host, port):
    try:
        if proto == "TCP":
            s = socket.create_connection((host, port), timeout=t)
            out[i] = s.recv(256).decode().strip()
        else:
            s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(t)
            s.sendto(b"probe", (host, port))
            out[i] = s.recv(2048).decode().split(" ")[0]
        s.close()
    except OSError:
        pass
threads = []
for i, spec in enumerate(targets):
    proto, host, port = spec.split("/")
    threads.append(threading.Thread(target=probe, args=(i, proto, host, int(port))))
for th in threads: th.start()
for th in threads: th.join()
print(json.dumps(out))
`;
  const args = targets.map((t) => `${t.protocol}/${t.address}/${t.port}`);
  const { stdout } = await sh(
    'ip',
    ['netns', 'exec', fromNetns, '/usr/bin/python3', '-c', script, String(timeoutSeconds), ...args],
    { timeout: (timeoutSeconds + 5) * 1000 },
  );
  return (JSON.parse(stdout) as (string | null)[]).map((v) => v ?? undefined);
}

/** A command's stdout, run inside a pod's network namespace. */
export async function inPod(netns: string, ...command: string[]): Promise<string> {
  const { stdout } = await sh('ip', ['netns', 'exec', netns, ...command], { timeout: 10_000 });
  return stdout.trim();
}

/** Network devices in the root namespace whose names start with one of `prefixes` (what a test may leave). */
export async function rootDevices(prefixes: readonly string[]): Promise<string[]> {
  const { stdout } = await sh('ip', ['-j', 'link', 'show']);
  return (JSON.parse(stdout) as { ifname: string }[])
    .map((l) => l.ifname)
    .filter((name) => prefixes.some((p) => name.startsWith(p)));
}

/** Network namespaces whose names start with `prefix`. */
export async function netnsNames(prefix: string): Promise<string[]> {
  const { stdout } = await sh('ip', ['netns', 'list']);
  return stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(prefix));
}

/** The ports on the rig's OVS integration bridge (none without OVS: the linuxbridge rig). */
export async function ovsPorts(rig: Rig): Promise<string[]> {
  if (!rig.ovs) return [];
  const { database, bridge } = rig.ovs;
  const { stdout } = await sh('ovs-vsctl', [`--db=${database}`, '--timeout=10', 'list-ports', bridge], {
    timeout: 15_000,
  });
  return stdout.split('\n').filter((p) => p !== '');
}
