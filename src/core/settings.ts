/**
 * Every setting of Raven, declared once: its type, default and validation (zod), and how it is set and documented
 * (its environment variable, flag and meaning, as metadata in {@link settingMeta}). The daemon's config loader
 * (src/daemon/config: env and flag layers, flags' help, error hints, the reference table in its README.md, the
 * `RavenConfig` type) and the reconcilers' `ReconcilerConfig` type are derived from it. Rules that relate settings to
 * each other are in src/daemon/config/checks.ts.
 *
 * It lives in core, below the reconcilers, so that their `ReconcilerConfig` is derived from it too: a pure declaration
 * (zod and data, no I/O), loaded only by those that import this file (core's index does not re-export it).
 */
import { z } from 'zod';
import { cidrProblem, cidrsProblem } from './cidr.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CLUSTER_ID_RE = /^[a-z0-9-]{1,32}$/;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** pino's levels. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/** How log lines are written: see the `logFormat` setting. */
export const logFormats = ['auto', 'json', 'text'] as const;
export type LogFormat = (typeof logFormats)[number];

export const subnetStrategies = ['shared', 'namespace'] as const;
export type SubnetStrategyName = (typeof subnetStrategies)[number];

/** How nodes that are VMs are treated: see the `nested.mode` setting. */
export const nestedModes = ['off', 'auto', 'existing'] as const;
export type NestedMode = (typeof nestedModes)[number];

/** A string checked by `problem` (undefined = fine), with one message per bad value rather than several. */
function checked(problem: (value: string) => string | undefined) {
  return z.string({ error: 'must be a string' }).superRefine((value, ctx) => {
    const p = value === '' ? 'must not be empty' : problem(value);
    if (p !== undefined) ctx.addIssue({ code: 'custom', message: p, input: value });
  });
}

const text = () => checked(() => undefined);
/** An Octavia provider driver's name (an entry point name: `ovn`, `amphora`, `noop_driver`). */
const providerName = () =>
  checked((v) => (/^[a-z][a-z0-9_-]{0,63}$/.test(v) ? undefined : `${JSON.stringify(v)} is not a provider name`));
const openstackId = () =>
  checked((v) => (UUID_RE.test(v) ? undefined : `${JSON.stringify(v)} is not an OpenStack id (a UUID)`));
const cidr = (subnet: boolean) => checked((v) => cidrProblem(v, { subnet }));
/** Dual-stack ranges: one or two subnet CIDRs, one per IP family (each checked as {@link cidr}). */
const cidrList = () =>
  z.array(cidr(true), { error: 'must be a list of CIDRs (one per IP family)' }).superRefine((list, ctx) => {
    const p = cidrsProblem(list);
    if (p !== undefined) ctx.addIssue({ code: 'custom', message: p, input: list });
  });
/** Dual-stack existing subnets (or subnet pools): one or two distinct ids, one per IP family (Neutron says which). */
const idList = (what: 'subnet' | 'subnet pool') =>
  z
    .array(openstackId(), { error: `must be a list of OpenStack ${what} ids (one per IP family)` })
    .superRefine((list, ctx) => {
      const p =
        list.length === 0 || list.length > 2
          ? `must list one or two ${what}s (one per IP family), not ${list.length}`
          : list[0] === list[1]
            ? `lists the same ${what} twice`
            : undefined;
      if (p !== undefined) ctx.addIssue({ code: 'custom', message: p, input: list });
    });
const dnsLabel = () =>
  checked((v) =>
    v.length <= 63 && DNS_LABEL_RE.test(v)
      ? undefined
      : `${JSON.stringify(v)} must be a DNS label (lower-case letters, digits, '-', at most 63)`,
  );
const dnsSubdomain = () =>
  checked((v) =>
    v.length <= 253 && DNS_SUBDOMAIN_RE.test(v)
      ? undefined
      : `${JSON.stringify(v)} must be a DNS subdomain (lower-case letters, digits, '-', '.')`,
  );
const clusterId = () =>
  z.string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') }).superRefine((v, ctx) => {
    if (!CLUSTER_ID_RE.test(v))
      ctx.addIssue({ code: 'custom', message: "must be 1–32 lower-case letters, digits or '-'", input: v });
    else if (v.startsWith('-') || v.endsWith('-'))
      ctx.addIssue({ code: 'custom', message: 'must start and end with a letter or digit', input: v });
  });

function int(min: number, max?: number) {
  const error = max === undefined ? `must be an integer ≥ ${min}` : `must be an integer from ${min} to ${max}`;
  const base = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}
const positive = () => z.number({ error: 'must be a number > 0' }).positive({ error: 'must be a number > 0' });
const bool = () => z.boolean({ error: 'must be true or false' });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

