/**
 * Child-process entry: Raven's controller (`composeRaven` under its manager, as `raven run` runs it, leader election
 * off) against a benchmark API server and an OpenStack cloud (the simulator or the real Neutron), on its own event
 * loop so the benchmark's writer and watch do not share it. Every OpenStack request the controller makes is counted
 * by route (an interceptor outermost on its session: one count per logical call, retries not counted again), and the
 * moment each pod's port became the pod's in Neutron is noted. Started by `startRavenProcess` (raven-rig.ts); talks
 * over the IPC channel. Its logs go to the parent's stderr.
 *
 * `runtime: 'dist'` loads Raven compiled (dist/, what `raven run` and the image run) instead of the sources, and the
 * parent runs this file transpiled to JavaScript without tsx (raven-rig.ts), so no TypeScript loader — whose hooks
 * run on a thread of their own — is resident in the controller whose memory is measured. Hence only type imports
 * here, and Raven is loaded from `repo` by URL.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type * as ComposeModule from '../src/daemon/compose.ts';
import type * as ConfigModule from '../src/daemon/config/index.ts';
import type * as LoggerModule from '../src/daemon/logger.ts';
import type * as KubeClientModule from '../src/kube/client/index.ts';
import type * as OpenStackModule from '../src/openstack/index.ts';
import type * as FaultsModule from '@raven/openstack-sim/faults.ts';

export interface RavenProcessOptions {
  kube: { url: string; token: string; caPem: string | null; qps: number; burst: number };
  cloud: { cloudsYaml: string; name: string; networkConcurrency: number; timeoutMs: number };
  clusterId: string;
  podCidr: string;
  workers: number;
  logLevel: 'warn' | 'error';
  /** Warm port pools (`portPools.*`); absent: Raven's defaults. */
  pools?: { enabled: boolean; min?: number; max?: number; batch?: number };
  /** `src` (default): the sources through tsx; `dist`: the compiled runtime (`npm run build`). */
  runtime?: 'src' | 'dist';
  /** The repository's root URL (set by `startRavenProcess`). */
  repo?: string;
  /**
   * `own`: Events go through a client with its own qps/burst budget, as `raven run` connects; `shared` (default):
   * one client, so Events and annotation writes share one limiter.
   */
  eventsClient?: 'own' | 'shared';
  /** `vif.keyFile`: VIFs signed (docs/pools.md, "Signed VIFs"). */
  vifKeyFile?: string;
  /** `nested.mode: auto`: pods on VM nodes get subports of the VM's trunk (docs/nested.md). */
  nested?: boolean;
}

/** The controller's CPU time and memory. */
export interface RavenUsage {
  /** `process.cpuUsage()`, user + system, in µs since the process started. */
  cpuMicros: number;
  rss: number;
  /** VmHWM: the highest RSS since the process started or since the last `resetPeak`. */
  peakRss: number;
}

export type RavenCommand =
  | { type: 'counts'; reset: boolean }
  | { type: 'usage'; resetPeak: boolean }
  | { type: 'claims'; reset: boolean }
  | { type: 'last-call' }
  | { type: 'close' };
export type RavenReply =
  | { type: 'ready'; opsUrl: string }
  | { type: 'counts'; counts: Record<string, number> }
  | { type: 'usage'; usage: RavenUsage }
  | { type: 'claims'; claims: Record<string, number>; cold: string[] }
  /** Epoch ms of Neutron's answer to the last request, and to the last write (not a GET); 0: none yet. */
  | { type: 'last-call'; anyAt: number; writeAt: number }
  | { type: 'failed'; message: string };

const options = JSON.parse(process.argv[2] ?? '{}') as RavenProcessOptions;
const [root, ext] = options.runtime === 'dist' ? ['dist/', '.js'] : ['', '.ts'];
const load = <T>(path: string): Promise<T> =>
  import(new URL(`${root}${path}${ext}`, options.repo ?? new URL('../', import.meta.url)).href) as Promise<T>;
const { composeRaven } = await load<typeof ComposeModule>('src/daemon/compose');
const { loadRavenConfig } = await load<typeof ConfigModule>('src/daemon/config/index');
const { createLogger } = await load<typeof LoggerModule>('src/daemon/logger');
const { KubeClient } = await load<typeof KubeClientModule>('src/kube/client/index');
const { loadCloudConfig, OpenStackSession } = await load<typeof OpenStackModule>('src/openstack/index');
// The simulator's route keys (ids → {id}), from its fault module alone: the rest of the simulator stays unloaded.
const { routeKey } = await load<typeof FaultsModule>('packages/openstack-sim/src/faults');

function reply(message: RavenReply): void {
  process.send?.(message);
}

/** Epoch ms, comparable with the parent's (support.ts `epochMs`). */
const epochMs = (): number => performance.timeOrigin + performance.now();

