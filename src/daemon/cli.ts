import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { errorMessage, RavenError, ravenVersion } from '../core/index.ts';
import { createLogger } from './logger.ts';
import { addRavenCommands } from './cli-raven.ts';
import { untilShutdown } from './signals.ts';

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
  const { parseTokenFile } = await import('../apiserver/index.ts');
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

/** The `raven` command line. */
export function buildCli(): Command {
  const program = new Command('raven')
    .description('Keeps OpenStack networking (Neutron, Octavia) in step with a Kubernetes cluster.')
    .version(ravenVersion, '-v, --version')
    .showHelpAfterError();
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
    .option('--password-file <path>', 'read the admin/demo password from a file (random when absent)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .action(simOpenStackCommand);
  addRavenCommands(program);
  return program;
}

/** Entry point: runs the CLI; clear one-line errors, exit code 2 for bad input. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    const code = err instanceof RavenError ? ` [${err.code}]` : '';
    process.stderr.write(`raven: error${code}: ${errorMessage(err)}\n`);
    process.exitCode = 2;
  }
}
