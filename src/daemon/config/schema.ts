/**
 * The shape of Raven's configuration: every field with its type, default and a message a person can act on. Rules
 * that relate fields to each other are in checks.ts, and run even when a field here fails, so every problem is
 * reported at once.
 */
import { z } from 'zod';
import { cidrProblem, cidrsProblem } from './cidr.ts';
import { crossFieldProblems } from './checks.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CLUSTER_ID_RE = /^[a-z0-9-]{1,32}$/;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** pino's levels. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export const subnetStrategies = ['shared', 'namespace'] as const;
export type SubnetStrategyName = (typeof subnetStrategies)[number];

/** A string checked by `problem` (undefined = fine), with one message per bad value rather than several. */
function checked(problem: (value: string) => string | undefined) {
  return z.string({ error: 'must be a string' }).superRefine((value, ctx) => {
    const p = value === '' ? 'must not be empty' : problem(value);
    if (p !== undefined) ctx.addIssue({ code: 'custom', message: p, input: value });
  });
}

const text = () => checked(() => undefined);
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
/**
 * A nested group of settings; absent means all its defaults. (Every field of a section is optional or defaulted, so
 * `{}` is a valid input; the generic type cannot see that, hence the cast.)
 */
const section = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, { error: 'must be a mapping of settings' }).prefault({} as never);
const positive = () => z.number({ error: 'must be a number > 0' }).positive({ error: 'must be a number > 0' });
const bool = () => z.boolean({ error: 'must be true or false' });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

/**
 * The configuration file's schema (camelCase keys; unknown keys are errors, so a typo is never silently ignored).
 * Defaults are filled in; fields whose default depends on the environment (`kubernetes.inCluster`,
 * `leaderElection.identity`, `floatingIpNetworkId`) are left unset here and resolved by `loadRavenConfig`.
 */
