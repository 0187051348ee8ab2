// The development tools' `raven` command: the product's command line (src/daemon/cli.ts) plus `raven apiserver`,
// `raven sim openstack` and `raven dev`, which run the embedded API server, the simulators and the controller on one
// machine. Each command imports what it runs when it runs.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command, type OptionValues } from 'commander';
import { RavenError } from '../../../src/core/index.ts';
import { buildCli, main as productMain } from '../../../src/daemon/cli.ts';
import { DEV_SETTINGS_FILE, loadCommandConfig, positiveSeconds } from '../../../src/daemon/cli-raven.ts';
import { addConfigFlags, configFileText } from '../../../src/daemon/config/index.ts';
import { createLogger, resolveLogFormat } from '../../../src/daemon/logger.ts';
import { shutdownSignal, untilShutdown } from '../../../src/daemon/signals.ts';
import { DEV_SERVICE_CIDR } from './dev-network.ts';

function integer(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

interface ApiServerFlags {
  host: string;
  port: number;
  token?: string;
  tokenFile?: string;
  tokenAuthFile?: string;
  authorizationMode: 'AlwaysAllow' | 'RBAC';
  kubeconfigOut: string;
  dataDir?: string;
  serviceCidr: string;
  nodePortRange: string;
  historyEvents: number;
  bookmarkInterval: number;
  watchTimeout: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  tlsCaFile?: string;
  insecureHttp?: boolean;
  enableFaultApi?: boolean;
  podGracefulDeletion?: boolean;
  logLevel: string;
}

async function apiserverCommand(flags: ApiServerFlags): Promise<void> {
  if ((flags.tlsCertFile === undefined) !== (flags.tlsKeyFile === undefined)) {
    throw new RavenError('CONFIG_INVALID', '--tls-cert-file and --tls-key-file go together');
  }
  const logger = createLogger(flags.logLevel);
  // Each command loads what it runs when it runs (here the API server): `raven run` never holds the others' code.
  const { runApiServer } = await import('./run-apiserver.ts');
  const { parseTokenFile } = await import('@raven/apiserver');
  const token = flags.token ?? (flags.tokenFile ? (await readFile(flags.tokenFile, 'utf8')).trim() : undefined);
  const server = await runApiServer({
    host: flags.host,
    port: flags.port,
    ...(token ? { token } : {}),
    ...(flags.tokenAuthFile ? { tokenUsers: parseTokenFile(await readFile(flags.tokenAuthFile, 'utf8')) } : {}),
    authorizationMode: flags.authorizationMode,
    kubeconfigOut: flags.kubeconfigOut,
    ...(flags.dataDir ? { dataDir: flags.dataDir } : {}),
    serviceCidr: flags.serviceCidr,
    nodePortRange: flags.nodePortRange,
    historyLimit: flags.historyEvents,
    bookmarkIntervalMs: flags.bookmarkInterval * 1000,
    watchTimeoutSeconds: flags.watchTimeout,
    tls: flags.insecureHttp
      ? 'none'
      : flags.tlsCertFile && flags.tlsKeyFile
        ? {
            certFile: flags.tlsCertFile,
            keyFile: flags.tlsKeyFile,
            ...(flags.tlsCaFile ? { caFile: flags.tlsCaFile } : {}),
          }
        : 'self-signed',
    enableFaultApi: flags.enableFaultApi === true,
    podGracefulDeletion: flags.podGracefulDeletion === true,
    logger,
  });
  process.stdout.write(
    `Raven API server listening on ${server.url}\n` +
      `  kubeconfig: ${flags.kubeconfigOut}\n` +
      `  try:        kubectl --kubeconfig ${flags.kubeconfigOut} get namespaces\n` +
      (flags.dataDir ? `  state:      saved to ${flags.dataDir} on exit\n` : '') +
      (flags.enableFaultApi ? '  WARNING:    the test-only fault API is enabled under /_raven/faults/\n' : '') +
      'Press Ctrl-C to stop.\n',
  );
  const signal = await untilShutdown();
  logger.info({ signal }, 'stopping');
  await server.close();
}

interface SimOpenStackFlags {
  host: string;
  port: number;
  auth: 'keystone' | 'noauth';
  cloudsYamlOut: string;
  provisioningDelayMs: number;
  octaviaDefaultProvider: 'amphora' | 'ovn' | 'noop_driver';
  passwordFile?: string;
  logLevel: string;
}

async function simOpenStackCommand(flags: SimOpenStackFlags): Promise<void> {
  const logger = createLogger(flags.logLevel);
  const password = flags.passwordFile ? (await readFile(flags.passwordFile, 'utf8')).trim() : undefined;
  const { runOpenStackSim } = await import('./run-openstack-sim.ts');
  const sim = await runOpenStackSim({
    host: flags.host,
    port: flags.port,
    auth: flags.auth,
    cloudsYamlOut: flags.cloudsYamlOut,
    provisioningDelayMs: flags.provisioningDelayMs,
    octaviaDefaultProvider: flags.octaviaDefaultProvider,
    ...(password ? { password } : {}),
    logger,
  });
  const cloud = flags.auth === 'keystone' ? 'raven-sim' : 'raven-sim-noauth';
  process.stdout.write(
    `Raven OpenStack simulator (${flags.auth}) listening on ${sim.url}\n` +
      (flags.auth === 'keystone'
        ? `  Keystone:   ${sim.keystoneUrl}  (users admin, demo; password in the clouds.yaml)\n`
        : '') +
      `  Neutron:    ${sim.neutronUrl}\n` +
      `  Octavia:    ${sim.octaviaUrl}\n` +
      `  clouds.yaml: ${flags.cloudsYamlOut}  (cloud ${cloud}${flags.auth === 'keystone' ? ', and raven-sim-demo' : ''})\n` +
      `  try:        OS_CLIENT_CONFIG_FILE=${flags.cloudsYamlOut} OS_CLOUD=${cloud} openstack network list\n` +
      `  test API:   ${sim.url}/_sim/counters, ${sim.url}/_sim/faults/rules\n` +
      'Press Ctrl-C to stop.\n',
  );
  const signal = await untilShutdown();
  logger.info({ signal }, 'stopping');
  await sim.close();
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
  const config = loadCommandConfig(opts, { ...devDefaults, ...process.env });
  // A person watches raven dev: readable lines on a terminal, so the banner is not lost among JSON.
  const logger = createLogger(config.logLevel, resolveLogFormat(config.logFormat, true));
  const signal = shutdownSignal();
  mkdirSync('.raven', { recursive: true });
  const dataplane = opts.dataplane ? await devDataplane(String(opts.dataplane)) : undefined;
  const { composeDev } = await import('./dev.ts');
  const realCloud = Boolean(config.openstack.cloud ?? process.env.OS_CLOUD ?? process.env.OS_AUTH_URL);
  // What dev makes in a cloud that outlives it goes with it, unless asked to stay (the simulator's goes anyway).
  const cleanup = realCloud && !dataplane && opts.cleanup !== false;
  const { manager, banner, notice, settings } = await composeDev({
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
  // `raven plan` and `raven gc` run here find these settings while dev runs (removed on exit: never a stale cluster).
  mkdirSync(dirname(DEV_SETTINGS_FILE), { recursive: true });
  const header = [`raven dev's settings while it runs (pid ${process.pid}); raven plan and raven gc read them here.`];
  writeFileSync(DEV_SETTINGS_FILE, configFileText(settings, header), { mode: 0o600 });
  try {
    await manager.start(signal);
  } finally {
    rmSync(DEV_SETTINGS_FILE, { force: true });
    if (cleanup) {
      process.stdout.write(
        `raven dev: deleting what cluster ${config.clusterId} made in the cloud (Ctrl-C again leaves it there)\n`,
      );
      const { gcCommand } = await import('../../../src/daemon/cli-plan.ts');
      await gcCommand(config, { yes: true, teardown: true });
    }
  }
}

/** `raven dev --dataplane`: the rig named by its env file, and a plugin directory with raven-cni in it. Root only. */
async function devDataplane(envFile: string) {
  const { assertCanRunDataplane } = await import('@raven/cluster-sim');
  assertCanRunDataplane();
  const { ravenCniDir, readDataplaneRig } = await import('./dataplane.ts');
  const rig = await readDataplaneRig(envFile);
  return { rig, pluginDir: await ravenCniDir('.raven/cni-bin'), nodeSocket: resolve('.raven/raven-node.sock') };
}

/** Adds the development tools' commands to the `raven` command line: `apiserver`, `sim openstack` and `dev`. */
export function addDevCommands(program: Command): void {
  program
    .command('apiserver')
    .description('run only the embedded Kubernetes-compatible API server (kubectl works against it)')
    .option('--host <address>', 'address to bind (loopback by default)', '127.0.0.1')
    .option('--port <port>', 'port to bind (0 picks a free one)', integer(0, 65535), 6443)
    .addOption(
      new Option('--token <token>', 'bearer token clients must send (generated when absent)').conflicts('tokenFile'),
    )
    .option('--token-file <path>', 'read the bearer token from a file')
    .option('--token-auth-file <path>', 'more users: CSV lines token,user,uid,"group1,group2" (as kube-apiserver)')
    .addOption(
      new Option('--authorization-mode <mode>', 'AlwaysAllow, or RBAC (the stored Roles and bindings)')
        .choices(['AlwaysAllow', 'RBAC'])
        .default('AlwaysAllow'),
    )
    .option('--kubeconfig-out <path>', 'write a kubeconfig for kubectl here', '.raven/kubeconfig')
    .option('--data-dir <dir>', 'load the cluster state from here at start, save it here on exit')
    .option(
      '--service-cidr <cidrs>',
      'range cluster IPs are allocated from; two, comma-separated, one per IP family: dual-stack',
      '10.96.0.0/12',
    )
    .option('--node-port-range <range>', 'range node ports are allocated from', '30000-32767')
    .option(
      '--history-events <n>',
      'events kept for watches; older resourceVersions get 410 Expired',
      integer(1, 10_000_000),
      10_000,
    )
    .option('--bookmark-interval <seconds>', 'how often watch bookmarks are sent', integer(1, 3600), 60)
    .option('--watch-timeout <seconds>', 'watches without timeoutSeconds end after 1–2× this', integer(1, 86_400), 1800)
    .addOption(
      new Option(
        '--tls-cert-file <path>',
        'serve HTTPS with this PEM certificate (default: a self-signed one)',
      ).conflicts('insecureHttp'),
    )
    .option('--tls-key-file <path>', 'PEM private key for --tls-cert-file')
    .option('--tls-ca-file <path>', 'CA to put in the kubeconfig for --tls-cert-file (default: the certificate itself)')
    .option('--insecure-http', 'serve plain HTTP (kubectl will not send its token over it; other clients do)')
    .option(
      '--pod-graceful-deletion',
      'scheduled pods wait out their grace period until deleted again with grace 0 (as by a kubelet)',
    )
    .option('--enable-fault-api', 'TEST ONLY: serve the fault-injection API under /_raven/faults/')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .action(apiserverCommand);
  program
    .command('sim')
    .description('run a simulator')
    .command('openstack')
    .description(
      'run the OpenStack simulator (Keystone, Neutron, Octavia in memory; the openstack CLI works against it)',
    )
    .option('--host <address>', 'address to bind (loopback by default)', '127.0.0.1')
    .option('--port <port>', 'port to bind (0 picks a free one)', integer(0, 65535), 0)
    .addOption(
      new Option('--auth <mode>', 'keystone (tokens required) or noauth')
        .choices(['keystone', 'noauth'])
        .default('keystone'),
    )
    .option(
      '--clouds-yaml-out <path>',
      'write an openstacksdk clouds.yaml here (mode 0600; holds the password)',
      '.raven/clouds.yaml',
    )
    .option('--provisioning-delay-ms <ms>', 'how long Octavia objects stay PENDING_*', integer(0, 600_000), 300)
    .addOption(
      new Option('--octavia-default-provider <name>', "Octavia's provider for load balancers created without one")
        .choices(['amphora', 'ovn', 'noop_driver'])
        .default('amphora'),
    )
    .option('--password-file <path>', 'read the admin/demo password from a file (random when absent)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .action(simOpenStackCommand);
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
          'root: run the pods on the real Neutron dataplane started by `npm run dataplane:start` (its env file; the ' +
            'linuxbridge rig: .raven/dataplane/env)',
        )
          .preset('.raven/dataplane-ovn/env')
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
}

/** The `raven` command line of a source checkout: the product's commands and the development tools'. */
export function buildDevCli(): Command {
  return buildCli(addDevCommands);
}

/** Entry point of the development build (what `bin/raven.js` runs in a checkout). */
export function main(argv: string[]): Promise<void> {
  return productMain(argv, buildDevCli);
}
