import { randomUUID } from 'node:crypto';
import { errorMessage, type Logger } from '../core/index.ts';
import { EventRecorder, Manager, type Runnable } from '../controller/index.ts';
import { SharedInformerFactory } from '../kube/cache/index.ts';
import { inClusterConfig, KubeClient, loadConnection, type ClusterConnection } from '../kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../openstack/index.ts';
import { Raven, type ReconcilerConfig } from '../reconcilers/index.ts';
import type { RavenConfig } from './config/index.ts';
import { createMetrics } from './metrics.ts';
import { listenOps } from './ops-server.ts';

/** The reconcilers' view of the daemon's configuration. */
export function reconcilerConfig(config: RavenConfig): ReconcilerConfig {
  const { subnets } = config;
  return {
    clusterId: config.clusterId,
    subnets:
      subnets.strategy === 'shared'
        ? { strategy: 'shared', shared: { ...subnets.shared } }
        : { strategy: 'namespace', namespace: { ...subnets.namespace } },
    serviceSubnet: { ...config.serviceSubnet },
    router: { ...config.router },
    floatingIpNetworkId: config.floatingIpNetworkId ?? config.router.externalNetworkId,
    securityGroups: [...config.securityGroups],
    emulateKubeProxy: config.emulateKubeProxy,
    loadBalancer: { ...config.loadBalancer },
    gc: { graceSeconds: config.gc.graceSeconds },
  };
}

/** The connection `config.kubernetes` describes (in-cluster, or a kubeconfig and context). */
async function kubeConnection(config: RavenConfig): Promise<ClusterConnection> {
  const { kubeconfig, context, inCluster } = config.kubernetes;
  return inCluster
    ? inClusterConfig()
    : loadConnection({ ...(kubeconfig ? { kubeconfig } : {}), ...(context ? { context } : {}) });
}

function kubeClient(connection: ClusterConnection, config: RavenConfig, logger: Logger, component: string): KubeClient {
  const { qps, burst } = config.kubernetes;
  return new KubeClient({ connection, qps, burst, logger: logger.child({ component }) });
}

/** The Kubernetes client `config.kubernetes` describes. */
export async function connectKubernetes(config: RavenConfig, logger: Logger): Promise<KubeClient> {
  return kubeClient(await kubeConnection(config), config, logger, 'kube-client');
}

/**
 * The controller's client, and one for its event recorder on the same connection with a qps/burst budget of its own
 * (as controller-runtime gives its recorder), so a burst of Events never slows the writes that wire pods.
 */
async function connectKubernetesWithEvents(
  config: RavenConfig,
  logger: Logger,
): Promise<{ client: KubeClient; eventsClient: KubeClient }> {
  const connection = await kubeConnection(config);
  return {
    client: kubeClient(connection, config, logger, 'kube-client'),
    eventsClient: kubeClient(connection, config, logger, 'kube-client-events'),
  };
}

/** The OpenStack session `config.openstack` describes (the cloud from clouds.yaml or `OS_*`). */
export function connectOpenStack(config: RavenConfig, logger: Logger): OpenStackSession {
  const { cloud, concurrency, timeoutMs } = config.openstack;
  return new OpenStackSession({
    cloud: loadCloudConfig(cloud ? { cloud } : {}),
    concurrency: { network: concurrency.network, 'load-balancer': concurrency.loadBalancer },
    timeoutMs,
    logger: logger.child({ component: 'openstack' }),
  });
}

export interface RunRavenOptions {
  config: RavenConfig;
  logger: Logger;
  /** Given by `raven dev` (the embedded server's client); otherwise built from `config.kubernetes`. */
  client?: KubeClient;
  /** Given by `raven dev` (the simulator); otherwise built from `config.openstack`. */
  session?: OpenStackSession;
  /** More runnables for the same manager (the cluster simulator in `raven dev`), run leader or not. */
  extraRunnables?: (informers: SharedInformerFactory, client: KubeClient) => Runnable[];
  /** Called once the ops server listens. */
  onListening?: (opsUrl: string) => void;
}