export const ravenConfigSchema = z
  .strictObject({
    clusterId: clusterId(),
    kubernetes: section({
      kubeconfig: text().optional(),
      context: text().optional(),
      inCluster: bool().optional(),
      qps: positive().default(50),
      burst: int(1).default(100),
    }),
    openstack: section({
      cloud: text().optional(),
      concurrency: section({ network: int(1).default(8), loadBalancer: int(1).default(8) }),
      timeoutMs: int(1).default(60_000),
    }),
    subnets: section({
      strategy: oneOf(subnetStrategies).default('namespace'),
      shared: section({
        subnetId: openstackId().optional(),
        subnetIds: idList('subnet').optional(),
        cidr: cidr(true).optional(),
        cidrs: cidrList().optional(),
      }),
      namespace: section({
        subnetPoolId: openstackId().optional(),
        subnetPoolIds: idList('subnet pool').optional(),
        cidr: cidr(false).optional(),
        cidrs: cidrList().optional(),
        prefixLength: int(1, 32).default(24),
        ipv6PrefixLength: int(1, 128).default(64),
      }),
    }),
    serviceSubnet: section({
      subnetId: openstackId().optional(),
      subnetIds: idList('subnet').optional(),
      cidr: cidr(true).optional(),
      cidrs: cidrList().optional(),
    }),
    router: section({
      id: openstackId().optional(),
      externalNetworkId: openstackId().optional(),
      create: bool().optional(),
    }),
    floatingIpNetworkId: openstackId().optional(),
    floatingIps: section({
      allowExternalIPs: bool().default(true),
      adoptCidrs: z.array(cidr(false), { error: 'must be a list of CIDRs' }).default([]),
      adoptProjects: z.array(text(), { error: 'must be a list of project ids' }).default([]),
      networks: z.array(openstackId(), { error: 'must be a list of network ids' }).default([]),
      allowFreeAddresses: bool().default(false),
      grants: z
        .array(
          z.strictObject(
            { namespace: dnsLabel(), cidrs: z.array(cidr(false), { error: 'must be a list of CIDRs' }) },
            { error: 'must be a mapping with namespace and cidrs' },
          ),
          { error: 'must be a list of {namespace, cidrs}' },
        )
        .default([]),
      quarantineSeconds: int(0).default(3600),
    }),
    securityGroups: z.array(openstackId(), { error: 'must be a list of security group ids' }).default([]),
    emulateKubeProxy: bool().default(false),
    translations: section({
      namespaces: bool().default(true),
      pods: bool().default(true),
      services: bool().default(true),
      networkPolicies: bool().default(true),
    }),
    resyncPeriodSeconds: int(0).default(600),
    workers: section({ namespaces: int(1).default(2), pods: int(1).default(8), services: int(1).default(4) }),
    gc: section({ intervalSeconds: int(1).default(300), graceSeconds: int(0).default(120) }),
    quotas: section({ securityGroupsPerNamespace: int(0).default(32), poolPortsPerNamespace: int(0).default(16) }),
    loadBalancer: section({
      pendingRequeueMs: int(1).default(2000),
      stuckAfterSeconds: int(1).default(600),
      classes: z.array(text(), { error: 'must be a list of loadBalancerClass names' }).default([]),
      healthMonitor: bool().default(false),
    }),
    portPools: section({
      enabled: bool().default(true),
      min: int(0).default(2),
      max: int(0).default(8),
      batch: int(1).default(4),
      idleSeconds: int(0).default(600),
      namespaces: z
        .array(
          z.strictObject(
            { namespace: dnsLabel(), min: int(0).optional(), max: int(0).optional(), batch: int(1).optional() },
            { error: 'must be a mapping with namespace and any of min, max, batch' },
          ),
          { error: 'must be a list of {namespace, min, max, batch}' },
        )
        .default([]),
    }),
    leaderElection: section({
      enabled: bool().default(true),
      namespace: dnsLabel().default('kube-system'),
      name: dnsSubdomain().default('raven'),
      identity: text().optional(),
      leaseDurationSeconds: positive().default(15),
      renewDeadlineSeconds: positive().default(10),
      retryPeriodSeconds: positive().default(2),
    }),
    ops: section({
      host: text().default('127.0.0.1'),
      port: int(0, 65535).default(9090),
      unreadyAfterSeconds: int(1).default(30),
    }),
    logLevel: oneOf(logLevels).default('info'),
  })
  .superRefine(
    (value, ctx) => {
      for (const { path, message, related } of crossFieldProblems(value))
        ctx.addIssue({ code: 'custom', path, message, params: { related } });
    },
    { when: () => true },
  ); // also when a field failed: all problems are reported together

/** The file's shape after defaults (before the environment-dependent fields are resolved). */
export type ParsedConfig = z.output<typeof ravenConfigSchema>;

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** What a file, or the flags layer, may hold: any subset of the settings. */
export type RavenConfigInput = DeepPartial<z.input<typeof ravenConfigSchema>>;

const unwrap = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault || schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;

/** The schema of the setting at `path` (with its default or optionality), or undefined when there is none. */
export function schemaAt(path: readonly PropertyKey[]): z.ZodType | undefined {
  let schema: z.ZodType = ravenConfigSchema;
  for (const key of path) {
    const object = unwrap(schema);
    if (!(object instanceof z.ZodObject)) return undefined;
    const next = (object.shape as Record<string, z.ZodType | undefined>)[String(key)];
    if (!next) return undefined;
    schema = next;
  }
  return schema;
}

/** The default of the setting at `path` (dotted): `required`, or its value (undefined when unset means "none"). */
export function defaultAt(path: string): { required: true } | { required: false; value: unknown } {
  const result = schemaAt(path.split('.'))?.safeParse(undefined);
  return result?.success ? { required: false, value: result.data } : { required: true };
}

/** The settings of the object at `path`: for "unknown setting" messages that list the known ones. */
export function knownKeysAt(path: readonly PropertyKey[]): string[] | undefined {
  const schema = schemaAt(path);
  const object = schema && unwrap(schema);
  return object instanceof z.ZodObject ? Object.keys(object.shape) : undefined;
}
