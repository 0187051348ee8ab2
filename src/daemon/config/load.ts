import { randomUUID } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { z } from 'zod';
import { deepFreeze } from '../../core/index.ts';
import { ConfigError } from './errors.ts';
import { CONFIG_FILE_ENV, fallbackEnv, sourceNames } from './fields.ts';
import {
  configSchemaFor,
  knownKeysAt,
  ravenConfigSchema,
  type ConfigPurpose,
  type ParsedConfig,
  type RavenConfig,
  type RavenConfigInput,
} from './schema.ts';
import {
  envLayer,
  fileLayer,
  flagsLayer,
  getPath,
  isObject,
  mergeLayers,
  originOf,
  setPath,
  type Layer,
  type Source,
} from './sources.ts';

export interface LoadRavenConfigOptions {
  /** The YAML config file (`--config`). Default: `RAVEN_CONFIG`, else none (environment, flags and defaults only). */
  file?: string | undefined;
  /**
   * Where `RAVEN_*`, `FLANNEL_NET`, `POD_NAME`, `KUBECONFIG` and `KUBERNETES_SERVICE_HOST` are read. Default
   * `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** Values from the command line (`configFromFlags(opts)`), or overrides from code: they win over everything. */
  flags?: RavenConfigInput;
  /** For the default leader identity. Default: the OS's. */
  hostname?: string;
  /**
   * What the settings are for: `daemon` (the default) or `gc`, which is not asked for the ranges Raven would create
   * (the service subnet; the pod ranges with strategy "namespace"): it never reads them.
   */
  purpose?: ConfigPurpose;
}

/** `subnets.shared.cidr`, `securityGroups[1]`. */
function pathText(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    '',
  );
}

interface Problem {
  text: string;
  /** Whether a source set a value involved (else it is missing, or a default). */
  sourced: boolean;
}

const labelOf = (source: Source) => (source.kind === 'file' ? source.file : source.name);

/**
 * `raven.yaml: a.b: msg`, `RAVEN_X: msg`, `--flag: msg`; `raven.yaml, RAVEN_X: a.b: msg` when a rule read values from
 * several sources; `a.b: msg (set it in …)` when no source set anything involved.
 */
function problem(sources: readonly Source[], path: string, message: string): Problem {
  const [only] = sources;
  if (!only) {
    const names = message === 'is required' ? sourceNames(path) : [];
    return {
      text: `${path || 'config'}: ${message}${names.length > 0 ? ` (set it in the file, ${names.join(' or ')})` : ''}`,
      sourced: false,
    };
  }
  if (sources.length > 1) return { text: `${sources.map(labelOf).join(', ')}: ${path}: ${message}`, sourced: true };
  return {
    text: only.kind === 'file' ? `${only.file}: ${path}: ${message}` : `${only.name}: ${message}`,
    sourced: true,
  };
}

/** Who set `path` (or an ancestor); for a rule between settings also who set its descendants and `related` ones. */
function sourcesOf(origins: ReadonlyMap<string, Source>, path: string, related?: readonly string[]): Source[] {
  const found = [originOf(origins, path)];
  if (related) {
    for (const [key, source] of origins) if (path === '' || key.startsWith(`${path}.`)) found.push(source);
    for (const other of related) found.push(originOf(origins, other));
  }
  const byLabel = new Map<string, Source>();
  for (const source of found) if (source && !byLabel.has(labelOf(source))) byLabel.set(labelOf(source), source);
  return [...byLabel.values()];
}

/** The known key a typo most likely meant (same letters in another case, or one edit away; two for longer keys). */
function closest(key: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++)
        next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  return (
    known.find((k) => k.toLowerCase() === key.toLowerCase()) ??
    known.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= (key.length < 6 ? 1 : 2))
  );
}

function unknownKey(known: readonly string[] | undefined, key: string): string {
  const guess = known && closest(key, known);
  if (guess) return `unknown setting; did you mean "${guess}"?`;
  return known && known.length <= 8 ? `unknown setting (known here: ${known.join(', ')})` : 'unknown setting';
}

/** zod's issues as sentences naming their sources; an unknown key becomes one problem per key. */
function issueProblems(issues: readonly z.core.$ZodIssue[], origins: ReadonlyMap<string, Source>): Problem[] {
  const out: Problem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path);
      for (const key of issue.keys) {
        const path = pathText([...issue.path, key]);
        out.push(problem(sourcesOf(origins, [...issue.path, key].map(String).join('.')), path, unknownKey(known, key)));
      }
      continue;
    }
    const related = issue.code === 'custom' ? (issue.params as { related?: string[] } | undefined)?.related : undefined;
    out.push(
      problem(sourcesOf(origins, issue.path.map(String).join('.'), related), pathText(issue.path), issue.message),
    );
  }
  return out;
}

/** Fallback variables (`FLANNEL_NET`, `POD_NAME`) fill their field only when no source set it (or its alternative). */
function fallbackLayer(env: NodeJS.ProcessEnv, merged: Record<string, unknown>): Layer {
  const values: Record<string, unknown> = {};
  const names = new Map<string, string>();
  const strategy = getPath(merged, 'subnets.strategy') ?? ravenConfigSchema.shape.subnets.parse({}).strategy;
  for (const [name, path] of Object.entries(fallbackEnv)) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    if (path === 'subnets.namespace.cidr') {
      const ns = getPath(merged, 'subnets.namespace');
      if (
        strategy !== 'namespace' ||
        (isObject(ns) && (ns.cidr != null || ns.cidrs != null || ns.subnetPoolId != null || ns.subnetPoolIds != null))
      )
        continue;
    } else if (getPath(merged, path) != null) continue;
    setPath(values, path, raw);
    names.set(path, name);
  }
  return { values, origin: (path) => ({ kind: 'env', name: names.get(path) ?? path }) };
}

