/**
 * Child-process entry: the node side of the `pools` group's network-ready rows — what the kubelet, the container
 * runtime and `raven node` do for a pod, in one process of its own. Per pod (IPC `add`): on the simulator a network
 * namespace, then raven-cni's ADD through `runPlugin` with long-lived connections, exactly as `raven node` runs a
 * forwarded call (verify the VIF against Neutron, wait for the claim, plug a veth pair into the network's bridge); on
 * the real Neutron, whose ports bind to a host this machine cannot plug, the same verification (`verifiedPlan`) alone.
 * `del`: DEL and the namespace removed. Every Neutron request of these calls is counted by route. Times are epoch ms
 * (one machine's clock), so the parent can set them beside its own.
 */
import { execFile } from 'node:child_process';
import { readlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { phaseClock, runPlugin, verifiedPlan, type AddTimings, type NodeConnections } from '../src/cni/plugin.ts';
import { parseRavenCniConf } from '../src/cni/config.ts';
import { readCniEnvironment } from '../src/cni/spec/index.ts';
import { POD_DEVICE_OWNER } from '../src/kube/api/index.ts';
import { KubeClient } from '../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession, type Interceptor } from '../src/openstack/index.ts';
import { routeKey } from '@raven/openstack-sim/faults.ts';
import { request } from 'undici';

export interface CniNodeOptions {
  kube: { url: string; token: string; caPem: string | null };
  cloud: { cloudsYaml: string; name: string };
  /** `plug`: the whole ADD in a network namespace; `verify`: raven-cni's verification against Neutron alone. */
  mode: 'plug' | 'verify';
  /** raven-cni's `vifKeyFile`: VIFs Raven signed for the node are plugged without Neutron. */
  vifKeyFile?: string;
  /** raven-cni's `stateDir` (the node's port records). */
  stateDir: string;
  /**
   * The simulator's base URL: the node side then also plays the node's agent, reporting each plugged port ACTIVE and
   * each unplugged one DOWN (`/_sim/ports/{id}/link`), as a real agent does to Neutron — each a revision of the port.
   */
  agentSimBase?: string;
}

export interface CniPod {
  namespace: string;
  name: string;
  uid: string;
  node: string;
}

/**
 * A pod's ADDs, retried until one succeeds: when the first started, when the last (the one that counts) started and
 * answered (epoch ms), its phases (raven-cni's own split), how many it took and why the first failed; `error` when
 * none succeeded in time.
 */
export interface CniAdd {
  startedAt: number;
  attemptAt: number;
  doneAt: number;
  attempts: number;
  timings: Omit<AddTimings, 'startupMs' | 'bridgeCreated' | 'totalMs'>;
  firstError?: string;
  error?: string;
}

export type CniNodeCommand =
  | { type: 'add'; id: number; pod: CniPod }
  | { type: 'del'; id: number; pod: CniPod }
  | { type: 'counts'; id: number; reset: boolean }
  | { type: 'ports'; id: number; clusterId: string }
  | { type: 'close' };
export type CniNodeReply =
  | { type: 'ready' }
  | { type: 'added'; id: number; add: CniAdd }
  | { type: 'deleted'; id: number; error?: string }
  | { type: 'counts'; id: number; counts: Record<string, number> }
  | { type: 'ports'; id: number; ports: number };

const sh = promisify(execFile);
const options = JSON.parse(process.argv[2] ?? '{}') as CniNodeOptions;
const epochMs = (): number => performance.timeOrigin + performance.now();
const reply = (message: CniNodeReply) => process.send?.(message);

let counts = new Map<string, number>();
const counting: Interceptor = (next) => (req) => {
  const key = `${req.service} ${routeKey(req.method, req.path)}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return next(req);
};
const kube = new KubeClient({
  connection: {
    server: options.kube.url,
    ...(options.kube.caPem ? { ca: options.kube.caPem } : {}),
    credentials: () => Promise.resolve({ kind: 'bearer', token: options.kube.token }),
    source: 'bench-node',
  },
});
const session = new OpenStackSession({
  cloud: loadCloudConfig({ cloud: options.cloud.name, env: { OS_CLIENT_CONFIG_FILE: options.cloud.cloudsYaml } }),
  timeoutMs: 15_000,
  interceptors: [counting],
});
const connections: NodeConnections = {
  kube,
  neutron: new NeutronClient(session),
  close: async () => void (await Promise.all([kube.close(), session.close()])),
};
const stop = new AbortController();

const netnsOf = (pod: CniPod) => `rvb-${pod.uid}`;

/** What the runtime passes raven-cni: the shipped configuration (credentials unused: the connections are open). */
function call(pod: CniPod, command: 'ADD' | 'DEL') {
  const stdin = JSON.stringify({
    cniVersion: '1.0.0',
    name: 'raven',
    type: 'raven-cni',
    kubeconfig: '(the node daemon’s connection)',
    cloudsYaml: options.cloud.cloudsYaml,
    cloud: options.cloud.name,
    nodeName: pod.node,
    stateDir: options.stateDir,
    ...(options.vifKeyFile ? { vifKeyFile: options.vifKeyFile } : {}),
  });
  const env = {
    CNI_COMMAND: command,
    CNI_CONTAINERID: `bench-${pod.uid}`,
    CNI_NETNS: `/run/netns/${netnsOf(pod)}`,
    CNI_IFNAME: 'eth0',
    CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_UID=${pod.uid}`,
    CNI_PATH: '/opt/cni/bin',
  };
  return { stdin, env };
}

/** A pod with no ADD that succeeded: every phase 0. */
const noTimings: CniAdd['timings'] = { ...phaseClock().phases(), verifiedBy: 'neutron' };