/** A schema without its default or optionality: what a value must be. */
export const unwrap = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault || schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;

/** The commands that take the configuration flags. */
export type ConfigCommand = 'run' | 'dev' | 'plan' | 'gc';

/** How a setting is set and what it means, besides its type and default. */
export interface SettingMeta {
  /** The environment variable that sets it, if any. */
  env?: string;
  /** The commander flag that sets it, e.g. `--workers-pods <n>`. */
  flag?: string;
  /** Booleans: also register `--no-<flag>` (and the value is undefined unless one of them is given). */
  negatable?: boolean;
  /** Commands that never read it, so their help does not offer its flag (`run` and `dev` read every setting). */
  unreadBy?: readonly ConfigCommand[];
  /** Its meaning, in markdown: the reference table's, and the start of the flag's help. */
  doc: string;
}

/** Each setting's metadata, keyed by its schema (a section's holds only what its settings inherit: `unreadBy`). */
export const settingMeta = z.registry<SettingMeta>();
export const sectionMeta = z.registry<Pick<SettingMeta, 'unreadBy'>>();

declare const declared: unique symbol;
/** A schema that went through {@link setting} or {@link section}: a section only holds these, so none lacks a doc. */
type Declared<T extends z.ZodType = z.ZodType> = T & { readonly [declared]: true };

/** A setting: its schema (type, validation, default) and how it is set and documented. */
function setting<T extends z.ZodType>(schema: T, meta: SettingMeta): Declared<T> {
  settingMeta.add(schema, meta);
  return schema as Declared<T>;
}

/**
 * A nested group of settings; absent means all its defaults. (Every field of a section is optional or defaulted, so
 * `{}` is a valid input; the generic type cannot see that, hence the cast.)
 */
function section<T extends Record<string, Declared>>(shape: T, meta?: Pick<SettingMeta, 'unreadBy'>) {
  const schema = z.strictObject(shape, { error: 'must be a mapping of settings' }).prefault({} as never);
  if (meta) sectionMeta.add(schema, meta);
  return schema as Declared<typeof schema>;
}

/** The running controller's own settings: `plan` and `gc` read the cloud once and log nothing. */
const CONTROLLER = ['plan', 'gc'] as const;
/**
 * Settings `gc` does not read (it makes nothing). It keeps the subnet flags, though its validation asks only for the
 * shared strategy's (checks.ts, purpose `gc`): scripts that pass `run`'s flags to `gc` keep working.
 */
const NOT_GC = ['gc'] as const;

/**
 * The settings (camelCase keys as in the file; unknown keys are errors, so a typo is never silently ignored). Defaults
 * are filled in; settings whose default depends on the environment (`kubernetes.inCluster`, `router.create`,
 * `leaderElection.identity`, `floatingIpNetworkId`) are left unset here and resolved by `loadRavenConfig`.
 */
