import { formatCidr, parseCidr, parseIp, type DeepReadonly, type IpVersion } from '../../core/index.ts';
import type { Service } from '../../kube/api/index.ts';
import type { LbAlgorithm, OctaviaVersions, ProviderTraits } from '../../openstack/index.ts';
import { specOf } from './types.ts';

/**
 * A Service's load-balancer options: Kubernetes' own fields (`loadBalancerSourceRanges`, `sessionAffinity`) and the
 * annotations of openstack-cloud-controller-manager (OCCM), under the same names and with the same meanings, so a
 * Service moves over unchanged. Every value is checked here, before anything is built: one bad value and the load
 * balancer is left as it is, with a Warning naming the annotation and what it accepts.
 */

const P = 'loadbalancer.openstack.org/';
export const ANNOTATIONS = {
  internal: 'service.beta.kubernetes.io/openstack-internal-load-balancer',
  sourceRanges: 'service.beta.kubernetes.io/load-balancer-source-ranges',
  floatingNetworkId: `${P}floating-network-id`,
  floatingSubnetId: `${P}floating-subnet-id`,
  floatingSubnet: `${P}floating-subnet`,
  floatingSubnetTags: `${P}floating-subnet-tags`,
  keepFloatingIp: `${P}keep-floatingip`,
  lbMethod: `${P}lb-method`,
  proxyProtocol: `${P}proxy-protocol`,
  xForwardedFor: `${P}x-forwarded-for`,
  connectionLimit: `${P}connection-limit`,
  timeoutClientData: `${P}timeout-client-data`,
  timeoutMemberConnect: `${P}timeout-member-connect`,
  timeoutMemberData: `${P}timeout-member-data`,
  timeoutTcpInspect: `${P}timeout-tcp-inspect`,
  enableHealthMonitor: `${P}enable-health-monitor`,
  healthMonitorDelay: `${P}health-monitor-delay`,
  healthMonitorTimeout: `${P}health-monitor-timeout`,
  healthMonitorMaxRetries: `${P}health-monitor-max-retries`,
  healthMonitorMaxRetriesDown: `${P}health-monitor-max-retries-down`,
  flavorId: `${P}flavor-id`,
  availabilityZone: `${P}availability-zone`,
  hostname: `${P}hostname`,
} as const;

/**
 * OCCM annotations Raven does not take, with why: each gets a Warning rather than being ignored in silence. The VIP
 * is the Service's clusterIP on Raven's service subnet, so the annotations that would place it elsewhere cannot apply.
 */
export const UNSUPPORTED_ANNOTATIONS: Record<string, string> = {
  [`${P}subnet-id`]: "the VIP is the Service's clusterIP on Raven's service subnet (serviceSubnet)",
  [`${P}network-id`]: "the VIP is the Service's clusterIP on Raven's service subnet (serviceSubnet)",
  [`${P}port-id`]: "the VIP port is Raven's own, holding the Service's clusterIP",
  [`${P}member-subnet-id`]: "members are the pods' own addresses on their namespace's subnet",
  [`${P}load-balancer-id`]: 'sharing an existing load balancer is not supported: each Service gets its own',
  [`${P}class`]: 'floating-network-id (from floatingIps.networks) selects the floating network',
  [`${P}default-tls-container-ref`]: 'TLS termination (Barbican) is not supported',
  [`${P}node-selector`]: 'members are pods, not nodes',
};

export interface ListenerLimits {
  connection_limit: number;
  timeout_client_data: number;
  timeout_member_connect: number;
  timeout_member_data: number;
  timeout_tcp_inspect: number;
}

/** Octavia's listener defaults: what an unset timeout is (so removing an annotation resets it). */
export const LISTENER_DEFAULTS: Readonly<ListenerLimits> = {
  connection_limit: -1,
  timeout_client_data: 50000,
  timeout_member_connect: 5000,
  timeout_member_data: 50000,
  timeout_tcp_inspect: 0,
};

export interface MonitorOptions {
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
}

export interface ServiceOptions {
  /** No floating IP for `type: LoadBalancer`: the VIP is the ingress address. */
  internal: boolean;
  keepFloatingIp: boolean;
  /** `status.loadBalancer.ingress[].hostname` instead of the address. */
  hostname: string | undefined;
  /** From the annotation (allow-listed) — else undefined and the configured default applies. */
  floatingNetworkId: string | undefined;
  floatingSubnet: { id?: string; name?: string; tags?: string[] } | undefined;
  flavorId: string | undefined;
  availabilityZone: string | undefined;
  listener: ListenerLimits & { xForwardedFor: boolean };
  /** `loadBalancerSourceRanges` (or the annotation), as networks; empty: open. */
  sourceRanges: string[];
  lbMethod: LbAlgorithm;
  proxy: 'PROXY' | 'PROXYV2' | undefined;
  /** `sessionAffinity: ClientIP`: its timeout (seconds) when set. */
  affinity: { timeoutSeconds: number } | undefined;
  monitor: MonitorOptions | undefined;
}

