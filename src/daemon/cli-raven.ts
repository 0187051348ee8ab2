import { existsSync } from 'node:fs';
import type { Command, OptionValues } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import {
  addConfigFlags,
  CONFIG_FILE_ENV,
  configFromFlags,
  describeConfig,
  loadRavenConfig,
  type ConfigPurpose,
  type RavenConfig,
} from './config/index.ts';
import { createLogger, resolveLogFormat } from './logger.ts';
import { shutdownSignal } from './signals.ts';

/** A flag's whole number of seconds, at least 1. */
export function positiveSeconds(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('must be a whole number of seconds ≥ 1');
  return value;
}

// Each command imports what it runs when it runs: `raven run` never loads raven-cni or `plan`, and their code never
// takes room in the controller's memory.

/** A command's configuration: its flags over `env` over the config file. */
export function loadCommandConfig(
  opts: OptionValues,
  env: NodeJS.ProcessEnv = process.env,
  purpose: ConfigPurpose = 'daemon',
): RavenConfig {
  return loadRavenConfig({ file: opts.config as string | undefined, env, flags: configFromFlags(opts), purpose });
}

/** Where `raven dev` keeps the settings it runs with while it runs (relative to its directory), for plan and gc. */
export const DEV_SETTINGS_FILE = '.raven/dev/config.yaml';

/**
 * `raven plan` and `raven gc`: with no config file given (`--config`, `RAVEN_CONFIG`), the settings of a `raven dev`
 * running in this directory when there is one (said on stderr), under the environment and flags as usual. `gc` is
 * not asked for the ranges Raven would create: it never reads them.
 */
export function loadToolConfig(
  command: 'plan' | 'gc',
  opts: OptionValues,
  env: NodeJS.ProcessEnv = process.env,
): RavenConfig {
  const purpose = command === 'gc' ? 'gc' : 'daemon';
  if (opts.config !== undefined || env[CONFIG_FILE_ENV]?.trim() || !existsSync(DEV_SETTINGS_FILE))
    return loadCommandConfig(opts, env, purpose);
  process.stderr.write(
    `raven ${command}: using the settings of raven dev in ${DEV_SETTINGS_FILE} (--config for others)\n`,
  );
  return loadRavenConfig({ file: DEV_SETTINGS_FILE, env, flags: configFromFlags(opts), purpose });
}

async function runCommand(opts: OptionValues): Promise<void> {
  const config = loadCommandConfig(opts);
  const logger = createLogger(config.logLevel, resolveLogFormat(config.logFormat, false));
  logger.info({ config: describeConfig(config) }, 'raven run');
  const { runRaven } = await import('./run-raven.ts');
  await runRaven(
    { config, logger, onListening: (url) => logger.info({ url }, 'ops endpoints: /healthz /readyz /metrics') },
    shutdownSignal(),
  );
}

async function nodeCommand(opts: OptionValues): Promise<void> {
  const logger = createLogger(String(opts.logLevel));
  const { runNode } = await import('./run-node.ts');
  await runNode(
    { conflist: String(opts.conflist), socket: opts.socket as string | undefined, logger },
    shutdownSignal(),
  );
}

/** Adds `run`, `node`, `plan` and `gc` to the `raven` command line. */
export function addRavenCommands(program: Command): void {
  addConfigFlags(
    program
      .command('run')
      .description(
        'the controller, against a real cluster (kubeconfig or in-cluster) and a real OpenStack (clouds.yaml / OS_*)',
      ),
  ).action((opts: OptionValues) => runCommand(opts));
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
    (await import('./cli-plan.ts')).planCommand(loadToolConfig('plan', opts), {
      timeoutMs: Number(opts.timeout) * 1000,
    }),
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
    (await import('./cli-plan.ts')).gcCommand(loadToolConfig('gc', opts), {
      yes: opts.yes === true,
      teardown: opts.teardown === true,
    }),
  );
}
