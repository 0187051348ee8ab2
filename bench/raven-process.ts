/**
 * Child-process entry: Raven's controller (`runRaven`, as `raven run` would run it, leader election off) against a
 * benchmark API server and an OpenStack cloud (the simulator or the real Neutron), on its own event loop so the
 * benchmark's writer and watch do not share it. Every OpenStack request the controller makes is counted by route
 * (an interceptor outermost on its session: one count per logical call, retries not counted again). Started by
 * `startRavenProcess` (raven.ts); talks over the IPC channel. Its logs go to the parent's stderr.
 */
import { loadRavenConfig } from '../src/daemon/config/index.ts';
import { createLogger } from '../src/daemon/logger.ts';
import { runRaven } from '../src/daemon/run-raven.ts';
import { KubeClient } from '../src/kube/client/index.ts';
import { loadCloudConfig, OpenStackSession, type Interceptor } from '../src/openstack/index.ts';
import { routeKey } from '../src/openstack/sim/index.ts';

export interface RavenProcessOptions {
  kube: { url: string; token: string; caPem: string | null; qps: number; burst: number };
  cloud: { cloudsYaml: string; name: string; networkConcurrency: number; timeoutMs: number };
  clusterId: string;
  podCidr: string;
  workers: number;
  logLevel: 'warn' | 'error';
}

export type RavenCommand = { type: 'counts'; reset: boolean } | { type: 'close' };
export type RavenReply =
  | { type: 'ready'; opsUrl: string }
  | { type: 'counts'; counts: Record<string, number> }
  | { type: 'failed'; message: string };

const options = JSON.parse(process.argv[2] ?? '{}') as RavenProcessOptions;

function reply(message: RavenReply): void {
  process.send?.(message);
}

let counts = new Map<string, number>();
const counting: Interceptor = (next) => (req) => {
  const key = `${req.service} ${routeKey(req.method, req.path)}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return next(req);
};

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
  },
});
const logger = createLogger(config.logLevel);
const client = new KubeClient({
  connection: {
    server: options.kube.url,
    ...(options.kube.caPem ? { ca: options.kube.caPem } : {}),
    credentials: () => Promise.resolve({ kind: 'bearer', token: options.kube.token }),
    source: 'bench',
  },
  qps: config.kubernetes.qps,
  burst: config.kubernetes.burst,
});
const session = new OpenStackSession({
  cloud: loadCloudConfig({ cloud: options.cloud.name, env: { OS_CLIENT_CONFIG_FILE: options.cloud.cloudsYaml } }),
  concurrency: { network: config.openstack.concurrency.network },
  timeoutMs: config.openstack.timeoutMs,
  interceptors: [counting],
});

const stop = new AbortController();
const running = runRaven(
  { config, logger, client, session, onListening: (opsUrl) => reply({ type: 'ready', opsUrl }) },
  stop.signal,
);
running.catch((err: unknown) => {
  reply({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
});

async function shutdown(): Promise<never> {
  stop.abort(new Error('benchmark done'));
  await running.catch(() => undefined);
  await Promise.allSettled([client.close(), session.close()]);
  process.exit(0);
}

process.on('message', (raw) => {
  const command = raw as RavenCommand;
  if (command.type === 'counts') {
    reply({ type: 'counts', counts: Object.fromEntries(counts) });
    if (command.reset) counts = new Map();
  } else {
    void shutdown();
  }
});
// The parent went away (crashed or was killed): do not linger.
process.on('disconnect', () => void shutdown());