let counts = new Map<string, number>();
/** Pod uid → when Neutron answered the request that made the port the pod's (`device_id`). */
let claims = new Map<string, number>();
/** The pods whose port was made for them (a cold create), not taken from a pool. */
let cold = new Set<string>();
/** When Neutron last answered (any request, and a write): the end of the work a change caused. */
const last = { anyAt: 0, writeAt: 0 };
const counting: OpenStackModule.Interceptor = (next) => async (req) => {
  const key = `${req.service} ${routeKey(req.method, req.path)}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  const res = await next(req);
  if (req.service === 'network') {
    last.anyAt = epochMs();
    if (req.method !== 'GET') last.writeAt = last.anyAt;
  }
  // A pool port's claim (PUT ports/{id} with device_id), or a cold create (POST ports with device_id).
  if (
    req.service === 'network' &&
    res.status < 300 &&
    req.body &&
    /^(PUT \/v2\.0\/ports\/\{id\}|POST \/v2\.0\/ports)$/.test(routeKey(req.method, req.path))
  ) {
    const body = JSON.parse(req.body) as { port?: { device_id?: string } };
    const uid = body.port?.device_id;
    if (uid && !claims.has(uid)) {
      claims.set(uid, epochMs());
      if (req.method === 'POST') cold.add(uid);
    }
  }
  return res;
};

const pools = options.pools
  ? {
      portPools: {
        enabled: options.pools.enabled,
        ...(options.pools.min !== undefined ? { min: options.pools.min } : {}),
        ...(options.pools.max !== undefined ? { max: options.pools.max } : {}),
        ...(options.pools.batch !== undefined ? { batch: options.pools.batch } : {}),
      },
    }
  : {};
const config = loadRavenConfig({
  env: {},
  flags: {
    clusterId: options.clusterId,
    subnets: { strategy: 'shared', shared: { cidr: options.podCidr } },
    translations: { namespaces: false, pods: true, services: false },
    workers: { pods: options.workers },
    leaderElection: { enabled: false },
    ops: { port: 0 },
    kubernetes: { qps: options.kube.qps, burst: options.kube.burst },
    openstack: { concurrency: { network: options.cloud.networkConcurrency }, timeoutMs: options.cloud.timeoutMs },
    logLevel: options.logLevel,
    ...pools,
    ...(options.vifKeyFile ? { vif: { keyFile: options.vifKeyFile } } : {}),
    ...(options.nested ? { nested: { mode: 'auto' as const } } : {}),
  },
});
const logger = createLogger(config.logLevel);
const kubeClient = () =>
  new KubeClient({
    connection: {
      server: options.kube.url,
      ...(options.kube.caPem ? { ca: options.kube.caPem } : {}),
      credentials: () => Promise.resolve({ kind: 'bearer', token: options.kube.token }),
      source: 'bench',
    },
    qps: config.kubernetes.qps,
    burst: config.kubernetes.burst,
  });
const client = kubeClient();
const eventsClient = options.eventsClient === 'own' ? kubeClient() : client;
const session = new OpenStackSession({
  cloud: loadCloudConfig({ cloud: options.cloud.name, env: { OS_CLIENT_CONFIG_FILE: options.cloud.cloudsYaml } }),
  concurrency: { network: config.openstack.concurrency.network },
  timeoutMs: config.openstack.timeoutMs,
  interceptors: [counting],
});

const stop = new AbortController();
const running = (async () => {
  const raven = await composeRaven({
    config,
    logger,
    connections: { client, eventsClient, session },
    closeConnections: false,
  });
  reply({ type: 'ready', opsUrl: raven.opsUrl });
  await raven.manager.start(stop.signal);
})();
running.catch((err: unknown) => {
  reply({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
});

function usage(resetPeak: boolean): RavenUsage {
  const { user, system } = process.cpuUsage();
  const kB = (field: string): number => {
    const line = readFileSync('/proc/self/status', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return 1024 * parseInt(line?.slice(field.length + 1) ?? 'NaN', 10);
  };
  const now = { cpuMicros: user + system, rss: process.memoryUsage().rss, peakRss: kB('VmHWM') };
  // Linux: writing 5 to clear_refs resets the high-water mark to the current RSS (proc(5)).
  if (resetPeak) writeFileSync('/proc/self/clear_refs', '5');
  return now;
}

async function shutdown(): Promise<never> {
  stop.abort(new Error('benchmark done'));
  await running.catch(() => undefined);
  await Promise.allSettled([
    client.close(),
    eventsClient === client ? undefined : eventsClient.close(),
    session.close(),
  ]);
  process.exit(0);
}

process.on('message', (raw) => {
  const command = raw as RavenCommand;
  switch (command.type) {
    case 'counts':
      reply({ type: 'counts', counts: Object.fromEntries(counts) });
      if (command.reset) counts = new Map();
      break;
    case 'usage':
      reply({ type: 'usage', usage: usage(command.resetPeak) });
      break;
    case 'claims':
      reply({ type: 'claims', claims: Object.fromEntries(claims), cold: [...cold] });
      if (command.reset) {
        claims = new Map();
        cold = new Set();
      }
      break;
    case 'last-call':
      reply({ type: 'last-call', ...last });
      break;
    case 'close':
      void shutdown();
  }
});
// The parent went away (crashed or was killed): do not linger.
process.on('disconnect', () => void shutdown());