export const settingsSchema = z.strictObject({
  clusterId: setting(clusterId(), {
    env: 'RAVEN_CLUSTER_ID',
    flag: '--cluster-id <id>',
    doc: "**Required.** Names this cluster in every cloud resource (tag `raven.cluster=<id>`, names `raven/<id>/…`). 1–32 lower-case letters, digits or '-'. Changing it orphans everything tagged with the old id (`raven gc` with the old id cleans up).",
  }),
  kubernetes: section({
    kubeconfig: setting(text().optional(), {
      flag: '--kubeconfig <path>',
      doc: "kubeconfig file. Unset: `KUBECONFIG`, then `~/.kube/config`, then the pod's service account.",
    }),
    context: setting(text().optional(), {
      flag: '--context <name>',
      doc: "kubeconfig context instead of the file's `current-context`.",
    }),
    inCluster: setting(bool().optional(), {
      doc: "Use the pod's service account. Unset: on when `KUBERNETES_SERVICE_HOST` is set and no kubeconfig is given (neither `kubernetes.kubeconfig` nor `KUBECONFIG`).",
    }),
    qps: setting(positive().default(50), {
      flag: '--kube-api-qps <qps>',
      doc: 'Kubernetes API requests per second (token bucket), as client-go `QPS`.',
    }),
    burst: setting(int(1).default(100), { flag: '--kube-api-burst <n>', doc: 'Kubernetes API burst above `qps`.' }),
  }),
  openstack: section({
    cloud: setting(text().optional(), {
      flag: '--os-cloud <name>',
      doc: 'Cloud in clouds.yaml. Unset: `OS_CLOUD`, else the `OS_*` variables, else the only cloud in clouds.yaml (as the `openstack` CLI).',
    }),
    cloudsFile: setting(text().optional(), {
      doc: 'The clouds.yaml to read `cloud` from. Unset: `OS_CLIENT_CONFIG_FILE`, else `./clouds.yaml`, `~/.config/openstack/clouds.yaml`, `/etc/openstack/clouds.yaml` (as the `openstack` CLI).',
    }),
    concurrency: section({
      network: setting(int(1).default(8), {
        doc: "Neutron requests in flight at most; a quarter of them are kept for a pod's claim or port create.",
      }),
      loadBalancer: setting(int(1).default(8), { doc: 'Octavia requests in flight at most.' }),
    }),
    timeoutMs: setting(int(1).default(60_000), { doc: 'Timeout of one OpenStack request (ms).' }),
  }),
  subnets: section({
    strategy: setting(oneOf(subnetStrategies).default('namespace'), {
      env: 'RAVEN_SUBNET_STRATEGY',
      flag: '--subnet-strategy <strategy>',
      doc: 'How pods get their subnet: `namespace` (a network and subnet per namespace) or `shared` (every pod on one subnet).',
    }),
    shared: section({
      subnetId: setting(openstackId().optional(), {
        env: 'RAVEN_POD_SUBNET_ID',
        flag: '--pod-subnet-id <id>',
        doc: 'Strategy `shared`: an existing pod subnet. Exactly one of `subnetId`, `subnetIds`, `cidr` and `cidrs`.',
      }),
      subnetIds: setting(idList('subnet').optional(), {
        env: 'RAVEN_POD_SUBNET_IDS',
        flag: '--pod-subnet-ids <ids>',
        doc: 'Strategy `shared`, dual-stack: existing pod subnets, one per IP family, on one network (comma-separated in env and flags); the first is the primary family. Raven checks at start that Neutron has them on one network with different IP versions.',
      }),
      cidr: setting(cidr(true).optional(), {
        env: 'RAVEN_POD_SUBNET_CIDR',
        flag: '--pod-subnet-cidr <cidr>',
        doc: 'Strategy `shared`: Raven creates the pod network and subnet with this range (IPv4 or IPv6).',
      }),
      cidrs: setting(cidrList().optional(), {
        env: 'RAVEN_POD_SUBNET_CIDRS',
        flag: '--pod-subnet-cidrs <cidrs>',
        doc: 'Strategy `shared`, dual-stack: one range per IP family (comma-separated in env and flags), e.g. `10.244.0.0/16,fd00:10:244::/64`. Raven makes one network with a subnet per range; each pod port gets an address of each family. The first range is the primary family (the VIF lists it first).',
      }),
    }),
    namespace: section({
      subnetPoolId: setting(openstackId().optional(), {
        env: 'RAVEN_NAMESPACE_SUBNET_POOL',
        flag: '--namespace-subnet-pool <id>',
        doc: 'Strategy `namespace`: a Neutron subnet pool each namespace subnet is allocated from (`prefixLength`, or `ipv6PrefixLength` for an IPv6 pool). Exactly one of `subnetPoolId`, `subnetPoolIds`, `cidr` and `cidrs`.',
      }),
      subnetPoolIds: setting(idList('subnet pool').optional(), {
        env: 'RAVEN_NAMESPACE_SUBNET_POOLS',
        flag: '--namespace-subnet-pools <ids>',
        doc: 'Strategy `namespace`, dual-stack: one Neutron subnet pool per IP family (comma-separated in env and flags); each namespace gets one network with a subnet allocated from each, the first pool the primary family. Two pools of one family are refused (a Warning on the namespace).',
      }),
      cidr: setting(cidr(false).optional(), {
        env: 'RAVEN_NAMESPACE_CIDR',
        flag: '--namespace-cidr <cidr>',
        doc: 'Strategy `namespace`: a range (IPv4 or IPv6) carved into per-namespace subnets of `prefixLength` (`ipv6PrefixLength`). Unset (and no pool): `FLANNEL_NET`.',
      }),
      cidrs: setting(cidrList().optional(), {
        env: 'RAVEN_NAMESPACE_CIDRS',
        flag: '--namespace-cidrs <cidrs>',
        doc: 'Strategy `namespace`, dual-stack: one range per IP family (comma-separated in env and flags), e.g. `10.244.0.0/16,fd00:10:244::/56`. Each namespace gets one network with a subnet carved from each range; the first range is the primary family.',
      }),
      prefixLength: setting(int(1, 32).default(24), {
        env: 'RAVEN_NAMESPACE_PREFIX_LENGTH',
        flag: '--namespace-prefix-length <n>',
        doc: "Prefix length of each IPv4 namespace subnet; from the IPv4 range's prefix to /30.",
      }),
      ipv6PrefixLength: setting(int(1, 128).default(64), {
        env: 'RAVEN_NAMESPACE_IPV6_PREFIX_LENGTH',
        flag: '--namespace-ipv6-prefix-length <n>',
        doc: "Prefix length of each IPv6 namespace subnet; from the IPv6 range's prefix to /126. IPv6 subnets are `dhcpv6-stateful` (Neutron hands out addresses from the pool, any prefix length).",
      }),
    }),
  }),
  serviceSubnet: section({
    subnetId: setting(openstackId().optional(), {
      env: 'RAVEN_SERVICE_SUBNET_ID',
      flag: '--service-subnet-id <id>',
      doc: "An existing subnet Octavia VIPs live on. The VIP address is the Service's clusterIP, so the subnet must cover the cluster's service CIDR (kube-apiserver `--service-cluster-ip-range`). Exactly one of `subnetId`, `subnetIds`, `cidr` and `cidrs` when `translations.services` is on.",
    }),
    subnetIds: setting(idList('subnet').optional(), {
      env: 'RAVEN_SERVICE_SUBNET_IDS',
      flag: '--service-subnet-ids <ids>',
      doc: "Dual-stack: existing subnets Octavia VIPs live on, one per IP family, on one network (comma-separated in env and flags), covering the cluster's service CIDRs; the first is the primary family.",
    }),
    cidr: setting(cidr(true).optional(), {
      env: 'RAVEN_SERVICE_SUBNET_CIDR',
      flag: '--service-subnet-cidr <cidr>',
      doc: "Raven creates the service network and subnet with this range: use the cluster's service CIDR (or a range covering it). Must not overlap the pod range.",
    }),
    cidrs: setting(cidrList().optional(), {
      env: 'RAVEN_SERVICE_SUBNET_CIDRS',
      flag: '--service-subnet-cidrs <cidrs>',
      doc: "Dual-stack: one range per IP family (comma-separated in env and flags), the cluster's service CIDRs (kube-apiserver `--service-cluster-ip-range=<v4>,<v6>`). One service network with a subnet per range; a dual-stack Service gets one load balancer with a VIP on each.",
    }),
  }),
  router: section({
    id: setting(openstackId().optional(), {
      env: 'RAVEN_ROUTER_ID',
      flag: '--router-id <id>',
      doc: 'An existing router the subnets are attached to. Unset: Raven creates one for the cluster.',
    }),
    externalNetworkId: setting(openstackId().optional(), {
      env: 'RAVEN_EXTERNAL_NETWORK_ID',
      flag: '--external-network-id <id>',
      unreadBy: NOT_GC,
      doc: 'External network for the gateway of the router Raven creates.',
    }),
    create: setting(bool().optional(), {
      env: 'RAVEN_ROUTER_CREATE',
      flag: '--router-create',
      negatable: true,
      doc: "Without `router.id`, whether Raven creates the cluster's router `raven/<id>/router` and attaches its subnets to it. Unset: yes, unless the pod subnet is an existing one (`subnets.shared.subnetId` or `subnetIds`) — an operator's subnet is attached only to a router that is configured or asked for.",
    }),
  }),
  floatingIpNetworkId: setting(openstackId().optional(), {
    env: 'RAVEN_FLOATING_IP_NETWORK_ID',
    flag: '--floating-ip-network-id <id>',
    unreadBy: NOT_GC,
    doc: 'External network floating IPs (LoadBalancer services, `externalIPs`) come from. Unset: `router.externalNetworkId`.',
  }),
  floatingIps: section({
    allowExternalIPs: setting(bool().default(true), {
      env: 'RAVEN_ALLOW_EXTERNAL_IPS',
      flag: '--allow-external-ips',
      negatable: true,
      doc: "Services' `spec.externalIPs` get floating IPs. Off (Kubernetes' own advice where users are not trusted, CVE-2020-8554): they are ignored, with a Warning Event.",
    }),
    adoptCidrs: setting(z.array(cidr(false), { error: 'must be a list of CIDRs' }).default([]), {
      env: 'RAVEN_FLOATING_IP_ADOPT_CIDRS',
      doc: 'Floating IPs someone else allocated that a Service may claim (`loadBalancerIP`, `externalIPs`) when their address lies in one of these ranges. Otherwise only a floating IP Raven allocated for that Service, or one tagged `raven.grant=<namespace>/<service>` (or `raven.grant=<namespace>`), is associated; any namespace could claim any address otherwise. Never one Raven holds for another Service.',
    }),
    adoptProjects: setting(z.array(text(), { error: 'must be a list of project ids' }).default([]), {
      env: 'RAVEN_FLOATING_IP_ADOPT_PROJECTS',
      doc: 'Projects whose floating IPs a Service may claim, like `floatingIps.adoptCidrs`.',
    }),
    networks: setting(z.array(openstackId(), { error: 'must be a list of network ids' }).default([]), {
      env: 'RAVEN_FLOATING_IP_NETWORKS',
      doc: 'External networks a Service may name with `loadbalancer.openstack.org/floating-network-id` (besides `floatingIpNetworkId`). Any other network in that annotation is refused with a Warning: a namespace must not allocate from a network the operator did not offer.',
    }),
    allowFreeAddresses: setting(bool().default(false), {
      env: 'RAVEN_FLOATING_IP_ALLOW_FREE_ADDRESSES',
      doc: "A Service may name (`loadBalancerIP`, `externalIPs`) a free address that `floatingIps.grants` does not give its namespace; Raven allocates it only inside an allocation pool of the floating network. Off (the default): a named address is only one kept or held for that Service, a granted floating IP, or one in the namespace's grants — any namespace could otherwise take an address another tenant's DNS still points at.",
    }),
    grants: setting(
      z
        .array(
          z.strictObject(
            { namespace: dnsLabel(), cidrs: z.array(cidr(false), { error: 'must be a list of CIDRs' }) },
            { error: 'must be a mapping with namespace and cidrs' },
          ),
          { error: 'must be a list of {namespace, cidrs}' },
        )
        .default([]),
      {
        doc: "Free addresses a namespace may name (file only): `[{namespace: shop, cidrs: [203.0.113.64/28]}]`. The operator's word: a block may lie outside the allocation pools (addresses kept back for this).",
      },
    ),
    quarantineSeconds: setting(int(0).default(3600), {
      env: 'RAVEN_FLOATING_IP_QUARANTINE_SECONDS',
      doc: "A floating IP Raven allocated and a Service no longer wants is held (allocated, unassociated, tagged for the cluster) for the Service's name this long, so a redeploy gets its address back and no other tenant takes it meanwhile; then the garbage collector frees it. At most one is held per Service name. 0: deleted at once.",
    }),
  }),
  securityGroups: setting(z.array(openstackId(), { error: 'must be a list of security group ids' }).default([]), {
    env: 'RAVEN_SECURITY_GROUPS',
    flag: '--security-groups <ids>',
    unreadBy: NOT_GC,
    doc: "Security group ids every pod port also carries (comma-separated in env and flags). With `translations.networkPolicies` on they are added to the groups a pod's policies give it (they can only allow more); off, they are all a port gets (empty: the project's `default` group).",
  }),
  emulateKubeProxy: setting(bool().default(false), {
    env: 'RAVEN_EMULATE_KUBE_PROXY',
    flag: '--emulate-kube-proxy',
    negatable: true,
    unreadBy: NOT_GC,
    doc: 'ClusterIP services get Octavia load balancers too (LoadBalancer services and `externalIPs` always do).',
  }),
  translations: section({
    namespaces: setting(bool().default(true), {
      env: 'RAVEN_TRANSLATE_NAMESPACES',
      doc: 'Translate Namespaces (networks; needed by pods with strategy `namespace`).',
    }),
    pods: setting(bool().default(true), {
      env: 'RAVEN_TRANSLATE_PODS',
      doc: 'Translate Pods (ports, `raven.openstack.org/vif`).',
    }),
    services: setting(bool().default(true), {
      env: 'RAVEN_TRANSLATE_SERVICES',
      doc: 'Translate Services and their EndpointSlices, or Endpoints where a Service has no slice (load balancers).',
    }),
    networkPolicies: setting(bool().default(true), {
      env: 'RAVEN_TRANSLATE_NETWORK_POLICIES',
      doc: "Translate NetworkPolicies into security groups on the pods' ports (with `translations.pods`); a pod no policy isolates is open. Off: ports get `securityGroups` only.",
    }),
  }),
  resyncPeriodSeconds: setting(int(0).default(600), {
    env: 'RAVEN_RESYNC_PERIOD_SECONDS',
    flag: '--resync-period <seconds>',
    unreadBy: CONTROLLER,
    doc: 'Every object is reconciled again this often (0: never).',
  }),
  workers: section(
    {
      namespaces: setting(int(1).default(2), {
        env: 'RAVEN_WORKERS_NAMESPACES',
        flag: '--workers-namespaces <n>',
        doc: 'Concurrent namespace reconciles.',
      }),
      pods: setting(int(1).default(8), {
        env: 'RAVEN_WORKERS_PODS',
        flag: '--workers-pods <n>',
        doc: 'Concurrent pod reconciles.',
      }),
      services: setting(int(1).default(4), {
        env: 'RAVEN_WORKERS_SERVICES',
        flag: '--workers-services <n>',
        doc: 'Concurrent service reconciles.',
      }),
    },
    { unreadBy: CONTROLLER },
  ),
  gc: section({
    intervalSeconds: setting(int(1).default(300), {
      env: 'RAVEN_GC_INTERVAL_SECONDS',
      doc: 'How often the garbage collector sweeps (it also runs once the caches sync).',
    }),
    graceSeconds: setting(int(0).default(120), {
      env: 'RAVEN_GC_GRACE_SECONDS',
      doc: 'A resource is collected only once it is older than this (an owner the cache has not seen yet is not swept).',
    }),
  }),
  policyTransitions: section({
    settleSeconds: setting(int(0).default(2), {
      env: 'RAVEN_POLICY_SETTLE_SECONDS',
      doc: "NetworkPolicy changes are made before they break: a port's new security groups and a group's new rules are added first, and what the change takes away goes only once what it relies on has had this long to reach the dataplane (the agents apply Neutron's changes asynchronously). 0: as soon as Neutron answered.",
    }),
    maxHoldSeconds: setting(int(1).default(60), {
      env: 'RAVEN_POLICY_MAX_HOLD_SECONDS',
      doc: 'The longest a port or group waits to lose what a NetworkPolicy change takes away while other ports or groups it relies on have not taken their part yet (one that cannot, e.g. a group over quota); then it goes ahead, logged. Bounds how long a change keeps more open than its new state.',
    }),
  }),
  quotas: section({
    securityGroupsPerNamespace: setting(int(0).default(32), {
      env: 'RAVEN_QUOTA_SECURITY_GROUPS_PER_NAMESPACE',
      doc: "Security groups one namespace's NetworkPolicies may need at most (their pod sets, peers and named ports; Raven's open and node groups are the cluster's). A policy that would take its namespace past it is not translated: its pods stay isolated with none of its rules, and it gets a Warning `TranslationFailed`. So one namespace cannot use up the project's security group quota for the others. 0: no limit.",
    }),
    poolPortsPerNamespace: setting(int(0).default(16), {
      env: 'RAVEN_QUOTA_POOL_PORTS_PER_NAMESPACE',
      doc: "Free warm-pool ports the pools of one namespace's NetworkPolicy group sets (pods its policies select) may hold at most, over all nodes; with adaptive sizing, also the free ports above `portPools.min` of the pools on the namespace's own subnet (its growth past the floor). A refill past it is cut short, with a Warning `PoolShareReached` on the namespace; its pods then get a port of their own when they start, as with an empty pool. Pools of the shared subnet that no policy set keys are not counted. 0: no limit.",
    }),
  }),
  portPools: section({
    enabled: setting(bool().default(true), {
      env: 'RAVEN_PORT_POOLS',
      flag: '--port-pools',
      negatable: true,
      doc: "Warm port pools: pods take a port made in advance (bulk creates), with no Neutron request before their VIF is written, and a deleted pod's port goes back to its pool. Off: every pod gets a new port, deleted with it.",
    }),
    sizing: setting(oneOf(['adaptive', 'static'] as const).default('adaptive'), {
      env: 'RAVEN_PORT_POOL_SIZING',
      doc: "`adaptive`: each pool's free-port target follows its own demand (the take rate over `demandWindowSeconds`, the refill time measured, the most ports its pods held since it last idled), from `min` to `max`, each refill the deficit (at least `batch`) in one bulk request, and surplus trimmed only after `trimIdleSeconds` without a take (docs/pools.md). `static`: kuryr's fixed `min`/`max`/`batch`. A namespace listed in `namespaces` always takes static sizes.",
    }),
    min: setting(int(0).default(2), {
      env: 'RAVEN_PORT_POOL_MIN',
      doc: 'Free ports kept ready in each pool at least (one pool per node, pod subnet and group set that pods use); below it, a batch is made in the background.',
    }),
    max: setting(int(0).default(64), {
      env: 'RAVEN_PORT_POOL_MAX',
      doc: 'Free ports a pool keeps at most (adaptive: the most its target reaches, and what a refill makes in one bulk request at most): ports of deleted pods beyond it are deleted.',
    }),
    batch: setting(int(1).default(4), {
      env: 'RAVEN_PORT_POOL_BATCH',
      doc: 'Ports made at least by one bulk request when a pool runs low (static sizing: at least what brings it back to `min`; adaptive: at least its deficit).',
    }),
    demandWindowSeconds: setting(int(1).default(3), {
      env: 'RAVEN_PORT_POOL_DEMAND_WINDOW_SECONDS',
      doc: "Adaptive sizing: the time constant of each pool's take rate (an exponentially decayed count of takes per second). Short: the rate predicts the takes of the next refill, which lasts about a second.",
    }),
    trimIdleSeconds: setting(int(0).default(120), {
      env: 'RAVEN_PORT_POOL_TRIM_IDLE_SECONDS',
      doc: "Adaptive sizing: a pool's free ports above its target are deleted only once no pod has taken from it for this long (ports of deleted pods stay for the next ones meanwhile); the most ports its pods held is forgotten then.",
    }),
    prefillNodes: setting(int(0).default(8), {
      env: 'RAVEN_PORT_POOL_PREFILL_NODES',
      doc: "When Raven makes a namespace's network, that namespace's pools are made and filled to `min` on this many nodes at most: those that run the most pods that have a port (not with the NetworkPolicy translation, whose pools are keyed by group sets known only from pods). 0: a pool is made when a pod first needs it.",
    }),
    idleSeconds: setting(int(0).default(600), {
      env: 'RAVEN_PORT_POOL_IDLE_SECONDS',
      doc: "A pool no pod has taken from for this long, on a node none of that subnet's pods runs on, is emptied.",
    }),
    namespaces: setting(
      z
        .array(
          z.strictObject(
            { namespace: dnsLabel(), min: int(0).optional(), max: int(0).optional(), batch: int(1).optional() },
            { error: 'must be a mapping with namespace and any of min, max, batch' },
          ),
          { error: 'must be a list of {namespace, min, max, batch}' },
        )
        .default([]),
      {
        doc: 'Per-namespace pool sizes (file only): `[{namespace: shop, min: 10, max: 40, batch: 10}]`; unset fields take the global ones. With the `shared` strategy all namespaces share one pool per node, which takes the global sizes.',
      },
    ),
  }),
  loadBalancer: section({
    pendingRequeueMs: setting(int(1).default(2000), {
      doc: 'A load balancer in `PENDING_*` is looked at again after this.',
    }),
    stuckAfterSeconds: setting(int(1).default(600), {
      doc: 'A load balancer `PENDING_*` longer than this gets a Warning Event.',
    }),
    classes: setting(z.array(text(), { error: 'must be a list of loadBalancerClass names' }).default([]), {
      env: 'RAVEN_LOAD_BALANCER_CLASSES',
      doc: '`loadBalancerClass` values Raven serves, besides none (the default class). A `type: LoadBalancer` Service of any other class is left to its implementation, as upstream.',
    }),
    provider: setting(providerName().optional(), {
      env: 'RAVEN_LOAD_BALANCER_PROVIDER',
      flag: '--lb-provider <name>',
      doc: "Octavia provider of the load balancers Raven creates (OCCM's `lb-provider`): `ovn` (ML2/OVN clouds), `amphora`, or another the cloud enables. Unset: the cloud's default provider, taken to behave as the amphora. With `ovn`, pools use SOURCE_IP_PORT, members' security groups carry NetworkPolicy (the client's address reaches them), and a Service asking for what the provider cannot do (another `lb-method`, PROXY, `x-forwarded-for`, `loadBalancerSourceRanges`) gets a Warning and no load balancer change.",
    }),
    healthMonitor: setting(bool().default(false), {
      env: 'RAVEN_LOAD_BALANCER_HEALTH_MONITOR',
      doc: 'Each pool gets a health monitor (TCP, UDP-CONNECT or SCTP by protocol; OCCM\'s timings) unless a Service says `loadbalancer.openstack.org/enable-health-monitor: "false"`.',
    }),
  }),
  leaderElection: section(
    {
      enabled: setting(bool().default(true), {
        env: 'RAVEN_LEADER_ELECT',
        flag: '--leader-elect',
        negatable: true,
        doc: 'Only the holder of a `coordination.k8s.io` Lease works (run 2+ replicas). Off: this process always works; run one replica only.',
      }),
      namespace: setting(dnsLabel().default('kube-system'), {
        env: 'RAVEN_LEADER_ELECT_NAMESPACE',
        flag: '--leader-elect-namespace <ns>',
        doc: 'Namespace of the Lease.',
      }),
      name: setting(dnsSubdomain().default('raven'), { flag: '--leader-elect-name <name>', doc: 'Name of the Lease.' }),
      identity: setting(text().optional(), {
        env: 'RAVEN_LEADER_IDENTITY',
        flag: '--leader-elect-identity <id>',
        doc: 'This replica in the Lease. Unset: `POD_NAME`, else `<hostname>_<random uuid>`.',
      }),
      leaseDurationSeconds: setting(positive().default(15), { doc: 'How long a Lease holds without renewal.' }),
      renewDeadlineSeconds: setting(positive().default(10), {
        doc: 'The leader stops leading when it cannot renew within this (< `leaseDurationSeconds`).',
      }),
      retryPeriodSeconds: setting(positive().default(2), {
        doc: 'How often candidates try and the leader renews (`renewDeadlineSeconds` > 1.2 × this).',
      }),
    },
    { unreadBy: CONTROLLER },
  ),
  nested: section({
    mode: setting(oneOf(nestedModes).default('off'), {
      env: 'RAVEN_NESTED_MODE',
      flag: '--nested-mode <mode>',
      doc: "Nested pods (docs/nested.md): nodes that are Nova VMs (`spec.providerID` `openstack:///<server id>`) get a Neutron trunk on the VM's port, for their pods' subports. `off`: no node is treated as a VM. `auto`: Raven finds each VM node's trunk, and creates it (`raven/<cluster>/<node>`) where there is none. `existing`: the trunk must exist already (an operator or the VM's template made it); a VM node without one gets a Warning `NestedTrunkMissing`.",
    }),
    parentNetworks: setting(z.array(openstackId(), { error: 'must be a list of network ids' }).default([]), {
      env: 'RAVEN_NESTED_PARENT_NETWORKS',
      doc: "A VM with several ports: its trunk's parent is its one port on one of these networks. Empty: a VM must have exactly one port (else a Warning `NestedParentAmbiguous` on the Node).",
    }),
  }),
  vif: section(
    {
      keyFile: setting(text().optional(), {
        env: 'RAVEN_VIF_KEY_FILE',
        flag: '--vif-key-file <path>',
        doc: 'A file of at least 32 random bytes that Raven and every node\'s `raven-cni` (its `vifKeyFile`) hold, mounted from one Secret. With it, Raven signs each VIF annotation of a bound port (node, plug, leader term), and a node plugs a VIF signed for it in the current term without asking Neutron or waiting for the port\'s claim (docs/pools.md, "Signed VIFs"). Unset: nodes verify every port against Neutron.',
      }),
    },
    { unreadBy: CONTROLLER },
  ),
  ops: section(
    {
      host: setting(text().default('127.0.0.1'), {
        env: 'RAVEN_OPS_HOST',
        flag: '--ops-host <address>',
        doc: 'Address of `/healthz`, `/readyz`, `/metrics`: `0.0.0.0` in a pod, so the kubelet and Prometheus reach it.',
      }),
      port: setting(int(0, 65535).default(9090), {
        env: 'RAVEN_OPS_PORT',
        flag: '--ops-port <port>',
        doc: 'Port of the ops endpoints (0: any free port).',
      }),
      topology: setting(bool().default(false), {
        env: 'RAVEN_OPS_TOPOLOGY',
        flag: '--ops-topology',
        doc: 'Serve the live topology view (`/topology/`: a read-only page of what Raven made and what is stuck, and its JSON/SSE API, docs/topology.md) on the ops server. It shows addresses and ids: bound elsewhere than loopback, it needs `ops.topologyTokenFile`.',
      }),
      topologyTokenFile: setting(text().optional(), {
        env: 'RAVEN_OPS_TOPOLOGY_TOKEN_FILE',
        flag: '--ops-topology-token-file <path>',
        doc: "File holding the bearer token the topology view's API requires (`Authorization: Bearer …`; the page takes it as `#token=…` in its address). Required when `ops.topology` is on and `ops.host` is not a loopback address.",
      }),
      unreadyAfterSeconds: setting(int(1).default(30), {
        env: 'RAVEN_UNREADY_AFTER_SECONDS',
        flag: '--unready-after <seconds>',
        doc: '`/readyz` fails once an informer has had no successful list or watch, or every OpenStack call has failed (no response, 5xx, 401/403), for this long; it passes again at the next success. Shorter blips only show in the logs.',
      }),
    },
    { unreadBy: CONTROLLER },
  ),
  logLevel: setting(oneOf(logLevels).default('info'), {
    env: 'RAVEN_LOG_LEVEL',
    flag: '--log-level <level>',
    unreadBy: CONTROLLER,
    doc: '`trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
  }),
  logFormat: setting(oneOf(logFormats).default('auto'), {
    env: 'RAVEN_LOG_FORMAT',
    flag: '--log-format <format>',
    unreadBy: CONTROLLER,
    doc: '`json` (one object a line, for collectors), `text` (one readable line each, for a person) or `auto`: `text` for `raven dev` when its logs go to a terminal, else `json` (`raven run` always).',
  }),
} satisfies Record<string, Declared>);

/** The settings after defaults, before the environment-dependent ones are resolved. */
export type RavenSettings = z.output<typeof settingsSchema>;
