/**
 * daemon/config: Raven's configuration, one validated schema from a YAML file, the environment and flags.
 *
 * Contract:
 * - {@link loadRavenConfig}: flags win over the environment, the environment over the file, the file over defaults;
 *   a source that picks one alternative (`subnetId` or `cidr`…) replaces the lower sources' pick. `FLANNEL_NET` and
 *   `POD_NAME` fill their setting only when nothing else does. The result is frozen, every default filled in and the
 *   environment-dependent settings resolved (`kubernetes.inCluster`, `leaderElection.identity`,
 *   `floatingIpNetworkId`).
 * - Every problem is reported at once in one {@link ConfigError} (`CONFIG_INVALID`), each naming its source and
 *   field: `raven.yaml: subnets.namespace.cidr: …`, `RAVEN_CLUSTER_ID: …`, `--workers-pods: …`. Unknown settings in
 *   the file are errors, not ignored.
 * - Each setting is declared once, in core/settings.ts: type, default, validation, variable, flag and meaning. The
 *   rest is derived: {@link RavenConfig} (`z.output`), {@link configFields} (the table of settings, variables and
 *   flags), {@link addConfigFlags} / {@link configFromFlags} (the commander flags of the common settings) and
 *   {@link configReference}'s table in README.md.
 * - No secrets live in the configuration: it names clouds.yaml and kubeconfig files; {@link describeConfig} is safe
 *   to log.
 */
export { loadRavenConfig, type LoadRavenConfigOptions } from './load.ts';
export { ConfigError } from './errors.ts';
export { configFileText } from './save.ts';
export { addConfigFlags, configFromFlags } from './flags.ts';
export { describeConfig, configReference, type ConfigDescription } from './describe.ts';
export { configFields, fallbackEnv, CONFIG_FILE_ENV, type ConfigField, type FieldKind } from './fields.ts';
export {
  ravenConfigSchema,
  logLevels,
  type ConfigPurpose,
  subnetStrategies,
  type LogLevel,
  type SubnetStrategyName,
  type RavenConfigInput,
  type RavenConfig,
  type SubnetChoice,
} from './schema.ts';
export type { ConfigCommand, SettingMeta } from '../../core/settings.ts';
