/**
 * Rules between fields. They run on a value in which some fields may have failed their own checks (so that every
 * problem is reported at once): each rule reads only what is well-typed and skips what is not.
 */
import { cidrsOverlap, maxSubnetPrefix, parseCidr } from '../../core/cidr.ts';
import { sourceNames } from './fields.ts';

/** One problem at a path of the config. */
export interface FieldProblem {
  path: Array<string | number>;
  message: string;
  /** The other settings (dotted) the rule read: whoever set them is named with the problem. */
  related: string[];
}

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A number that passed its own check (so a bad value is reported once, by that check). */
const num = (v: unknown, min: number, max = Infinity): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : undefined;

/**
 * "Exactly one of" (or "at most one" when not `required`) for the members of `group` at `path`: each member is
 * `[key, what it means]`.
 */
function oneOf(
  group: Obj,
  path: string,
  members: ReadonlyArray<readonly [string, string]>,
  required: string | undefined,
  requiredBy: string,
): FieldProblem[] {
  const base = path.split('.');
  const set = members.filter(([key]) => group[key] !== undefined);
  if (set.length > 1) {
    const [[first], [second]] = set as [[string, string], [string, string]];
    return [
      {
        path: [...base, second],
        message: `cannot be combined with ${path}.${first}: set only one`,
        related: [`${path}.${first}`],
      },
    ];
  }
  if (required !== undefined && set.length === 0) {
    const option = ([key, what]: readonly [string, string]) =>
      `${path}.${key} (${[what, ...sourceNames(`${path}.${key}`)].join('; ')})`;
    const options = members.map(option);
    const listed = `${options.slice(0, -1).join(', ')} or ${options[options.length - 1]!}`;
    return [{ path: base, message: `${required} needs ${listed}`, related: [requiredBy] }];
  }
  return [];
}

/** The ranges of a group: `cidrs`, else `[cidr]` (only well-typed values; a bad one is reported by its own check). */
function rangesOf(group: Obj): { key: 'cidr' | 'cidrs'; values: string[] } | undefined {
  if (Array.isArray(group.cidrs)) {
    const values = group.cidrs.filter((c): c is string => typeof c === 'string' && parseCidr(c) !== undefined);
    return { key: 'cidrs', values };
  }
  const one = str(group.cidr);
  return one !== undefined && parseCidr(one) ? { key: 'cidr', values: [one] } : undefined;
}

const CIDRS_WHAT = 'one range per IP family: dual-stack';

/**
 * What the settings are for. `gc`: `raven gc` reads the pod subnet settings only with strategy "shared" (an operator's
 * subnet carries none of Raven's tags, so its pool ports are known by its id) and never the service subnet: the ranges
 * Raven would create are not asked of it.
 */
export type ConfigPurpose = 'daemon' | 'gc';

function subnetProblems(config: Obj, purpose: ConfigPurpose): FieldProblem[] {
  const subnets = obj(config.subnets);
  const shared = obj(subnets.shared);
  const perNamespace = obj(subnets.namespace);
  const problems: FieldProblem[] = [];
  if (subnets.strategy === 'shared') {
    problems.push(
      ...oneOf(
        shared,
        'subnets.shared',
        [
          ['subnetId', 'an existing subnet'],
          ['subnetIds', 'existing subnets, one per IP family'],
          ['cidr', 'Raven creates the network and subnet'],
          ['cidrs', CIDRS_WHAT],
        ],
        'strategy "shared"',
        'subnets.strategy',
      ),
    );
  }
  if (subnets.strategy === 'namespace') {
    problems.push(
      ...oneOf(
        perNamespace,
        'subnets.namespace',
        [
          ['subnetPoolId', 'a Neutron subnet pool'],
          ['subnetPoolIds', 'one Neutron subnet pool per IP family'],
          ['cidr', 'a range to carve'],
          ['cidrs', CIDRS_WHAT],
        ],
        purpose === 'gc' ? undefined : 'strategy "namespace"',
        'subnets.strategy',
      ),
    );
  }
  // Each namespace subnet must fit in its family's range, and hold a gateway and an address or two.
  const ranges = rangesOf(perNamespace);
  for (const value of ranges?.values ?? []) {
    const range = parseCidr(value)!;
    const key = range.family === 'ipv4' ? 'prefixLength' : 'ipv6PrefixLength';
    const prefixLength = num(perNamespace[key], 1, range.family === 'ipv4' ? 32 : 128);
    const max = maxSubnetPrefix[range.family];
    if (prefixLength !== undefined && (prefixLength < range.prefix || prefixLength > max)) {
      const where = `subnets.namespace.${ranges!.key}`;
      problems.push({
        path: ['subnets', 'namespace', key],
        message: `${prefixLength} does not fit ${where} ${JSON.stringify(value)}: must be from ${range.prefix} to ${max}`,
        related: [where],
      });
    }
  }
  return problems;
}

