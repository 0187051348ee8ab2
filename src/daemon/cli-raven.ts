import { mkdirSync } from 'node:fs';
import type { Command, OptionValues } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { ClusterSimulator } from '../cluster-sim/index.ts';
import { SharedInformerFactory } from '../kube/cache/index.ts';
import { KubeClient, type ClusterConnection } from '../kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../openstack/index.ts';
import { addConfigFlags, configFromFlags, describeConfig, loadRavenConfig, type RavenConfig } from './config/index.ts';
import { runDemo } from './dev-demo.ts';
import { DEV_EXTERNAL_NETWORK, ensureDevExternalNetwork, withExternalNetwork } from './dev-network.ts';
import { createLogger } from './logger.ts';
import { runApiServer } from './run-apiserver.ts';
import { runOpenStackSim } from './run-openstack-sim.ts';
import { runRaven } from './run-raven.ts';
import { shutdownSignal } from './signals.ts';
import { planCommand, gcCommand } from './cli-plan.ts';

function load(opts: OptionValues, env: NodeJS.ProcessEnv = process.env): RavenConfig {
  return loadRavenConfig({ file: opts.config as string | undefined, env, flags: configFromFlags(opts) });
}

async function runCommand(opts: OptionValues): Promise<void> {
  const config = load(opts);
  const logger = createLogger(config.logLevel);
  logger.info({ config: describeConfig(config) }, 'raven run');
  await runRaven(
    { config, logger, onListening: (url) => logger.info({ url }, 'ops endpoints: /healthz /readyz /metrics') },
    shutdownSignal(),
  );
}

function positiveSeconds(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('must be a whole number of seconds ≥ 1');
  return value;
}

/** `raven dev` defaults, under anything the environment, a config file or flags say. */
const devDefaults: NodeJS.ProcessEnv = {
  RAVEN_CLUSTER_ID: 'dev',
  FLANNEL_NET: '10.244.0.0/16',
  RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
  RAVEN_LEADER_ELECT: 'false',
  RAVEN_OPS_PORT: '0',
};

/** How often `raven dev` looks again at a simulated load balancer in `PENDING_*`, at most. */
const SIM_PENDING_REQUEUE_MS = 500;

