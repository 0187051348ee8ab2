/**
 * Raven's configuration as a whole: the settings declared in settings.ts, the rules between them (checks.ts, run even
 * when a setting fails its own check, so every problem is reported at once), and the types derived from them.
 */
import { z } from 'zod';
import type { DeepReadonly } from '../../core/index.ts';
import { crossFieldProblems, type ConfigPurpose } from './checks.ts';
import { settingsSchema, unwrap } from '../../core/settings.ts';

export type { ConfigPurpose } from './checks.ts';
export { logLevels, subnetStrategies, type LogLevel, type SubnetStrategyName } from '../../core/settings.ts';

/** Every setting, with the rules between settings as `purpose` needs them (checks.ts). */
export function configSchemaFor(purpose: ConfigPurpose) {
  return settingsSchema.superRefine(
    (value, ctx) => {
      for (const { path, message, related } of crossFieldProblems(value, purpose))
        ctx.addIssue({ code: 'custom', path, message, params: { related } });
    },
    { when: () => true },
  ); // also when a field failed: all problems are reported together
}

/** The configuration file's schema: every setting, with the rules between settings. */
export const ravenConfigSchema = configSchemaFor('daemon');

/** The file's shape after defaults (before the environment-dependent fields are resolved). */
export type ParsedConfig = z.output<typeof ravenConfigSchema>;

/** The settings whose default depends on the environment, as `loadRavenConfig` resolves them. */
type Resolved = Omit<ParsedConfig, 'kubernetes' | 'router' | 'leaderElection'> & {
  /** true → `inClusterConfig()`; false → `loadConnection({ kubeconfig, context })`. */
  kubernetes: ParsedConfig['kubernetes'] & { inCluster: boolean };
  /** `create`: true unless the pod subnet is an existing one. */
  router: ParsedConfig['router'] & { create: boolean };
  /** `identity`: the setting, else `POD_NAME`, else `<hostname>_<uuid>`. */
  leaderElection: ParsedConfig['leaderElection'] & { identity: string };
};

/**
 * Raven's validated configuration, every default filled in and every environment-dependent setting resolved
 * (`floatingIpNetworkId` defaults to `router.externalNetworkId`; unset means no floating IPs can be made). Setting by
 * setting documentation: README.md (generated from settings.ts).
 */
export type RavenConfig = DeepReadonly<Resolved>;

/**
 * Where an alternative is "exactly one of": which one is set is the choice (validated by `loadRavenConfig`). With both
 * resolved, `subnetId` is the first of `subnetIds` and `cidr` the first of `cidrs` (the primary family).
 */
export type SubnetChoice = RavenConfig['serviceSubnet'];

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** What a file, or the flags layer, may hold: any subset of the settings. */
export type RavenConfigInput = DeepPartial<z.input<typeof ravenConfigSchema>>;

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