/**
 * `raven run`: the controller. Connects to Kubernetes and OpenStack, registers the informers, serves `/healthz`,
 * `/readyz` (caches synced, OpenStack reachable, not shutting down; `?verbose` says leading or standby — both are
 * ready) and `/metrics` (work queues, reconciles, OpenStack requests, pod network-ready latency, garbage collection,
 * `leader_election_master_status`), and runs Raven under a manager —
 * with leader election unless disabled — until `signal` aborts (SIGINT/SIGTERM: stop sources, drain, release the
 * Lease, exit). Rejects with `LEADER_LOST` when leadership is lost (exit and let the Deployment restart it).
 */
export async function runRaven(options: RunRavenOptions, signal: AbortSignal): Promise<void> {
  const { config, logger } = options;
  const { client, eventsClient } = options.client
    ? { client: options.client, eventsClient: options.client }
    : await connectKubernetesWithEvents(config, logger);
  const session = options.session ?? connectOpenStack(config, logger);
  const metrics = createMetrics();
  const informers = new SharedInformerFactory({ client, logger: logger.child({ component: 'informers' }) });
  const recorder = new EventRecorder({ client: eventsClient, component: 'raven', logger });
  const neutron = new NeutronClient(session);
  const raven = new Raven({
    client,
    cloud: { neutron, octavia: new OctaviaClient(session) },
    informers,
    config: reconcilerConfig(config),
    translations: { ...config.translations },
    workers: { ...config.workers },
    resyncPeriodSeconds: config.resyncPeriodSeconds,
    gcIntervalSeconds: config.gc.intervalSeconds,
    recorder,
    metrics: metrics.provider,
    ravenMetrics: metrics.raven,
    logger,
  });
  const le = config.leaderElection;
  const manager = new Manager({
    informers,
    recorder,
    logger,
    ...(le.enabled
      ? {
          leaderElection: {
            client,
            namespace: le.namespace,
            name: le.name,
            identity: le.identity || `raven-${randomUUID()}`,
            leaseDurationMs: le.leaseDurationSeconds * 1000,
            renewDeadlineMs: le.renewDeadlineSeconds * 1000,
            retryPeriodMs: le.retryPeriodSeconds * 1000,
          },
        }
      : {}),
  });
  if (le.enabled) metrics.leaderElection(le.name, () => manager.isLeader());
  manager.add(raven);
  for (const r of options.extraRunnables?.(informers, client) ?? []) manager.add(r, { leaderOnly: false });
  manager.addReadyzCheck('openstack', openStackCheck(neutron));
  const ops = await listenOps({
    host: config.ops.host,
    port: config.ops.port,
    health: manager.health,
    registry: metrics.registry,
    logger,
  });
  options.onListening?.(ops.url);
  // Also a session given by `raven dev`, so undone at the end: that session outlives this run.
  const stopObserving = session.observe(metrics.openstack);
  try {
    await manager.start(signal);
  } finally {
    await ops.close();
    stopObserving();
    if (!options.session) await session.close();
    if (!options.client) await Promise.all([client.close(), eventsClient.close()]);
  }
}

/** Readiness: Neutron answered within the last 10 s (one cheap list, cached so probes do not load Neutron). */
function openStackCheck(neutron: NeutronClient): () => Promise<string | undefined> {
  let last: { at: number; problem: string | undefined } | undefined;
  return async () => {
    if (last && Date.now() - last.at < 10_000) return last.problem;
    try {
      // The first page only: `list` would walk every page.
      await neutron.networks.pages({}, { fields: ['id'], limit: 1, signal: AbortSignal.timeout(4_000) }).next();
      last = { at: Date.now(), problem: undefined };
    } catch (err) {
      last = { at: Date.now(), problem: `Neutron: ${errorMessage(err)}` };
    }
    return last.problem;
  };
}
