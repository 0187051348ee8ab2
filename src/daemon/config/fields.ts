/**
 * The settings as a table, derived from their declarations in settings.ts: which environment variable and which
 * command-line flag set each one, and what it means. The env and flag layers, the error hints and the reference table
 * in README.md are all read from it.
 */
import { z } from 'zod';
import { sectionMeta, settingMeta, settingsSchema, unwrap, type SettingMeta } from '../../core/settings.ts';

/** How a string from the environment or the command line becomes a value. */
export type FieldKind = 'string' | 'int' | 'number' | 'bool' | 'list';

/** One setting: its declaration's metadata, where it is and how strings convert to it. */
export interface ConfigField extends SettingMeta {
  /** Dotted path in the file (camelCase), e.g. `workers.pods`. */
  path: string;
  kind: FieldKind;
}

/** How a string from the environment or the command line becomes a value: the kind of the setting's schema. */
function kindOf(schema: z.ZodType): FieldKind {
  const type = unwrap(schema);
  if (type instanceof z.ZodArray) return 'list';
  if (type instanceof z.ZodBoolean) return 'bool';
  if (type instanceof z.ZodNumber) return type.isInt ? 'int' : 'number';
  return 'string';
}

/** The settings of `schema` at `prefix`, in declaration order; a section's `unreadBy` goes to each of its settings. */
function fieldsOf(schema: z.ZodType, prefix: string, inherited: Pick<SettingMeta, 'unreadBy'>): ConfigField[] {
  const meta = settingMeta.get(schema);
  if (meta) return [{ path: prefix, kind: kindOf(schema), ...inherited, ...meta }];
  const object = unwrap(schema);
  // Every setting is declared with `setting()` (the types see to it): anything else here is a bug in settings.ts.
  if (!(object instanceof z.ZodObject)) throw new Error(`config setting ${prefix} has no declaration`);
  const own = { ...inherited, ...sectionMeta.get(schema) };
  return Object.entries(object.shape as Record<string, z.ZodType>).flatMap(([key, child]) =>
    fieldsOf(child, prefix ? `${prefix}.${key}` : key, own),
  );
}

/** Every setting, as settings.ts declares them. */
export const configFields: readonly ConfigField[] = fieldsOf(settingsSchema, '', {});

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
