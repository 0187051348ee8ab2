import { CONFIG_FILE_ENV, configFields, fallbackEnv, flagName, type FieldKind } from './fields.ts';
import { defaultAt, type RavenConfig, type SubnetChoice } from './schema.ts';

/** One line per subject, what Raven will do, for the start-up log. */
export type ConfigDescription = Readonly<Record<string, string | number | boolean>>;

function subnet(choice: SubnetChoice, created: string): string {
  return choice.subnetId !== undefined
    ? `existing subnet ${(choice.subnetIds ?? [choice.subnetId]).join(', ')}`
    : choice.cidr !== undefined
      ? `${created} ${(choice.cidrs ?? [choice.cidr]).join(', ')}`
      : 'none';
}

/** `/24 carved from 10.244.0.0/16, /64 carved from fd00:10:244::/56`. */
function carved(ns: RavenConfig['subnets']['namespace']): string {
  const ranges = ns.cidrs ?? (ns.cidr !== undefined ? [ns.cidr] : []);
  if (ranges.length === 0) return `/${ns.prefixLength} carved from ?`;
  return ranges.map((r) => `/${r.includes(':') ? ns.ipv6PrefixLength : ns.prefixLength} carved from ${r}`).join(', ');
}

/**
 * The configuration as a person reads it, for the start-up log line. It holds no secrets (those live in clouds.yaml
 * and the kubeconfig, which the config only names).
 *
 * @example
 * logger.info({ config: describeConfig(config) }, 'configuration');
 */
export function describeConfig(config: RavenConfig): ConfigDescription {
  const k = config.kubernetes;
  const context = k.context !== undefined ? `, context ${k.context}` : '';
  const s = config.subnets;
  const le = config.leaderElection;
  return {
    clusterId: config.clusterId,
    kubernetes: k.inCluster
      ? 'in-cluster service account'
      : k.kubeconfig !== undefined
        ? `kubeconfig ${k.kubeconfig}${context}`
        : `default kubeconfig (KUBECONFIG, ~/.kube/config)${context}`,
    kubeApiRate: `${k.qps} qps, burst ${k.burst}`,
    openstack:
      `${config.openstack.cloud !== undefined ? `cloud ${config.openstack.cloud}` : 'OS_CLOUD / OS_* variables'}; ` +
      `concurrency network ${config.openstack.concurrency.network}, load-balancer ${config.openstack.concurrency.loadBalancer}; timeout ${config.openstack.timeoutMs} ms`,
    subnets:
      s.strategy === 'shared'
        ? `shared: ${subnet(s.shared, 'network and subnet created with')}`
        : `per namespace: ${s.namespace.subnetPoolId !== undefined ? `subnets from subnet pool ${(s.namespace.subnetPoolIds ?? [s.namespace.subnetPoolId]).join(', ')}` : carved(s.namespace)}`,
    serviceSubnet: subnet(config.serviceSubnet, 'created with'),
    router:
      config.router.id !== undefined
        ? `existing ${config.router.id}`
        : `created${config.router.externalNetworkId !== undefined ? `, gateway on ${config.router.externalNetworkId}` : ', no gateway'}`,
    floatingIpNetwork: config.floatingIpNetworkId ?? 'none (no floating IPs)',
    securityGroups: config.securityGroups.length > 0 ? config.securityGroups.join(',') : "the project's default",
    emulateKubeProxy: config.emulateKubeProxy,
    translations: Object.entries(config.translations)
      .filter(([, on]) => on)
      .map(([kind]) => kind)
      .join(', '),
    workers: `namespaces ${config.workers.namespaces}, pods ${config.workers.pods}, services ${config.workers.services}`,
    resyncPeriodSeconds: config.resyncPeriodSeconds,
    gc: `every ${config.gc.intervalSeconds} s, grace ${config.gc.graceSeconds} s`,
    leaderElection: le.enabled
      ? `lease ${le.namespace}/${le.name} as ${le.identity} (${le.leaseDurationSeconds}/${le.renewDeadlineSeconds}/${le.retryPeriodSeconds} s)`
      : 'off (single replica)',
    ops: `${config.ops.host.includes(':') ? `[${config.ops.host}]` : config.ops.host}:${config.ops.port}`,
    logLevel: config.logLevel,
  };
}

const kindNames: Record<FieldKind, string> = {
  string: 'string',
  int: 'integer',
  number: 'number',
  bool: 'boolean',
  list: 'list',
};

function defaultText(path: string): string {
  const d = defaultAt(path);
  if (d.required) return '**required**';
  const value = d.value;
  if (value === undefined) return '—';
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * The reference table of every setting (markdown): file path, type, default, variable, flag, meaning. README.md in
 * this folder holds it (a test keeps the two in step).
 */
export function configReference(): string {
  const rows = configFields.map(
    (f) =>
      `| \`${f.path}\` | ${kindNames[f.kind]} | ${defaultText(f.path)} | ${f.env ? `\`${f.env}\`` : ''} | ` +
      `${f.flag ? `\`${flagName(f)!}\`${f.negatable ? `, \`${flagName(f)!.replace(/^--/, '--no-')}\`` : ''}` : ''} | ${cell(f.doc)} |`,
  );
  const fallbacks = Object.entries(fallbackEnv)
    .map(([name, path]) => `\`${name}\` (→ \`${path}\`)`)
    .join(', ');
  return [
    '| setting (file) | type | default | environment | flag | meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Also read: \`${CONFIG_FILE_ENV}\` (the file, when \`--config\` is not given); ${fallbacks}, only when nothing else sets the setting; ` +
      '`KUBECONFIG` and `KUBERNETES_SERVICE_HOST` (by the Kubernetes connection); `OS_CLOUD`, `OS_CLIENT_CONFIG_FILE` and `OS_*` (by the OpenStack cloud loader).',
  ].join('\n');
}
