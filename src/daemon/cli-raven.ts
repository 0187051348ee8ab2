import { mkdirSync } from 'node:fs';
import type { Command, OptionValues } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { addConfigFlags, configFromFlags, describeConfig, loadRavenConfig, type RavenConfig } from './config/index.ts';
import { composeDev, DEV_SERVICE_CIDR } from './dev.ts';
import { createLogger } from './logger.ts';
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
  RAVEN_SERVICE_SUBNET_CIDR: DEV_SERVICE_CIDR,
  RAVEN_LEADER_ELECT: 'false',
  RAVEN_OPS_PORT: '0',
};

async function devCommand(opts: OptionValues): Promise<void> {
  const config = load(opts, { ...devDefaults, ...process.env });
  const logger = createLogger(config.logLevel);
  const signal = shutdownSignal();
  mkdirSync('.raven', { recursive: true });
  const { manager, banner } = await composeDev({
    config,
    logger,
    apiPort: Number(opts.apiPort),
    kubeconfigOut: opts.kubeconfigOut as string,
    cloudsYamlOut: '.raven/clouds.yaml',
    realCloud: Boolean(config.openstack.cloud ?? process.env.OS_CLOUD ?? process.env.OS_AUTH_URL),
    demo: opts.demo
      ? {
          timeoutMs: Number(opts.demoTimeout) * 1000,
          out: (text) => process.stdout.write(text),
          err: (text) => process.stderr.write(text),
        }
      : undefined,
    signal,
  });
  process.stdout.write(banner);
  await manager.start(signal);
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
