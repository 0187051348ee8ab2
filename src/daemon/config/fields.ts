/**
 * The one table of Raven's settings: which environment variable and which command-line flag set each one, and what it
 * means. The env and flag layers, the error hints and the reference table in README.md are all derived from it, so a
 * setting is added in one place (plus its type and default in schema.ts).
 */

/** How a string from the environment or the command line becomes a value. */
export type FieldKind = 'string' | 'int' | 'number' | 'bool' | 'list';

/** One setting. */
export interface ConfigField {
  /** Dotted path in the file (camelCase), e.g. `workers.pods`. */
  path: string;
  kind: FieldKind;
  /** The environment variable that sets it, if any. */
  env?: string;
  /** The commander flag that sets it, e.g. `--workers-pods <n>`. */
  flag?: string;
  /** Booleans: also register `--no-<flag>` (and the value is undefined unless one of them is given). */
  negatable?: boolean;
  doc: string;
}

export const configFields: readonly ConfigField[] = [
  {
    path: 'clusterId',
    kind: 'string',
    env: 'RAVEN_CLUSTER_ID',
    flag: '--cluster-id <id>',
    doc: "**Required.** Names this cluster in every cloud resource (tag `raven.cluster=<id>`, names `raven/<id>/…`). 1–32 lower-case letters, digits or '-'. Changing it orphans everything tagged with the old id (`raven gc` with the old id cleans up).",
  },
  {
    path: 'kubernetes.kubeconfig',
    kind: 'string',
    flag: '--kubeconfig <path>',
    doc: "kubeconfig file. Unset: `KUBECONFIG`, then `~/.kube/config`, then the pod's service account.",
  },
  {
    path: 'kubernetes.context',
    kind: 'string',
    flag: '--context <name>',
    doc: "kubeconfig context instead of the file's `current-context`.",
  },
  {
    path: 'kubernetes.inCluster',
    kind: 'bool',
    doc: "Use the pod's service account. Unset: on when `KUBERNETES_SERVICE_HOST` is set and no kubeconfig is given (neither `kubernetes.kubeconfig` nor `KUBECONFIG`).",
  },
  {
    path: 'kubernetes.qps',
    kind: 'number',
    flag: '--kube-api-qps <qps>',
    doc: 'Kubernetes API requests per second (token bucket), as client-go `QPS`.',
  },
  { path: 'kubernetes.burst', kind: 'int', flag: '--kube-api-burst <n>', doc: 'Kubernetes API burst above `qps`.' },
  {
    path: 'openstack.cloud',
    kind: 'string',
    flag: '--os-cloud <name>',
    doc: 'Cloud in clouds.yaml. Unset: `OS_CLOUD`, else the `OS_*` variables, else the only cloud in clouds.yaml (as the `openstack` CLI).',
  },
  {
    path: 'openstack.concurrency.network',
    kind: 'int',
    doc: "Neutron requests in flight at most; a quarter of them are kept for a pod's claim or port create.",
  },
  { path: 'openstack.concurrency.loadBalancer', kind: 'int', doc: 'Octavia requests in flight at most.' },
  { path: 'openstack.timeoutMs', kind: 'int', doc: 'Timeout of one OpenStack request (ms).' },
  {
    path: 'subnets.strategy',
    kind: 'string',
    env: 'RAVEN_SUBNET_STRATEGY',
    flag: '--subnet-strategy <strategy>',
    doc: 'How pods get their subnet: `namespace` (a network and subnet per namespace) or `shared` (every pod on one subnet).',
  },
  {
    path: 'subnets.shared.subnetId',
    kind: 'string',
    env: 'RAVEN_POD_SUBNET_ID',
    flag: '--pod-subnet-id <id>',
    doc: 'Strategy `shared`: an existing pod subnet. Exactly one of `subnetId`, `subnetIds`, `cidr` and `cidrs`.',
  },
  {
    path: 'subnets.shared.subnetIds',
    kind: 'list',
    env: 'RAVEN_POD_SUBNET_IDS',
    flag: '--pod-subnet-ids <ids>',
    doc: 'Strategy `shared`, dual-stack: existing pod subnets, one per IP family, on one network (comma-separated in env and flags); the first is the primary family. Raven checks at start that Neutron has them on one network with different IP versions.',
  },
  {
    path: 'subnets.shared.cidr',
    kind: 'string',
    env: 'RAVEN_POD_SUBNET_CIDR',
    flag: '--pod-subnet-cidr <cidr>',
    doc: 'Strategy `shared`: Raven creates the pod network and subnet with this range (IPv4 or IPv6).',
  },
  {
    path: 'subnets.shared.cidrs',
    kind: 'list',
    env: 'RAVEN_POD_SUBNET_CIDRS',
    flag: '--pod-subnet-cidrs <cidrs>',
    doc: 'Strategy `shared`, dual-stack: one range per IP family (comma-separated in env and flags), e.g. `10.244.0.0/16,fd00:10:244::/64`. Raven makes one network with a subnet per range; each pod port gets an address of each family. The first range is the primary family (the VIF lists it first).',
  },
  {
    path: 'subnets.namespace.subnetPoolId',
    kind: 'string',
    env: 'RAVEN_NAMESPACE_SUBNET_POOL',
    flag: '--namespace-subnet-pool <id>',
    doc: 'Strategy `namespace`: a Neutron subnet pool each namespace subnet is allocated from (`prefixLength`, or `ipv6PrefixLength` for an IPv6 pool). Exactly one of `subnetPoolId`, `subnetPoolIds`, `cidr` and `cidrs`.',
  },
  {
    path: 'subnets.namespace.subnetPoolIds',
    kind: 'list',
    env: 'RAVEN_NAMESPACE_SUBNET_POOLS',
    flag: '--namespace-subnet-pools <ids>',
    doc: 'Strategy `namespace`, dual-stack: one Neutron subnet pool per IP family (comma-separated in env and flags); each namespace gets one network with a subnet allocated from each, the first pool the primary family. Two pools of one family are refused (a Warning on the namespace).',
  },
  {
    path: 'subnets.namespace.cidr',
    kind: 'string',
    env: 'RAVEN_NAMESPACE_CIDR',
    flag: '--namespace-cidr <cidr>',
    doc: 'Strategy `namespace`: a range (IPv4 or IPv6) carved into per-namespace subnets of `prefixLength` (`ipv6PrefixLength`). Unset (and no pool): `FLANNEL_NET`.',
  },
  {
    path: 'subnets.namespace.cidrs',
    kind: 'list',
    env: 'RAVEN_NAMESPACE_CIDRS',
    flag: '--namespace-cidrs <cidrs>',
    doc: 'Strategy `namespace`, dual-stack: one range per IP family (comma-separated in env and flags), e.g. `10.244.0.0/16,fd00:10:244::/56`. Each namespace gets one network with a subnet carved from each range; the first range is the primary family.',
  },
  {
    path: 'subnets.namespace.prefixLength',
    kind: 'int',
    env: 'RAVEN_NAMESPACE_PREFIX_LENGTH',
    flag: '--namespace-prefix-length <n>',
    doc: "Prefix length of each IPv4 namespace subnet; from the IPv4 range's prefix to /30.",
  },
  {
    path: 'subnets.namespace.ipv6PrefixLength',
    kind: 'int',
    env: 'RAVEN_NAMESPACE_IPV6_PREFIX_LENGTH',
    flag: '--namespace-ipv6-prefix-length <n>',
    doc: "Prefix length of each IPv6 namespace subnet; from the IPv6 range's prefix to /126. IPv6 subnets are `dhcpv6-stateful` (Neutron hands out addresses from the pool, any prefix length).",
  },
  {
    path: 'serviceSubnet.subnetId',
    kind: 'string',
    env: 'RAVEN_SERVICE_SUBNET_ID',
    flag: '--service-subnet-id <id>',
    doc: "An existing subnet Octavia VIPs live on. The VIP address is the Service's clusterIP, so the subnet must cover the cluster's service CIDR (kube-apiserver `--service-cluster-ip-range`). Exactly one of `subnetId`, `subnetIds`, `cidr` and `cidrs` when `translations.services` is on.",
  },
  {
    path: 'serviceSubnet.subnetIds',
    kind: 'list',
    env: 'RAVEN_SERVICE_SUBNET_IDS',
    flag: '--service-subnet-ids <ids>',
    doc: "Dual-stack: existing subnets Octavia VIPs live on, one per IP family, on one network (comma-separated in env and flags), covering the cluster's service CIDRs; the first is the primary family.",
  },
  {
    path: 'serviceSubnet.cidr',
    kind: 'string',
    env: 'RAVEN_SERVICE_SUBNET_CIDR',
    flag: '--service-subnet-cidr <cidr>',
    doc: "Raven creates the service network and subnet with this range: use the cluster's service CIDR (or a range covering it). Must not overlap the pod range.",
  },
  {
    path: 'serviceSubnet.cidrs',
    kind: 'list',
    env: 'RAVEN_SERVICE_SUBNET_CIDRS',
    flag: '--service-subnet-cidrs <cidrs>',
    doc: "Dual-stack: one range per IP family (comma-separated in env and flags), the cluster's service CIDRs (kube-apiserver `--service-cluster-ip-range=<v4>,<v6>`). One service network with a subnet per range; a dual-stack Service gets one load balancer with a VIP on each.",
  },
  {
    path: 'router.id',
    kind: 'string',
    env: 'RAVEN_ROUTER_ID',
    flag: '--router-id <id>',
    doc: 'An existing router the subnets are attached to. Unset: Raven creates one for the cluster.',
  },
  {
    path: 'router.externalNetworkId',
    kind: 'string',
    env: 'RAVEN_EXTERNAL_NETWORK_ID',
    flag: '--external-network-id <id>',
    doc: 'External network for the gateway of the router Raven creates.',
  },
  {
    path: 'router.create',
    kind: 'bool',
    env: 'RAVEN_ROUTER_CREATE',
    flag: '--router-create',
    negatable: true,
    doc: "Without `router.id`, whether Raven creates the cluster's router `raven/<id>/router` and attaches its subnets to it. Unset: yes, unless the pod subnet is an existing one (`subnets.shared.subnetId` or `subnetIds`) — an operator's subnet is attached only to a router that is configured or asked for.",
  },
  {
    path: 'floatingIpNetworkId',
    kind: 'string',
    env: 'RAVEN_FLOATING_IP_NETWORK_ID',
    flag: '--floating-ip-network-id <id>',
    doc: 'External network floating IPs (LoadBalancer services, `externalIPs`) come from. Unset: `router.externalNetworkId`.',
  },
  {
    path: 'floatingIps.allowExternalIPs',
    kind: 'bool',
    env: 'RAVEN_ALLOW_EXTERNAL_IPS',
    flag: '--allow-external-ips',
    negatable: true,
    doc: "Services' `spec.externalIPs` get floating IPs. Off (Kubernetes' own advice where users are not trusted, CVE-2020-8554): they are ignored, with a Warning Event.",
  },
  {
    path: 'floatingIps.adoptCidrs',
    kind: 'list',
    env: 'RAVEN_FLOATING_IP_ADOPT_CIDRS',
    doc: 'Floating IPs someone else allocated that a Service may claim (`loadBalancerIP`, `externalIPs`) when their address lies in one of these ranges. Otherwise only a floating IP Raven allocated for that Service, or one tagged `raven.grant=<namespace>/<service>` (or `raven.grant=<namespace>`), is associated; any namespace could claim any address otherwise. Never one Raven holds for another Service.',
  },
  {
    path: 'floatingIps.adoptProjects',
    kind: 'list',
    env: 'RAVEN_FLOATING_IP_ADOPT_PROJECTS',
    doc: 'Projects whose floating IPs a Service may claim, like `floatingIps.adoptCidrs`.',
  },
  {
    path: 'floatingIps.networks',
    kind: 'list',
    env: 'RAVEN_FLOATING_IP_NETWORKS',
    doc: 'External networks a Service may name with `loadbalancer.openstack.org/floating-network-id` (besides `floatingIpNetworkId`). Any other network in that annotation is refused with a Warning: a namespace must not allocate from a network the operator did not offer.',
  },
  {
    path: 'floatingIps.allowFreeAddresses',
    kind: 'bool',
    env: 'RAVEN_FLOATING_IP_ALLOW_FREE_ADDRESSES',
    doc: "A Service may name (`loadBalancerIP`, `externalIPs`) a free address that `floatingIps.grants` does not give its namespace; Raven allocates it only inside an allocation pool of the floating network. Off (the default): a named address is only one kept or held for that Service, a granted floating IP, or one in the namespace's grants — any namespace could otherwise take an address another tenant's DNS still points at.",
  },
  {
    path: 'floatingIps.grants',
    kind: 'list',
    doc: "Free addresses a namespace may name (file only): `[{namespace: shop, cidrs: [203.0.113.64/28]}]`. The operator's word: a block may lie outside the allocation pools (addresses kept back for this).",
  },
  {
    path: 'floatingIps.quarantineSeconds',
    kind: 'int',
    env: 'RAVEN_FLOATING_IP_QUARANTINE_SECONDS',
    doc: "A floating IP Raven allocated and a Service no longer wants is held (allocated, unassociated, tagged for the cluster) for the Service's name this long, so a redeploy gets its address back and no other tenant takes it meanwhile; then the garbage collector frees it. At most one is held per Service name. 0: deleted at once.",
  },
  {
    path: 'securityGroups',
    kind: 'list',
    env: 'RAVEN_SECURITY_GROUPS',
    flag: '--security-groups <ids>',
    doc: "Security group ids every pod port also carries (comma-separated in env and flags). With `translations.networkPolicies` on they are added to the groups a pod's policies give it (they can only allow more); off, they are all a port gets (empty: the project's `default` group).",
  },
  {
    path: 'emulateKubeProxy',
    kind: 'bool',
    env: 'RAVEN_EMULATE_KUBE_PROXY',
    flag: '--emulate-kube-proxy',
    negatable: true,
    doc: 'ClusterIP services get Octavia load balancers too (LoadBalancer services and `externalIPs` always do).',
  },
  {
    path: 'translations.namespaces',
    kind: 'bool',
    env: 'RAVEN_TRANSLATE_NAMESPACES',
    doc: 'Translate Namespaces (networks; needed by pods with strategy `namespace`).',
  },
  {
    path: 'translations.pods',
    kind: 'bool',
    env: 'RAVEN_TRANSLATE_PODS',
    doc: 'Translate Pods (ports, `raven.openstack.org/vif`).',
  },
  {
    path: 'translations.services',
    kind: 'bool',
    env: 'RAVEN_TRANSLATE_SERVICES',
    doc: 'Translate Services and their EndpointSlices, or Endpoints where a Service has no slice (load balancers).',
  },
  {
    path: 'translations.networkPolicies',
    kind: 'bool',
    env: 'RAVEN_TRANSLATE_NETWORK_POLICIES',
    doc: "Translate NetworkPolicies into security groups on the pods' ports (with `translations.pods`); a pod no policy isolates is open. Off: ports get `securityGroups` only.",
  },
  {
    path: 'resyncPeriodSeconds',
    kind: 'int',
    env: 'RAVEN_RESYNC_PERIOD_SECONDS',
    flag: '--resync-period <seconds>',
    doc: 'Every object is reconciled again this often (0: never).',
  },
  {
    path: 'workers.namespaces',
    kind: 'int',
    env: 'RAVEN_WORKERS_NAMESPACES',
    flag: '--workers-namespaces <n>',
    doc: 'Concurrent namespace reconciles.',
  },
  {
    path: 'workers.pods',
    kind: 'int',
    env: 'RAVEN_WORKERS_PODS',
    flag: '--workers-pods <n>',
    doc: 'Concurrent pod reconciles.',
  },
  {
    path: 'workers.services',
    kind: 'int',
    env: 'RAVEN_WORKERS_SERVICES',
    flag: '--workers-services <n>',
    doc: 'Concurrent service reconciles.',
  },
  {
    path: 'gc.intervalSeconds',
    kind: 'int',
    env: 'RAVEN_GC_INTERVAL_SECONDS',
    doc: 'How often the garbage collector sweeps (it also runs once the caches sync).',
  },
  {
    path: 'gc.graceSeconds',
    kind: 'int',
    env: 'RAVEN_GC_GRACE_SECONDS',
    doc: 'A resource is collected only once it is older than this (an owner the cache has not seen yet is not swept).',
  },
  {
    path: 'quotas.securityGroupsPerNamespace',
    kind: 'int',
    env: 'RAVEN_QUOTA_SECURITY_GROUPS_PER_NAMESPACE',
    doc: "Security groups one namespace's NetworkPolicies may need at most (their pod sets, peers and named ports; Raven's open and node groups are the cluster's). A policy that would take its namespace past it is not translated: its pods stay isolated with none of its rules, and it gets a Warning `TranslationFailed`. So one namespace cannot use up the project's security group quota for the others. 0: no limit.",
  },
  {
    path: 'quotas.poolPortsPerNamespace',
    kind: 'int',
    env: 'RAVEN_QUOTA_POOL_PORTS_PER_NAMESPACE',
    doc: "Free warm-pool ports the pools of one namespace's NetworkPolicy group sets (pods its policies select) may hold at most, over all nodes. A refill past it is cut short, with a Warning `PoolShareReached` on the namespace; its pods then get a port of their own when they start, as with an empty pool. Pools of pods no policy of their namespace selects are not counted. 0: no limit.",
  },
  {
    path: 'portPools.enabled',
    kind: 'bool',
    env: 'RAVEN_PORT_POOLS',
    flag: '--port-pools',
    negatable: true,
    doc: "Warm port pools: pods take a port made in advance (bulk creates), with no Neutron request before their VIF is written, and a deleted pod's port goes back to its pool. Off: every pod gets a new port, deleted with it.",
  },
  {
    path: 'portPools.min',
    kind: 'int',
    env: 'RAVEN_PORT_POOL_MIN',
    doc: 'Free ports kept ready in each pool (one pool per node and pod subnet that pods use); below it, a batch is made in the background.',
  },
  {
    path: 'portPools.max',
    kind: 'int',
    env: 'RAVEN_PORT_POOL_MAX',
    doc: 'Free ports a pool keeps at most: ports of deleted pods beyond it are deleted.',
  },
  {
    path: 'portPools.batch',
    kind: 'int',
    env: 'RAVEN_PORT_POOL_BATCH',
    doc: 'Ports made by one bulk request when a pool runs low (at least what brings it back to `min`).',
  },
  {
    path: 'portPools.idleSeconds',
    kind: 'int',
    env: 'RAVEN_PORT_POOL_IDLE_SECONDS',
    doc: "A pool no pod has taken from for this long, on a node none of that subnet's pods runs on, is emptied.",
  },
  {
    path: 'portPools.namespaces',
    kind: 'list',
    doc: 'Per-namespace pool sizes (file only): `[{namespace: shop, min: 10, max: 40, batch: 10}]`; unset fields take the global ones. With the `shared` strategy all namespaces share one pool per node, which takes the global sizes.',
  },
  {
    path: 'loadBalancer.pendingRequeueMs',
    kind: 'int',
    doc: 'A load balancer in `PENDING_*` is looked at again after this.',
  },
  {
    path: 'loadBalancer.stuckAfterSeconds',
    kind: 'int',
    doc: 'A load balancer `PENDING_*` longer than this gets a Warning Event.',
  },
  {
    path: 'loadBalancer.classes',
    kind: 'list',
    env: 'RAVEN_LOAD_BALANCER_CLASSES',
    doc: '`loadBalancerClass` values Raven serves, besides none (the default class). A `type: LoadBalancer` Service of any other class is left to its implementation, as upstream.',
  },
  {
    path: 'loadBalancer.healthMonitor',
    kind: 'bool',
    env: 'RAVEN_LOAD_BALANCER_HEALTH_MONITOR',
    doc: 'Each pool gets a health monitor (TCP, UDP-CONNECT or SCTP by protocol; OCCM\'s timings) unless a Service says `loadbalancer.openstack.org/enable-health-monitor: "false"`.',
  },
  {
    path: 'leaderElection.enabled',
    kind: 'bool',
    env: 'RAVEN_LEADER_ELECT',
    flag: '--leader-elect',
    negatable: true,
    doc: 'Only the holder of a `coordination.k8s.io` Lease works (run 2+ replicas). Off: this process always works; run one replica only.',
  },
  {
    path: 'leaderElection.namespace',
    kind: 'string',
    env: 'RAVEN_LEADER_ELECT_NAMESPACE',
    flag: '--leader-elect-namespace <ns>',
    doc: 'Namespace of the Lease.',
  },
  { path: 'leaderElection.name', kind: 'string', flag: '--leader-elect-name <name>', doc: 'Name of the Lease.' },
  {
    path: 'leaderElection.identity',
    kind: 'string',
    env: 'RAVEN_LEADER_IDENTITY',
    flag: '--leader-elect-identity <id>',
    doc: 'This replica in the Lease. Unset: `POD_NAME`, else `<hostname>_<random uuid>`.',
  },
  { path: 'leaderElection.leaseDurationSeconds', kind: 'number', doc: 'How long a Lease holds without renewal.' },
  {
    path: 'leaderElection.renewDeadlineSeconds',
    kind: 'number',
    doc: 'The leader stops leading when it cannot renew within this (< `leaseDurationSeconds`).',
  },
  {
    path: 'leaderElection.retryPeriodSeconds',
    kind: 'number',
    doc: 'How often candidates try and the leader renews (`renewDeadlineSeconds` > 1.2 × this).',
  },
  {
    path: 'ops.host',
    kind: 'string',
    env: 'RAVEN_OPS_HOST',
    flag: '--ops-host <address>',
    doc: 'Address of `/healthz`, `/readyz`, `/metrics`: `0.0.0.0` in a pod, so the kubelet and Prometheus reach it.',
  },
  {
    path: 'ops.port',
    kind: 'int',
    env: 'RAVEN_OPS_PORT',
    flag: '--ops-port <port>',
    doc: 'Port of the ops endpoints (0: any free port).',
  },
  {
    path: 'ops.unreadyAfterSeconds',
    kind: 'int',
    env: 'RAVEN_UNREADY_AFTER_SECONDS',
    flag: '--unready-after <seconds>',
    doc: '`/readyz` fails once an informer has had no successful list or watch, or every OpenStack call has failed (no response, 5xx, 401/403), for this long; it passes again at the next success. Shorter blips only show in the logs.',
  },
  {
    path: 'logLevel',
    kind: 'string',
    env: 'RAVEN_LOG_LEVEL',
    flag: '--log-level <level>',
    doc: '`trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
  },
];

