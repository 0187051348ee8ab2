import { resolve } from 'node:path';
import { ClusterSimulator } from '@raven/cluster-sim';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../../../src/core/index.ts';
import { listeningServer, type Manager, type Runnable } from '../../../src/controller/index.ts';
import { SharedInformerFactory } from '../../../src/kube/cache/index.ts';
import { KubeClient, type ClusterConnection } from '../../../src/kube/client/index.ts';
import {
  loadCloudConfig,
  NeutronClient,
  OctaviaClient,
  OpenStackSession,
  type CloudConfig,
} from '../../../src/openstack/index.ts';
import { composeRaven } from '../../../src/daemon/compose.ts';
import { dataplaneConfig, dataplaneRuntime, startRigNode, type DataplaneRig } from './dataplane.ts';
import type { RavenConfig } from '../../../src/daemon/config/index.ts';
import { realCloudNotice } from './dev-cloud.ts';
import { runDemo } from './dev-demo.ts';
import {
  DEV_EXTERNAL_NETWORK,
  DEV_SERVICE_CIDR,
  ensureDevExternalNetwork,
  withExternalNetwork,
} from './dev-network.ts';
import { runApiServer, type RunningApiServer } from './run-apiserver.ts';
import { runOpenStackSim, type RunningOpenStackSim } from './run-openstack-sim.ts';

/** How often `raven dev` looks again at a simulated load balancer in `PENDING_*`, at most. */
const SIM_PENDING_REQUEUE_MS = 500;

export interface DevOptions {
  config: RavenConfig;
  logger: Logger;
  apiPort: number;
  kubeconfigOut: string;
  /** Where the simulator's clouds.yaml goes (when no real cloud is configured). */
  cloudsYamlOut: string;
  /** Use the OpenStack the configuration names instead of the simulator. */
  realCloud: boolean;
  /** With a real cloud: the caller deletes what dev made there on exit (the notice says which). */
  cleanup?: boolean;
  /**
   * Run on the real Neutron dataplane (`npm run dataplane:start`): its Neutron instead of the simulator, its agents'
   * host as the one node, and every pod a network namespace plugged by raven-cni from `pluginDir`, which forwards
   * its calls to `raven node` on `nodeSocket` (run here too). Root only.
   */
  dataplane?: { rig: DataplaneRig; pluginDir: string; nodeSocket: string } | undefined;
  /** Run the demo once ready: create namespace demo, 3 pods and a LoadBalancer Service, wait, print the result. */
  demo?: { timeoutMs: number; out: (text: string) => void; err: (text: string) => void } | undefined;
  /** Bounds the set-up (the simulator's external network); the manager takes its own signal at start. */
  signal: AbortSignal;
}

/** `raven dev`, composed: start `manager`; `banner` says what runs and what to try. */
export interface ComposedDev {
  manager: Manager;
  banner: string;
  /** With a real cloud: which one, what Raven will create there and what happens to it on exit; to say loudly. */
  notice: string | undefined;
  /**
   * The settings Raven runs with, as `raven plan` and `raven gc` need them: the kubeconfig written and the cloud
   * (`raven-sim` in the clouds.yaml written) included.
   */
  settings: RavenConfig;
}

/**
 * `raven dev`: everything on this machine, as one manager — the embedded API server and the OpenStack simulator as
 * servers (stopped last), Raven as composed for `raven run` (leader election off by default), and alongside it the
 * cluster simulator and, with `demo`, the demo. One ordered shutdown stops them all.
 */