function serviceProblems(config: Obj, purpose: ConfigPurpose): FieldProblem[] {
  const translations = obj(config.translations);
  const service = obj(config.serviceSubnet);
  const problems = oneOf(
    service,
    'serviceSubnet',
    [
      ['subnetId', 'an existing subnet'],
      ['subnetIds', 'existing subnets, one per IP family'],
      ['cidr', "Raven creates it; use the cluster's service CIDR"],
      ['cidrs', "one per IP family: the cluster's service CIDRs"],
    ],
    translations.services !== false && purpose !== 'gc' ? 'translations.services' : undefined,
    'translations.services',
  );
  const subnets = obj(config.subnets);
  const strategy = subnets.strategy === 'shared' ? 'shared' : 'namespace';
  const pods = rangesOf(obj(subnets[strategy]));
  const services = rangesOf(service);
  const podPath = `subnets.${strategy}.${pods?.key ?? 'cidr'}`;
  for (const serviceCidr of services?.values ?? []) {
    for (const podCidr of pods?.values ?? []) {
      if (!cidrsOverlap(serviceCidr, podCidr)) continue;
      problems.push({
        path: ['serviceSubnet', services!.key],
        message: `${JSON.stringify(serviceCidr)} overlaps the pod range ${podPath} ${JSON.stringify(podCidr)}`,
        related: [podPath],
      });
    }
  }
  return problems;
}

function translationProblems(config: Obj): FieldProblem[] {
  const t = obj(config.translations);
  if (t.namespaces === false && t.pods === false && t.services === false) {
    return [
      { path: ['translations'], message: 'at least one of namespaces, pods and services must be on', related: [] },
    ];
  }
  if (t.pods !== false && t.namespaces === false && obj(config.subnets).strategy === 'namespace') {
    return [
      {
        path: ['translations', 'namespaces'],
        message:
          'must be on when translations.pods is on with strategy "namespace" (pods get ports on their namespace\'s subnet)',
        related: ['translations.pods', 'subnets.strategy'],
      },
    ];
  }
  return [];
}

function kubernetesProblems(config: Obj): FieldProblem[] {
  const k = obj(config.kubernetes);
  if (k.inCluster === true && (k.kubeconfig !== undefined || k.context !== undefined)) {
    return [
      {
        path: ['kubernetes', 'inCluster'],
        message: 'cannot be combined with kubernetes.kubeconfig or kubernetes.context',
        related: ['kubernetes.kubeconfig', 'kubernetes.context'],
      },
    ];
  }
  return [];
}

/** The elector's own rule (client-go's too): lease > renew deadline > 1.2 × retry period. */
/** The topology view shows addresses and ids: off loopback it is served only behind a token. */
function topologyProblems(config: Obj): FieldProblem[] {
  const ops = obj(config.ops);
  if (ops.topology !== true || ops.topologyTokenFile || isLoopbackHost(ops.host)) return [];
  return [
    {
      path: ['ops', 'topologyTokenFile'],
      message: `is required when ops.topology is on and ops.host (${String(ops.host)}) is not a loopback address: the view shows addresses and ids`,
      related: ['ops.topology', 'ops.host'],
    },
  ];
}

/** `127.0.0.0/8`, `::1` and `localhost`: reachable from this machine only. */
export function isLoopbackHost(host: unknown): boolean {
  if (host === undefined) return true;
  if (typeof host !== 'string') return false;
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function leaderProblems(config: Obj): FieldProblem[] {
  const le = obj(config.leaderElection);
  const lease = num(le.leaseDurationSeconds, Number.MIN_VALUE);
  const renew = num(le.renewDeadlineSeconds, Number.MIN_VALUE);
  const retry = num(le.retryPeriodSeconds, Number.MIN_VALUE);
  const related = [
    'leaderElection.leaseDurationSeconds',
    'leaderElection.renewDeadlineSeconds',
    'leaderElection.retryPeriodSeconds',
  ];
  const problems: FieldProblem[] = [];
  if (lease !== undefined && renew !== undefined && !(lease > renew)) {
    problems.push({
      path: ['leaderElection', 'renewDeadlineSeconds'],
      message: `${renew} must be less than leaderElection.leaseDurationSeconds (${lease})`,
      related,
    });
  }
  if (renew !== undefined && retry !== undefined && !(renew > 1.2 * retry)) {
    problems.push({
      path: ['leaderElection', 'retryPeriodSeconds'],
      message: `${retry} is too long: leaderElection.renewDeadlineSeconds (${renew}) must be more than 1.2 × it`,
      related,
    });
  }
  return problems;
}

/** Every cross-field problem of a (possibly partly invalid) config. */
export function crossFieldProblems(config: unknown, purpose: ConfigPurpose = 'daemon'): FieldProblem[] {
  const c = obj(config);
  return [
    ...subnetProblems(c, purpose),
    ...serviceProblems(c, purpose),
    ...translationProblems(c),
    ...kubernetesProblems(c),
    ...leaderProblems(c),
    ...topologyProblems(c),
  ];
}