/** One ADD as the runtime makes it: the phases it took, or why it failed. */
async function attempt(pod: CniPod, signal: AbortSignal): Promise<CniAdd['timings'] | string> {
  const { stdin, env } = call(pod, 'ADD');
  if (options.mode === 'verify') {
    const { lap, phases } = phaseClock();
    const conf = parseRavenCniConf(stdin);
    try {
      const { by } = await verifiedPlan(conf, readCniEnvironment(env), connections, {
        vifTimeoutMs: conf.vifTimeoutSeconds * 1000,
        signal,
        lap,
      });
      return { ...phases(), verifiedBy: by };
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
  // A failed ADD undoes its veth pair but leaves the namespace, which the next try reuses.
  await sh('ip', ['netns', 'add', netnsOf(pod)]).catch((err: unknown) => {
    if (!/File exists/.test(String(err))) throw err;
  });
  let timings: AddTimings | undefined;
  let failure: string | undefined;
  let port: string | undefined;
  const outcome = await runPlugin({
    env,
    stdin,
    signal,
    startupMs: 0,
    connections,
    log: (entry) => {
      if (entry.timings) timings = entry.timings as AddTimings;
      if (typeof entry.port === 'string') port = entry.port;
      if (entry.level === 'error') failure = String(entry.msg);
    },
  });
  if (outcome.exitCode !== 0 || !timings) return failure ?? outcome.stdout.slice(0, 300);
  const { startupMs: _s, bridgeCreated, totalMs: _t, ...phases } = timings;
  if (bridgeCreated) await noteBridge(outcome.stdout);
  if (port) {
    plugged.set(pod.uid, port);
    agentReports(port, true);
  }
  return phases;
}

/** Pod uid → the port its ADD plugged (what its DEL unplugs, for the agent's report). */
const plugged = new Map<string, string>();

/** The agent's report lags the device's change (its polling interval): never on the ADD's or DEL's own path. */
const AGENT_LAG_MS = 300;

function agentReports(port: string, up: boolean): void {
  const base = options.agentSimBase;
  if (!base) return;
  setTimeout(() => {
    void request(`${base}/_sim/ports/${port}/link`, {
      method: 'POST',
      body: JSON.stringify({ up }),
      headers: { 'content-type': 'application/json' },
    })
      .then((res) => res.body.dump())
      .catch(() => undefined);
  }, AGENT_LAG_MS).unref();
}

/** The kubelet's back-off between sandbox attempts is longer (10 s and up); 1 s keeps a retry's cost visible. */
const RETRY_MS = 1_000;

/** ADD until it succeeds, as the kubelet retries a pod's sandbox, for at most 300 s. */
async function add(pod: CniPod): Promise<CniAdd> {
  const startedAt = epochMs();
  const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(300_000)]);
  let firstError: string | undefined;
  for (let attempts = 1; ; attempts++) {
    const attemptAt = epochMs();
    const outcome = await attempt(pod, signal).catch((err: unknown) =>
      err instanceof Error ? err.message : String(err),
    );
    const done = { startedAt, attemptAt, doneAt: epochMs(), attempts, ...(firstError ? { firstError } : {}) };
    if (typeof outcome !== 'string') return { ...done, timings: outcome };
    firstError ??= outcome;
    if (signal.aborted) return { ...done, timings: noTimings, error: outcome, firstError };
    await delay(RETRY_MS);
  }
}

/** Network bridges this process's ADDs made (no agent here adopts them): removed when it closes. */
const bridges = new Set<string>();

/** Notes the bridge the ADD result's host end is in. */
async function noteBridge(stdout: string): Promise<void> {
  const tap = (JSON.parse(stdout) as { interfaces?: { name: string }[] }).interfaces?.[0]?.name;
  if (tap) bridges.add(basename(await readlink(`/sys/class/net/${tap}/master`)));
}

async function close(): Promise<never> {
  stop.abort(new Error('benchmark done'));
  for (const bridge of bridges) await sh('ip', ['link', 'del', bridge]).catch(() => undefined);
  await connections.close().catch(() => undefined);
  process.exit(0);
}

async function del(pod: CniPod): Promise<string | undefined> {
  if (options.mode === 'verify') return undefined;
  const { stdin, env } = call(pod, 'DEL');
  const outcome = await runPlugin({ env, stdin, signal: stop.signal, startupMs: 0, connections, log: () => undefined });
  await sh('ip', ['netns', 'del', netnsOf(pod)]).catch(() => undefined);
  const port = plugged.get(pod.uid);
  plugged.delete(pod.uid);
  if (port && outcome.exitCode === 0) agentReports(port, false);
  return outcome.exitCode === 0 ? undefined : outcome.stdout.slice(0, 300);
}

process.on('message', (raw) => {
  const command = raw as CniNodeCommand;
  switch (command.type) {
    case 'add':
      void add(command.pod).then((a) => reply({ type: 'added', id: command.id, add: a }));
      break;
    case 'del':
      void del(command.pod).then(
        (error) => reply({ type: 'deleted', id: command.id, ...(error ? { error } : {}) }),
        (err: unknown) => reply({ type: 'deleted', id: command.id, error: String(err) }),
      );
      break;
    case 'counts':
      reply({ type: 'counts', id: command.id, counts: Object.fromEntries(counts) });
      if (command.reset) counts = new Map();
      break;
    case 'ports':
      void connections.neutron.ports
        .list({ tags: [`raven.cluster=${command.clusterId}`], device_owner: POD_DEVICE_OWNER }, { fields: ['id'] })
        .then(
          (ports) => reply({ type: 'ports', id: command.id, ports: ports.length }),
          () => reply({ type: 'ports', id: command.id, ports: -1 }),
        );
      break;
    case 'close':
      void close();
  }
});
process.on('disconnect', () => void close());
reply({ type: 'ready' });