export async function composeDev(options: DevOptions): Promise<ComposedDev> {
  const { logger, kubeconfigOut } = options;
  const api = await runApiServer({
    host: '127.0.0.1',
    port: options.apiPort,
    portFlag: '--api-port',
    tls: 'self-signed',
    kubeconfigOut,
    // The cluster's service range(s) are Raven's service subnet(s): two ranges make Services dual-stack.
    serviceCidr: (options.config.serviceSubnet.cidrs ?? [DEV_SERVICE_CIDR]).join(','),
    podGracefulDeletion: true,
    logger: logger.child({ component: 'apiserver' }),
  });
  // Until composeRaven takes them over (and gives them back if it fails), what is open here is closed here.
  let sim: RunningOpenStackSim | undefined;
  let session: OpenStackSession | undefined;
  let config: RavenConfig;
  let cloud: CloudConfig;
  try {
    if (!options.realCloud && !options.dataplane) {
      sim = await runOpenStackSim({
        port: 0,
        auth: 'keystone',
        cloudsYamlOut: options.cloudsYamlOut,
        logger: logger.child({ component: 'openstack-sim' }),
      });
    }
    const rig = options.dataplane?.rig;
    cloud = sim
      ? loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: options.cloudsYamlOut } })
      : rig
        ? loadCloudConfig({ cloud: rig.cloud, env: { OS_CLIENT_CONFIG_FILE: rig.cloudsYaml } })
        : loadCloudConfig({
            ...(options.config.openstack.cloud ? { cloud: options.config.openstack.cloud } : {}),
            ...(options.config.openstack.cloudsFile
              ? { env: { ...process.env, OS_CLIENT_CONFIG_FILE: options.config.openstack.cloudsFile } }
              : {}),
          });
    session = new OpenStackSession({ cloud, logger: logger.child({ component: 'openstack' }) });
    config = sim
      ? await simulatedCloudConfig(options.config, session, options.signal)
      : rig
        ? await withVifKey(dataplaneConfig(options.config, rig), join(dirname(kubeconfigOut), 'vif.key'))
        : options.config;
  } catch (err) {
    await Promise.allSettled([session?.close(), sim?.close(), api.close()]);
    throw err;
  }
  const servers = [listeningServer('apiserver', () => api.close())];
  if (sim) servers.push(listeningServer('openstack-sim', () => sim.close()));
  const connection: ClusterConnection = {
    server: api.url,
    ca: api.caPem,
    credentials: () => Promise.resolve({ kind: 'bearer', token: api.token }),
    source: 'raven dev',
  };
  const client = new KubeClient({ connection, qps: 1000, burst: 2000 });
  // The simulator plays many kubelets at once: a client (and caches) of its own, never trimmed.
  const simClient = new KubeClient({ connection, qps: 5000, burst: 5000 });
  const dataplane = options.dataplane;
  const runtime = dataplane
    ? dataplaneRuntime(dataplane.rig, {
        kubeconfig: kubeconfigOut,
        node: { vifKeyFile: config.vif.keyFile },
        pluginDirs: [dataplane.pluginDir, '/usr/lib/cni'],
        daemonSocket: dataplane.nodeSocket,
        logger: logger.child({ component: 'runtime' }),
      })
    : undefined;
  const cluster = new ClusterSimulator({
    client: simClient,
    connection,
    informers: new SharedInformerFactory({ client: simClient }),
    logger,
    ...(dataplane && runtime ? { nodes: [dataplane.rig.host], runtime, workers: 16 } : {}),
  });
  const alongside: Runnable[] = [{ name: 'cluster-simulator', start: (signal) => cluster.run(signal) }];
  if (dataplane) {
    const log = logger.child({ component: 'raven-node' });
    alongside.push({
      name: 'raven-node',
      start: async (signal) => {
        const nodeOptions = { kubeconfig: kubeconfigOut, socketPath: dataplane.nodeSocket };
        const node = await startRigNode(dataplane.rig, { ...nodeOptions, log: (entry) => log.info(entry) }, signal);
        await node.stopped;
      },
    });
  }
  const raven = await composeRaven({
    config,
    logger,
    connections: { client, eventsClient: client, session },
    servers,
    alongside,
    topology: true,
  }).catch(async (err: unknown) => {
    await simClient.close();
    throw err;
  });
  raven.manager.closeOnStop(() => simClient.close());
  // The pods' namespaces and veth pairs go with `raven dev`: nothing it plugged outlives it.
  if (runtime) raven.manager.closeOnStop(() => runtime.removeAll());
  const demo = options.demo;
  if (demo) {
    const octavia = new OctaviaClient(session);
    const readyUrl = `${raven.opsUrl}/readyz`;
    const expectIngress = config.floatingIpNetworkId !== undefined;
    raven.manager.add(
      {
        name: 'demo',
        start: async (signal) => {
          const demoOptions = { client, octavia, clusterId: config.clusterId, readyUrl, expectIngress, ...demo };
          await runDemo(demoOptions, signal);
        },
      },
      { leaderOnly: false },
    );
  }
  const nodes = cluster.nodes.map((n) => n.name).join(', ');
  const paths = { kubeconfig: kubeconfigOut, cloudsYaml: options.cloudsYamlOut };
  const dataplaneRig = dataplane?.rig;
  return {
    manager: raven.manager,
    banner: banner({
      api,
      sim,
      cloud,
      config,
      paths,
      opsUrl: raven.opsUrl,
      topologyUrl: raven.topologyUrl,
      nodes,
      dataplaneRig,
    }),
    notice: sim || dataplaneRig ? undefined : realCloudNotice(cloud, config, options.cleanup === true),
    settings: {
      ...config,
      kubernetes: { ...config.kubernetes, kubeconfig: resolve(kubeconfigOut), inCluster: false },
      // A cloud from OS_* variables is the caller's environment's: plan and gc read it from theirs.
      openstack:
        cloud.source === 'environment'
          ? config.openstack
          : { ...config.openstack, cloud: cloud.name, cloudsFile: resolve(cloud.source) },
    },
  };
}