async function devCommand(opts: OptionValues): Promise<void> {
  let config = load(opts, { ...devDefaults, ...process.env });
  const logger = createLogger(config.logLevel);
  const signal = shutdownSignal();
  mkdirSync('.raven', { recursive: true });
  const kubeconfigOut = opts.kubeconfigOut as string;
  const api = await runApiServer({
    host: '127.0.0.1',
    port: Number(opts.apiPort),
    tls: 'self-signed',
    kubeconfigOut,
    serviceCidr: '10.96.0.0/12',
    podGracefulDeletion: true,
    logger: logger.child({ component: 'apiserver' }),
  });
  const realCloud = Boolean(config.openstack.cloud ?? process.env.OS_CLOUD ?? process.env.OS_AUTH_URL);
  const sim = realCloud
    ? undefined
    : await runOpenStackSim({
        port: 0,
        auth: 'keystone',
        cloudsYamlOut: '.raven/clouds.yaml',
        logger: logger.child({ component: 'openstack-sim' }),
      });
  const cloud = sim
    ? loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: '.raven/clouds.yaml' } })
    : loadCloudConfig(config.openstack.cloud ? { cloud: config.openstack.cloud } : {});
  const session = new OpenStackSession({ cloud, logger: logger.child({ component: 'openstack' }) });
  // The simulator starts empty: an external network gives the router a gateway and LoadBalancer services floating IPs.
  if (sim) {
    try {
      config = withExternalNetwork(config, await ensureDevExternalNetwork(new NeutronClient(session), signal));
      // The simulator's load balancers settle in 300 ms: looking every 2 s (the default, for a real Octavia) would
      // only make each listener, pool and member change wait.
      config = {
        ...config,
        loadBalancer: {
          ...config.loadBalancer,
          pendingRequeueMs: Math.min(config.loadBalancer.pendingRequeueMs, SIM_PENDING_REQUEUE_MS),
        },
      };
    } catch (err) {
      await session.close();
      await sim.close();
      await api.close();
      throw err;
    }
  }
  const connection: ClusterConnection = {
    server: api.url,
    ca: api.caPem,
    credentials: () => Promise.resolve({ kind: 'bearer', token: api.token }),
    source: 'raven dev',
  };
  const client = new KubeClient({ connection, qps: 1000, burst: 2000 });
  const cluster = new ClusterSimulator({
    client,
    connection,
    informers: new SharedInformerFactory({ client }),
    logger,
  });
  const clusterRun = cluster.run(signal);
  let demo: Promise<boolean> | undefined;
  const startDemo = (opsUrl: string) => {
    if (!opts.demo) return;
    demo = runDemo(
      {
        client,
        octavia: new OctaviaClient(session),
        clusterId: config.clusterId,
        readyUrl: `${opsUrl}/readyz`,
        expectIngress: config.floatingIpNetworkId !== undefined,
        timeoutMs: Number(opts.demoTimeout) * 1000,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      },
      signal,
    );
  };
  try {
    await runRaven(
      {
        config,
        logger,
        client,
        session,
        onListening: (opsUrl) => {
          process.stdout.write(
            `Raven dev: everything on this machine\n` +
              `  Kubernetes API:  ${api.url}   kubeconfig ${kubeconfigOut}\n` +
              (sim
                ? `  OpenStack (sim): ${sim.url}   clouds.yaml .raven/clouds.yaml (cloud raven-sim)\n`
                : `  OpenStack:       cloud ${cloud.name} (${cloud.source})\n`) +
              (sim && config.floatingIpNetworkId
                ? `  floating IPs:    network ${DEV_EXTERNAL_NETWORK.name}, ${DEV_EXTERNAL_NETWORK.cidr} (TEST-NET-3: simulated, routes nowhere)\n`
                : '') +
              `  ops:             ${opsUrl}/healthz  /readyz  /metrics\n` +
              `  cluster:         ${config.clusterId}, nodes ${cluster.nodes.map((n) => n.name).join(', ')}, subnets ${config.subnets.strategy}\n` +
              `Try:\n` +
              `  export KUBECONFIG=${kubeconfigOut}\n` +
              `  kubectl create namespace shop\n` +
              `  kubectl -n shop run web --image=nginx --port=80\n` +
              `  kubectl -n shop get pod web -o jsonpath='{.metadata.annotations.raven\\.openstack\\.org/vif}'\n` +
              `  kubectl -n shop expose pod web --type=LoadBalancer --port=80 && kubectl -n shop get service web\n` +
              (sim ? `  OS_CLIENT_CONFIG_FILE=.raven/clouds.yaml OS_CLOUD=raven-sim openstack port list\n` : '') +
              'Press Ctrl-C to stop.\n',
          );
          startDemo(opsUrl);
        },
      },
      signal,
    );
  } finally {
    await demo;
    await clusterRun.catch(() => undefined);
    await client.close();
    await session.close();
    await sim?.close();
    await api.close();
  }
}

/** Adds `run`, `dev`, `plan` and `gc` to the `raven` command line. */
export function addRavenCommands(program: Command): void {
  addConfigFlags(
    program
      .command('run')
      .description(
        'the controller, against a real cluster (kubeconfig or in-cluster) and a real OpenStack (clouds.yaml / OS_*)',
      ),
  ).action((opts: OptionValues) => runCommand(opts));
  addConfigFlags(
    program
      .command('dev')
      .description(
        'everything on one machine: embedded API server, cluster simulator, OpenStack simulator (or the configured cloud) and the controller',
      )
      .addOption(new Option('--api-port <port>', 'port of the embedded API server').default('6443'))
      .addOption(new Option('--kubeconfig-out <path>', 'write the kubeconfig here').default('.raven/kubeconfig'))
      .addOption(
        new Option(
          '--demo',
          'once ready, create namespace demo with 3 pods and a LoadBalancer service, wait for them to converge and print the result',
        ),
      )
      .addOption(
        new Option('--demo-timeout <seconds>', 'how long --demo waits before it says which step is missing')
          .default('60')
          .argParser(positiveSeconds),
      ),
  ).action((opts: OptionValues) => devCommand(opts));
  addConfigFlags(
    program
      .command('plan')
      .description(
        'dry run: read the cluster and the cloud, print what Raven would create and delete; changes nothing',
      ),
  ).action((opts: OptionValues) => planCommand(load(opts)));
  addConfigFlags(
    program
      .command('gc')
      .description('list (and with --yes delete) cloud resources tagged for this cluster whose owner is gone')
      .option('--yes', 'delete them')
      .option(
        '--teardown',
        'the cluster is gone: every resource of it, its router and networks too (without asking Kubernetes)',
      ),
  ).action((opts: OptionValues) => gcCommand(load(opts), { yes: opts.yes === true, teardown: opts.teardown === true }));
}
