import { silentLogger, type Logger } from '../core/index.ts';
import { inClusterConfig, KubeClient, loadConnection, type ClusterConnection } from '../kube/client/index.ts';
import { loadCloudConfig, OpenStackSession, type Interceptor } from '../openstack/index.ts';
import type { ReconcilerConfig } from '../reconcilers/index.ts';
import type { RavenConfig } from './config/index.ts';

/**
 * The reconcilers' view of the daemon's configuration. Both are derived from core/settings.ts and read-only: the
 * sections pass through whole, so a setting added to one reaches the reconcilers with no change here.
 */
export function reconcilerConfig(config: RavenConfig): ReconcilerConfig {
  const { subnets } = config;
  return {
    clusterId: config.clusterId,
    subnets:
      subnets.strategy === 'shared'
        ? { strategy: 'shared', shared: subnets.shared }
        : { strategy: 'namespace', namespace: subnets.namespace },
    serviceSubnet: config.serviceSubnet,
    router: config.router,
    floatingIpNetworkId: config.floatingIpNetworkId ?? config.router.externalNetworkId,
    floatingIps: config.floatingIps,
    securityGroups: config.securityGroups,
    networkPolicies: config.translations.pods && config.translations.networkPolicies,
    emulateKubeProxy: config.emulateKubeProxy,
    loadBalancer: config.loadBalancer,
    gc: config.gc,
    quotas: config.quotas,
    policyTransitions: config.policyTransitions,
    portPools: config.portPools,
    nested: config.nested,
  };
}

/** Whether Services become load balancers: the translation is on and a service subnet is configured. */
export function servicesTranslated(config: RavenConfig): boolean {
  const { subnetId, cidr } = config.serviceSubnet;
  return config.translations.services && (subnetId !== undefined || cidr !== undefined);
}

/** The connection `config.kubernetes` describes (in-cluster, or a kubeconfig and context). */
export async function kubeConnection(config: RavenConfig): Promise<ClusterConnection> {
  const { kubeconfig, context, inCluster } = config.kubernetes;
  if (inCluster) return inClusterConfig();
  return loadConnection({ ...(kubeconfig ? { kubeconfig } : {}), ...(context ? { context } : {}) });
}

/** A Kubernetes client on `connection` with `config.kubernetes`'s qps/burst budget. */
export function kubeClient(connection: ClusterConnection, config: RavenConfig, logger: Logger, component: string) {
  const { qps, burst } = config.kubernetes;
  return new KubeClient({ connection, qps, burst, logger: logger.child({ component }) });
}

/** The Kubernetes client `config.kubernetes` describes. */
export async function connectKubernetes(config: RavenConfig, logger: Logger): Promise<KubeClient> {
  return kubeClient(await kubeConnection(config), config, logger, 'kube-client');
}

/**
 * The OpenStack session `config.openstack` describes (the cloud from clouds.yaml or `OS_*`); `interceptors` go
 * outermost (`raven plan`'s dry run).
 */
export function connectOpenStack(
  config: RavenConfig,
  logger: Logger = silentLogger,
  interceptors: Interceptor[] = [],
): OpenStackSession {
  const { cloud, cloudsFile, concurrency, timeoutMs } = config.openstack;
  const env = cloudsFile ? { ...process.env, OS_CLIENT_CONFIG_FILE: cloudsFile } : process.env;
  return new OpenStackSession({
    interceptors,
    cloud: loadCloudConfig({ ...(cloud ? { cloud } : {}), env }),
    concurrency: { network: concurrency.network, 'load-balancer': concurrency.loadBalancer },
    timeoutMs,
    logger: logger.child({ component: 'openstack' }),
  });
}

/** What the controller talks to. The composition root owns them from then on: they are closed when it stops. */
export interface Connections {
  /** The controller's client: caches, annotations, finalizers, status. */
  client: KubeClient;
  /**
   * The event recorder's client, with a qps/burst budget of its own (as controller-runtime gives its recorder), so a
   * burst of Events never slows the writes that wire pods. May be `client` itself.
   */
  eventsClient: KubeClient;
  session: OpenStackSession;
}

/** The connections `config` describes: `raven run`'s. */
export async function connect(config: RavenConfig, logger: Logger): Promise<Connections> {
  const connection = await kubeConnection(config);
  return {
    client: kubeClient(connection, config, logger, 'kube-client'),
    eventsClient: kubeClient(connection, config, logger, 'kube-client-events'),
    session: connectOpenStack(config, logger),
  };
}