/**
 * The simulator starts empty: an external network gives the router a gateway and LoadBalancer services floating
 * IPs. Its load balancers settle in 300 ms: looking every 2 s (the default, for a real Octavia) would only make each
 * listener, pool and member change wait.
 */
async function simulatedCloudConfig(
  config: RavenConfig,
  session: OpenStackSession,
  signal: AbortSignal,
): Promise<RavenConfig> {
  const networkId = await ensureDevExternalNetwork(new NeutronClient(session), signal);
  const withNetwork = withExternalNetwork(config, networkId);
  const pendingRequeueMs = Math.min(config.loadBalancer.pendingRequeueMs, SIM_PENDING_REQUEUE_MS);
  return { ...withNetwork, loadBalancer: { ...withNetwork.loadBalancer, pendingRequeueMs } };
}

function banner(o: {
  api: RunningApiServer;
  sim: RunningOpenStackSim | undefined;
  cloud: CloudConfig;
  config: RavenConfig;
  paths: { kubeconfig: string; cloudsYaml: string };
  opsUrl: string;
  topologyUrl: string;
  nodes: string;
  dataplaneRig: DataplaneRig | undefined;
}): string {
  const { api, sim, cloud, config } = o;
  const { kubeconfig, cloudsYaml } = o.paths;
  const lines = [
    'Raven dev: everything on this machine',
    `  Kubernetes API:  ${api.url}   kubeconfig ${kubeconfig}`,
    sim
      ? `  OpenStack (sim): ${sim.url}   clouds.yaml ${cloudsYaml} (cloud raven-sim)`
      : `  OpenStack:       cloud ${cloud.name} (${cloud.source})`,
    ...(sim && config.floatingIpNetworkId
      ? [
          `  floating IPs:    network ${DEV_EXTERNAL_NETWORK.name}, ${DEV_EXTERNAL_NETWORK.cidr} ` +
            '(TEST-NET-3: simulated, routes nowhere)',
        ]
      : []),
    `  ops:             ${o.opsUrl}/healthz  /readyz  /metrics`,
    `  topology view:   ${o.topologyUrl}   (live: what Raven made, and what is stuck)`,
    `  cluster:         ${config.clusterId}, nodes ${o.nodes}, subnets ${config.subnets.strategy}`,
    'Try:',
    `  export KUBECONFIG=${kubeconfig}`,
    '  kubectl create namespace shop',
    '  kubectl -n shop run web --image=nginx --port=80',
    "  kubectl -n shop get pod web -o jsonpath='{.metadata.annotations.raven\\.openstack\\.org/vif}'",
    ...(o.dataplaneRig && !o.dataplaneRig.octavia
      ? []
      : ['  kubectl -n shop expose pod web --type=LoadBalancer --port=80 && kubectl -n shop get service web']),
    ...(sim ? [`  OS_CLIENT_CONFIG_FILE=${cloudsYaml} OS_CLOUD=raven-sim openstack port list`] : []),
    '  raven plan; raven gc   (here, they read the settings of this raven dev)',
    ...(o.dataplaneRig
      ? [
          ...(o.dataplaneRig.octavia
            ? [
                `Real dataplane: node ${o.dataplaneRig.host}, Neutron ${o.dataplaneRig.neutronUrl}, Octavia ${o.dataplaneRig.octavia.url}`,
                `  (provider ${o.dataplaneRig.octavia.provider}: every clusterIP is a load balancer, reached from the pods).`,
              ]
            : [
                `Real dataplane: node ${o.dataplaneRig.host}, Neutron ${o.dataplaneRig.neutronUrl}; Services are not translated`,
                '  (the rig has no Octavia).',
              ]),
          `  Each pod is the network namespace ${o.dataplaneRig.netnsPrefix}<pod uid>:`,
          `  kubectl -n shop run db --image=db && ns=${o.dataplaneRig.netnsPrefix}$(kubectl -n shop get pod web -o jsonpath='{.metadata.uid}')`,
          "  ip netns exec $ns ping -c 3 $(kubectl -n shop get pod db -o jsonpath='{.status.podIP}')",
          "  (each pod answers TCP and UDP on 8080, or on its containers' ports, with its name)",
        ]
      : []),
    'Press Ctrl-C to stop.',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * On the dataplane, Raven signs VIFs and the node plugs on the signature (docs/pools.md, "Signed VIFs"): a key of this
 * run's own, unless the configuration names one.
 */
async function withVifKey(config: RavenConfig, file: string): Promise<RavenConfig> {
  if (config.vif.keyFile) return config;
  await writeFile(file, randomBytes(32), { mode: 0o600 });
  return { ...config, vif: { keyFile: file } };
}