/**
 * `cidr` and `cidrs` resolved into each other: `cidrs` lists every range (one per family), `cidr` is the first (the
 * primary family), so readers that know one range only see the primary one.
 */
function withRanges<T extends { cidr?: string | undefined; cidrs?: string[] | undefined }>(group: T): T {
  const cidrs = group.cidrs ?? (group.cidr !== undefined ? [group.cidr] : undefined);
  if (cidrs === undefined) return group;
  return { ...group, cidr: cidrs[0], cidrs };
}

/** `subnetPoolId` and `subnetPoolIds` resolved into each other, as {@link withRanges}. */
function withPools<T extends { subnetPoolId?: string | undefined; subnetPoolIds?: string[] | undefined }>(group: T): T {
  const subnetPoolIds = group.subnetPoolIds ?? (group.subnetPoolId !== undefined ? [group.subnetPoolId] : undefined);
  if (subnetPoolIds === undefined) return group;
  return { ...group, subnetPoolId: subnetPoolIds[0], subnetPoolIds };
}

/** `subnetId` and `subnetIds` resolved into each other, as {@link withRanges}. */
function withSubnets<T extends { subnetId?: string | undefined; subnetIds?: string[] | undefined }>(group: T): T {
  const subnetIds = group.subnetIds ?? (group.subnetId !== undefined ? [group.subnetId] : undefined);
  if (subnetIds === undefined) return group;
  return { ...group, subnetId: subnetIds[0], subnetIds };
}

/** The fields whose defaults depend on the environment. */
function resolve(parsed: ParsedConfig, env: NodeJS.ProcessEnv, hostname: string): RavenConfig {
  const k = parsed.kubernetes;
  const inCluster = k.inCluster ?? (k.kubeconfig === undefined && !env.KUBECONFIG && !!env.KUBERNETES_SERVICE_HOST);
  const floatingIpNetworkId = parsed.floatingIpNetworkId ?? parsed.router.externalNetworkId;
  const { shared } = parsed.subnets;
  const existingPodSubnet =
    parsed.subnets.strategy === 'shared' && (shared.subnetId !== undefined || shared.subnetIds !== undefined);
  return deepFreeze({
    ...parsed,
    subnets: {
      ...parsed.subnets,
      shared: withSubnets(withRanges(parsed.subnets.shared)),
      namespace: withPools(withRanges(parsed.subnets.namespace)),
    },
    serviceSubnet: withSubnets(withRanges(parsed.serviceSubnet)),
    kubernetes: { ...k, inCluster },
    router: { ...parsed.router, create: parsed.router.create ?? !existingPodSubnet },
    ...(floatingIpNetworkId !== undefined ? { floatingIpNetworkId } : {}),
    leaderElection: {
      ...parsed.leaderElection,
      identity: parsed.leaderElection.identity ?? `${hostname}_${randomUUID()}`,
    },
  });
}

/**
 * Raven's configuration from a YAML file, the environment and flags (flags win over the environment, the
 * environment over the file, the file over defaults), validated as a whole.
 *
 * @throws {ConfigError} `CONFIG_INVALID` listing every problem, each naming its source and field, e.g.
 *   `raven.yaml: subnets.namespace.cidr: "10.0.0.0/33" is not a valid CIDR`,
 *   `RAVEN_CLUSTER_ID: must be 1–32 lower-case letters, digits or '-'`, `--workers-pods: must be an integer ≥ 1`.
 * @example
 * const config = loadRavenConfig({ file: opts.config, flags: configFromFlags(opts) });
 * logger.info({ config: describeConfig(config) }, 'configuration');
 */
export function loadRavenConfig(options: LoadRavenConfigOptions = {}): RavenConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env[CONFIG_FILE_ENV]?.trim() || undefined);
  const problems: string[] = [];
  const layers: Layer[] = [];
  if (file !== undefined) {
    const read = fileLayer(file);
    problems.push(...read.problems);
    if (read.layer) layers.push(read.layer);
  }
  layers.push(envLayer(env));
  if (options.flags) layers.push(flagsLayer(structuredClone(options.flags)));
  // Fallbacks only fill what nothing else set, so where they go in the order does not matter.
  const { merged, origins } = mergeLayers([...layers, fallbackLayer(env, mergeLayers(layers).merged)]);

  const schema = options.purpose === undefined ? ravenConfigSchema : configSchemaFor(options.purpose);
  const result = schema.safeParse(merged);
  if (!result.success) {
    // A file that could not be read explains the settings missing from it: report only what other sources got wrong.
    const fileFailed = problems.length > 0;
    problems.push(
      ...issueProblems(result.error.issues, origins)
        .filter((p) => !fileFailed || p.sourced)
        .map((p) => p.text),
    );
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return resolve(result.data, env, options.hostname ?? osHostname());
}