export interface OptionProblem {
  /** The annotation or field at fault. */
  field: string;
  /** What is wrong and what is accepted. */
  message: string;
}

export interface OptionsPolicy {
  /** Floating networks a Service may name (besides the default one). */
  floatingNetworks: readonly string[];
  defaultFloatingNetworkId: string | undefined;
  /** The cluster default for `enable-health-monitor`. */
  healthMonitor: boolean;
  /** What the configured Octavia provider does with each option. */
  provider: ProviderTraits;
}

/**
 * Caps on what a namespace user writes, checked before anything is matched or sent: a Neutron name or tag is at most
 * 255 characters (a longer pattern matches nothing), and lists are bounded so one Service cannot make a reconcile, or
 * an Octavia request, arbitrarily large. Past a cap the value is a problem (a Warning), never silently cut.
 */
export const LIMITS = { name: 255, tags: 50, sourceRanges: 256 } as const;

const BOOLS = ['true', 'false'];
const uuid = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const hostname = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/**
 * Reads and checks every option of a Service; `problems` is empty when all of them hold. `ignored`: options the
 * provider accepts but does not apply (a Warning each; the load balancer is still built).
 */
export function serviceOptions(
  svc: DeepReadonly<Service>,
  versions: OctaviaVersions,
  policy: OptionsPolicy,
): { options: ServiceOptions; problems: OptionProblem[]; ignored: OptionProblem[] } {
  const a = svc.metadata.annotations ?? {};
  const spec = specOf(svc);
  const problems: OptionProblem[] = [];
  const ignored: OptionProblem[] = [];
  const { provider } = policy;
  const providerName = `provider ${provider.name ?? '(default)'}`;
  const unsupported = (field: string, what: string) =>
    void problems.push({ field, message: `${field}: ${what} is not supported by Octavia's ${providerName}` });
  // A value is quoted at most 64 characters long: an Event message must not carry a user's 256 KiB.
  const bad = (field: string, value: string, accepted: string) =>
    void problems.push({ field, message: `${field}: "${shorten(value)}" is not valid; accepted: ${accepted}` });
  const bool = (key: string, fallback: boolean): boolean => {
    const v = a[key];
    if (v === undefined) return fallback;
    if (!BOOLS.includes(v.toLowerCase())) bad(key, v, 'true or false');
    return v.toLowerCase() === 'true';
  };
  const int = (key: string, min: number, max: number, fallback: number): number => {
    const v = a[key];
    if (v === undefined) return fallback;
    const n = /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      bad(key, v, `an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const needs = (key: string, feature: Parameters<OctaviaVersions['supports']>[0], what: string) => {
    if (!versions.supports(feature))
      problems.push({ field: key, message: `${key}: ${what} needs a newer Octavia than ${versions.current.id}` });
  };

  for (const [key, why] of Object.entries(UNSUPPORTED_ANNOTATIONS))
    if (a[key] !== undefined) problems.push({ field: key, message: `${key} is not supported by Raven: ${why}` });

  const maxTimeout = 24 * 24 * 60 * 60 * 1000;
  const listener = {
    connection_limit: int(ANNOTATIONS.connectionLimit, -1, 2 ** 31 - 1, -1),
    timeout_client_data: int(ANNOTATIONS.timeoutClientData, 0, maxTimeout, LISTENER_DEFAULTS.timeout_client_data),
    timeout_member_connect: int(
      ANNOTATIONS.timeoutMemberConnect,
      0,
      maxTimeout,
      LISTENER_DEFAULTS.timeout_member_connect,
    ),
    timeout_member_data: int(ANNOTATIONS.timeoutMemberData, 0, maxTimeout, LISTENER_DEFAULTS.timeout_member_data),
    timeout_tcp_inspect: int(ANNOTATIONS.timeoutTcpInspect, 0, maxTimeout, LISTENER_DEFAULTS.timeout_tcp_inspect),
    xForwardedFor: bool(ANNOTATIONS.xForwardedFor, false),
  };
  if (listener.connection_limit === 0) bad(ANNOTATIONS.connectionLimit, '0', '-1 (no limit) or a positive integer');

  const limitKeys = [
    ANNOTATIONS.connectionLimit,
    ANNOTATIONS.timeoutClientData,
    ANNOTATIONS.timeoutMemberConnect,
    ANNOTATIONS.timeoutMemberData,
    ANNOTATIONS.timeoutTcpInspect,
  ];
  if (!provider.listenerLimits)
    for (const key of limitKeys)
      if (a[key] !== undefined)
        ignored.push({ field: key, message: `${key}: Octavia's ${providerName} stores but does not apply it` });
  if (listener.xForwardedFor && !provider.http) unsupported(ANNOTATIONS.xForwardedFor, 'an HTTP listener');

  const methods: LbAlgorithm[] = ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'];
  const method = a[ANNOTATIONS.lbMethod]?.toUpperCase() ?? provider.algorithms[0]!;
  if (!methods.includes(method as LbAlgorithm)) bad(ANNOTATIONS.lbMethod, a[ANNOTATIONS.lbMethod]!, methods.join(', '));
  else if (!provider.algorithms.includes(method as LbAlgorithm))
    bad(ANNOTATIONS.lbMethod, a[ANNOTATIONS.lbMethod]!, `${provider.algorithms.join(', ')} (${providerName})`);
  if (method === 'SOURCE_IP_PORT') needs(ANNOTATIONS.lbMethod, 'sourceIpPortAlgorithm', 'SOURCE_IP_PORT');

  const proxyValue = a[ANNOTATIONS.proxyProtocol]?.toLowerCase();
  let proxy: ServiceOptions['proxy'];
  if (proxyValue === 'true' || proxyValue === 'v1') proxy = 'PROXY';
  else if (proxyValue === 'v2') {
    proxy = 'PROXYV2';
    needs(ANNOTATIONS.proxyProtocol, 'proxyV2', 'PROXY protocol v2');
  } else if (proxyValue !== undefined && proxyValue !== 'false')
    bad(ANNOTATIONS.proxyProtocol, a[ANNOTATIONS.proxyProtocol]!, 'true or v1 (PROXY), v2 (PROXYV2), false');
  if (proxy && !provider.proxyProtocol) unsupported(ANNOTATIONS.proxyProtocol, 'the PROXY protocol');

  // OCCM's defaults: 5 s apart, 3 s to answer, 1 success to come up, 3 failures to go down.
  const monitorOn = bool(ANNOTATIONS.enableHealthMonitor, policy.healthMonitor);
  const monitor = {
    delay: int(ANNOTATIONS.healthMonitorDelay, 1, 2 ** 31 - 1, 5),
    timeout: int(ANNOTATIONS.healthMonitorTimeout, 1, 2 ** 31 - 1, 3),
    max_retries: int(ANNOTATIONS.healthMonitorMaxRetries, 1, 10, 1),
    max_retries_down: int(ANNOTATIONS.healthMonitorMaxRetriesDown, 1, 10, 3),
  };

  const sourceRanges = readSourceRanges(spec.loadBalancerSourceRanges, a[ANNOTATIONS.sourceRanges], problems);
  if (sourceRanges.length > 0) needs('loadBalancerSourceRanges', 'vipAcl', 'listener allowed_cidrs (v2.12)');
  // Refused, not ignored: a restriction that cannot be applied must not leave the load balancer open.
  if (sourceRanges.length > 0 && !provider.allowedCidrs)
    unsupported('loadBalancerSourceRanges', "restricting a listener's clients (allowed_cidrs)");

  let affinity: ServiceOptions['affinity'];
  if (spec.sessionAffinity === 'ClientIP') {
    if (provider.sessionPersistence)
      affinity = { timeoutSeconds: spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800 };
    else
      ignored.push({
        field: 'sessionAffinity',
        message: `sessionAffinity: ClientIP is not applied by Octavia's ${providerName} (no session persistence); SOURCE_IP_PORT spreads each client's connections`,
      });
  }

  const floatingNetworkId = a[ANNOTATIONS.floatingNetworkId];
  if (floatingNetworkId !== undefined) {
    const allowed = [...new Set([policy.defaultFloatingNetworkId, ...policy.floatingNetworks].filter(Boolean))];
    if (!allowed.includes(floatingNetworkId))
      bad(
        ANNOTATIONS.floatingNetworkId,
        floatingNetworkId,
        `one of floatingIps.networks (${allowed.join(', ') || 'none'})`,
      );
  }
  const subnetId = a[ANNOTATIONS.floatingSubnetId];
  if (subnetId !== undefined && !uuid.test(subnetId)) bad(ANNOTATIONS.floatingSubnetId, subnetId, 'a subnet id');
  let subnetName = a[ANNOTATIONS.floatingSubnet];
  if (subnetName !== undefined && subnetName.length > LIMITS.name) {
    bad(ANNOTATIONS.floatingSubnet, subnetName, `a subnet name or glob of at most ${LIMITS.name} characters`);
    subnetName = undefined;
  }
  let subnetTags = a[ANNOTATIONS.floatingSubnetTags]
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (subnetTags && (subnetTags.length > LIMITS.tags || subnetTags.some((t) => t.length > LIMITS.name))) {
    const given = a[ANNOTATIONS.floatingSubnetTags]!;
    bad(ANNOTATIONS.floatingSubnetTags, given, `at most ${LIMITS.tags} tags of at most ${LIMITS.name} characters`);
    subnetTags = undefined;
  }
  const floatingSubnet =
    subnetId || subnetName || subnetTags?.length
      ? {
          ...(subnetId ? { id: subnetId } : {}),
          ...(subnetName ? { name: subnetName } : {}),
          ...(subnetTags?.length ? { tags: subnetTags } : {}),
        }
      : undefined;

  const flavorId = a[ANNOTATIONS.flavorId];
  if (flavorId !== undefined) {
    if (!uuid.test(flavorId)) bad(ANNOTATIONS.flavorId, flavorId, 'an Octavia flavor id');
    needs(ANNOTATIONS.flavorId, 'flavors', 'flavors');
  }
  const availabilityZone = a[ANNOTATIONS.availabilityZone];
  if (availabilityZone !== undefined) needs(ANNOTATIONS.availabilityZone, 'availabilityZones', 'availability zones');
  const host = a[ANNOTATIONS.hostname];
  // Upstream refuses an IP address in `ingress[].hostname` (the address belongs in `ip`).
  if (host !== undefined && (!hostname.test(host) || parseIp(host)))
    bad(ANNOTATIONS.hostname, host, 'a DNS name (RFC 1123), not an IP address');

  return {
    options: {
      internal: bool(ANNOTATIONS.internal, false),
      keepFloatingIp: bool(ANNOTATIONS.keepFloatingIp, false),
      hostname: host,
      floatingNetworkId,
      floatingSubnet,
      flavorId,
      availabilityZone,
      listener,
      sourceRanges,
      lbMethod: method as LbAlgorithm,
      proxy,
      affinity,
      monitor: monitorOn ? monitor : undefined,
    },
    problems,
    ignored,
  };
}

const shorten = (value: string): string => (value.length > 64 ? `${value.slice(0, 63)}…` : value);

/**
 * `loadBalancerSourceRanges`, else Kubernetes' annotation (comma-separated, as upstream reads it), as networks each
 * once. A bad range is a problem: a restriction that cannot be read must not leave the load balancer open.
 */
function readSourceRanges(
  field: readonly string[] | undefined,
  annotation: string | undefined,
  problems: OptionProblem[],
): string[] {
  const [name, list] =
    field && field.length > 0
      ? ['loadBalancerSourceRanges', field]
      : [ANNOTATIONS.sourceRanges, (annotation ?? '').split(',').map((s) => s.trim())];
  const given = list.filter(Boolean);
  if (given.length > LIMITS.sourceRanges) {
    problems.push({
      field: name,
      message: `${name}: ${given.length} ranges; accepted: at most ${LIMITS.sourceRanges}`,
    });
    return [];
  }
  const out = new Set<string>();
  for (const text of given) {
    const parsed = parseCidr(text);
    if (!parsed) {
      problems.push({
        field: name,
        message: `${name}: "${shorten(text)}" is not valid; accepted: CIDRs such as 192.0.2.0/24`,
      });
      continue;
    }
    out.add(formatCidr(parsed.cidr));
  }
  return [...out];
}

/**
 * A listener's `allowed_cidrs` on a VIP of `family`: Octavia takes only that family's ranges (a 400 otherwise), so
 * the others are left out — and when none is left, the one that admits no client (`0.0.0.0/32`, `::/128`): a
 * restricted Service never falls open. `also` (the cluster's pod ranges) keeps in-cluster clients reaching the VIP,
 * which is also the clusterIP, as kube-proxy would. Sorted, as Octavia answers them.
 */
export function allowedCidrs(ranges: readonly string[], family: IpVersion, also: readonly string[]): string[] | null {
  if (ranges.length === 0) return null;
  const ofFamily = (list: readonly string[]) =>
    list.flatMap((r) => {
      const p = parseCidr(r);
      return p && p.cidr.version === family ? [formatCidr(p.cidr)] : [];
    });
  const mine = ofFamily(ranges);
  const all = new Set([...(mine.length > 0 ? mine : [family === 4 ? '0.0.0.0/32' : '::/128']), ...ofFamily(also)]);
  return [...all].sort();
}