/**
 * Variables read besides the table's: honoured only when nothing else sets the field (the seed's conventions and the
 * downward API), plus the config file's own variable.
 */
export const fallbackEnv = {
  /** `subnets.namespace.cidr` when the strategy is `namespace` and no range (`cidr`, `cidrs`) nor subnet pool is set. */
  FLANNEL_NET: 'subnets.namespace.cidr',
  /** `leaderElection.identity` when unset (the Deployment sets it from `metadata.name`). */
  POD_NAME: 'leaderElection.identity',
} as const;

/** The config file when `--config` is not given. */
export const CONFIG_FILE_ENV = 'RAVEN_CONFIG';

/**
 * Settings that are alternatives: at most one member is set, and a source that sets one replaces the members set by
 * sources below it (`--pod-subnet-id` beats a `cidr` in the file rather than conflicting with it).
 */
export const oneOfGroups: ReadonlyArray<{ path: string; members: readonly string[] }> = [
  { path: 'subnets.shared', members: ['subnetId', 'subnetIds', 'cidr', 'cidrs'] },
  { path: 'subnets.namespace', members: ['subnetPoolId', 'subnetPoolIds', 'cidr', 'cidrs'] },
  { path: 'serviceSubnet', members: ['subnetId', 'subnetIds', 'cidr', 'cidrs'] },
];

const byPath = new Map(configFields.map((f) => [f.path, f]));

/** The row for a dotted path. */
export function fieldAt(path: string): ConfigField | undefined {
  return byPath.get(path);
}

/** `--workers-pods <n>` → `--workers-pods`. */
export function flagName(field: ConfigField): string | undefined {
  return field.flag?.split(' ')[0];
}

/** The flag and variable that set a setting, for messages: `['--pod-subnet-id', 'RAVEN_POD_SUBNET_ID']`. */
export function sourceNames(path: string): string[] {
  const field = byPath.get(path);
  const names = [
    field && flagName(field),
    field?.env,
    ...Object.entries(fallbackEnv)
      .filter(([, p]) => p === path)
      .map(([name]) => name),
  ];
  return names.filter((n): n is string => n !== undefined);
}
