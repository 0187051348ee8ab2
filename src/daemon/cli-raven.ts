import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, OptionValues } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { addConfigFlags, configFromFlags, describeConfig, loadRavenConfig, type RavenConfig } from './config/index.ts';
import { DEV_SERVICE_CIDR } from './dev-network.ts';
import { createLogger } from './logger.ts';
import { shutdownSignal } from './signals.ts';

// Each command imports what it runs when it runs: `raven run` never loads the API server, the simulators, the cluster
// simulator, raven-cni or `plan`, and their code never takes room in the controller's memory.

function load(opts: OptionValues, env: NodeJS.ProcessEnv = process.env): RavenConfig {
  return loadRavenConfig({ file: opts.config as string | undefined, env, flags: configFromFlags(opts) });
}

async function runCommand(opts: OptionValues): Promise<void> {
  const config = load(opts);
  const logger = createLogger(config.logLevel);
  logger.info({ config: describeConfig(config) }, 'raven run');
  const { runRaven } = await import('./run-raven.ts');
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
  RAVEN_SERVICE_SUBNET_CIDR: DEV_SERVICE_CIDR,
  RAVEN_LEADER_ELECT: 'false',
  RAVEN_OPS_PORT: '0',
};

async function devCommand(opts: OptionValues): Promise<void> {
  const config = load(opts, { ...devDefaults, ...process.env });
  const logger = createLogger(config.logLevel);
  const signal = shutdownSignal();
  mkdirSync('.raven', { recursive: true });
  const dataplane = opts.dataplane ? await devDataplane(String(opts.dataplane)) : undefined;
  const { composeDev } = await import('./dev.ts');
  const realCloud = Boolean(config.openstack.cloud ?? process.env.OS_CLOUD ?? process.env.OS_AUTH_URL);
  // What dev makes in a cloud that outlives it goes with it, unless asked to stay (the simulator's goes anyway).
  const cleanup = realCloud && !dataplane && opts.cleanup !== false;
  const { manager, banner, notice } = await composeDev({
    dataplane,
    config,
    logger,
    apiPort: Number(opts.apiPort),
    kubeconfigOut: opts.kubeconfigOut as string,
    cloudsYamlOut: '.raven/clouds.yaml',
    realCloud,
    cleanup,
    demo: opts.demo
      ? {
          timeoutMs: Number(opts.demoTimeout) * 1000,
          out: (text) => process.stdout.write(text),
          err: (text) => process.stderr.write(text),
        }
      : undefined,
    signal,
  });
  if (notice) process.stderr.write(notice);
  process.stdout.write(banner);
  try {
    await manager.start(signal);
  } finally {
    if (cleanup) {
      process.stdout.write(
        `raven dev: deleting what cluster ${config.clusterId} made in the cloud (Ctrl-C again leaves it there)\n`,
      );
      const { gcCommand } = await import('./cli-plan.ts');
      await gcCommand(config, { yes: true, teardown: true });
    }
  }
}

async function nodeCommand(opts: OptionValues): Promise<void> {
  const logger = createLogger(String(opts.logLevel));
  const { runNode } = await import('./run-node.ts');
  await runNode(
    { conflist: String(opts.conflist), socket: opts.socket as string | undefined, logger },
    shutdownSignal(),
  );
}

/** `raven dev --dataplane`: the rig named by its env file, and a plugin directory with raven-cni in it. Root only. */
async function devDataplane(envFile: string) {
  const { assertCanRunDataplane } = await import('../cluster-sim/index.ts');
  assertCanRunDataplane();
  const { ravenCniDir, readDataplaneRig } = await import('./dataplane.ts');
  const rig = await readDataplaneRig(envFile);
  return { rig, pluginDir: await ravenCniDir('.raven/cni-bin'), nodeSocket: resolve('.raven/raven-node.sock') };
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
      .addOption(
        new Option('--api-port <port>', 'port of the embedded API server (0 picks a free one)').default('6443'),
      )
      .addOption(new Option('--kubeconfig-out <path>', 'write the kubeconfig here').default('.raven/kubeconfig'))
      .addOption(
        new Option(
          '--demo',
          'once ready, create namespace demo with 3 pods and a LoadBalancer service, wait for them to converge and print the result',
        ),
      )
      .addOption(
        new Option(
          '--dataplane [env-file]',
          'root: run the pods on the real Neutron dataplane started by `npm run dataplane:start` (its env file)',
        )
          .preset('.raven/dataplane/env')
          // The demo ends with a LoadBalancer Service, and the rig has no Octavia.
          .conflicts('demo'),
      )
      .addOption(
        new Option('--demo-timeout <seconds>', 'how long --demo waits before it says which step is missing')
          .default('60')
          .argParser(positiveSeconds),
      )
      .addOption(
        new Option(
          '--cleanup',
          'with a real cloud (OS_CLOUD, OS_AUTH_URL, --os-cloud): on exit, delete everything of the dev cluster there, as `raven gc --teardown --yes` (default: on)',
        ),
      )
      .addOption(new Option('--no-cleanup', 'with a real cloud: leave what dev made there on exit')),
    'dev',
    devDefaults,
  ).action((opts: OptionValues) => devCommand(opts));
  program
    .command('node')
    .description(
      "raven-cni's daemon on one node: serves the plugin's calls on a unix socket with long-lived Kubernetes and Neutron connections",
    )
    .addOption(
      new Option('--conflist <file>', "the node's CNI configuration list (raven-cni's entry)").default(
        '/etc/cni/net.d/10-raven.conflist',
      ),
    )
    .addOption(new Option('--socket <path>', "the unix socket (default: the entry's daemonSocket)"))
    .addOption(new Option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent').default('info'))
    .action((opts: OptionValues) => nodeCommand(opts));
  addConfigFlags(
    program
      .command('plan')
      .description(
        'dry run: Raven itself on the cluster and the cloud, its writes recorded and not sent, until quiet; prints what it would create, change and delete; changes nothing',
      )
      .addOption(
        new Option('--timeout <seconds>', 'how long the dry run may take before it prints what it has')
          .default('60')
          .argParser(positiveSeconds),
      ),
    'plan',
  ).action(async (opts: OptionValues) =>
    (await import('./cli-plan.ts')).planCommand(load(opts), { timeoutMs: Number(opts.timeout) * 1000 }),
  );
  addConfigFlags(
    program
      .command('gc')
      .description('list (and with --yes delete) cloud resources tagged for this cluster whose owner is gone')
      .option('--yes', 'delete them')
      .option(
        '--teardown',
        'the cluster is gone: every resource of it, its router and networks too (without asking Kubernetes)',
      ),
    'gc',
  ).action(async (opts: OptionValues) =>
    (await import('./cli-plan.ts')).gcCommand(load(opts), { yes: opts.yes === true, teardown: opts.teardown === true }),
  );
}
