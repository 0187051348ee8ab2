import { Option, type Command, type OptionValues } from 'commander';
import type { ConfigCommand } from '../../core/settings.ts';
import { CONFIG_FILE_ENV, configFields, fallbackEnv, type ConfigField } from './fields.ts';
import { defaultAt, type RavenConfigInput } from './schema.ts';
import { convert, setPath } from './sources.ts';

/** The setting a variable sets (a field's own, or a fallback's). */
function pathOfVariable(name: string): string | undefined {
  return configFields.find((f) => f.env === name)?.path ?? (fallbackEnv as Record<string, string | undefined>)[name];
}

/**
 * A field's help: its doc's first sentences (enough to say something: "kubeconfig file." alone does not), the default,
 * and where else it is set. "Required." goes when the command gives a default.
 */
function help(field: ConfigField, shownDefault: string | undefined): string {
  let text = '';
  // A sentence ends at ". ", but not the one in "e.g. " or "i.e. " (that would cut every example off).
  for (const sentence of field.doc.replace(/\*\*|`/g, '').split(/(?<!\b(?:e\.g|i\.e)\.)(?<=\.) /)) {
    if (text.length >= 60) break;
    if (sentence === 'Required.' && shownDefault !== undefined) continue;
    text += `${text ? ' ' : ''}${sentence}`;
  }
  const fallback = shownDefault !== undefined ? ` (default: ${shownDefault})` : '';
  return `${text.replace(/\.$/, '')}${fallback} [${field.path}${field.env ? `, $${field.env}` : ''}]`;
}

/**
 * The help groups, most used first: a setting goes in the first whose prefix its path starts with (a prefix ends at a
 * dot or is the whole path). Commander shows the groups in the order their first flag was registered, so the flags are
 * registered group by group.
 */
const helpGroups: readonly (readonly [heading: string, prefixes: readonly string[]])[] = [
  ['Cluster and clouds:', ['clusterId', 'kubernetes.kubeconfig', 'kubernetes.context', 'openstack']],
  ['Pod subnets:', ['subnets']],
  ['Service subnet:', ['serviceSubnet']],
  ['Router and floating IPs:', ['router', 'floatingIpNetworkId', 'floatingIps']],
  ['Features:', ['securityGroups', 'emulateKubeProxy', 'portPools', 'nested', 'vif', 'loadBalancer']],
  ['Tuning:', ['kubernetes', 'workers', 'resyncPeriodSeconds']],
  ['Leader election, ops server and logs:', ['leaderElection', 'ops', 'logLevel', 'logFormat']],
];

/** The index in {@link helpGroups} of a setting's group (one past the last when none claims it: "Other"). */
function groupOf(path: string): number {
  const at = helpGroups.findIndex(([, prefixes]) => prefixes.some((p) => path === p || path.startsWith(`${p}.`)));
  return at === -1 ? helpGroups.length : at;
}

/** The default a person would see take effect: the command's own (`raven dev`'s), else the schema's; or none. */
function defaultShown(
  field: ConfigField,
  commandDefaults: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const own = Object.entries(commandDefaults).find(([name]) => pathOfVariable(name) === field.path)?.[1];
  if (own !== undefined) return field.kind === 'bool' ? ({ true: 'on', false: 'off' }[own] ?? own) : own;
  const d = defaultAt(field.path);
  if (d.required || d.value === undefined || (Array.isArray(d.value) && d.value.length === 0)) return undefined;
  if (typeof d.value === 'boolean') return d.value ? 'on' : 'off';
  return typeof d.value === 'string' ? d.value : JSON.stringify(d.value);
}

/**
 * Registers the configuration flags on a command (`raven run`, `raven plan`, `raven gc`…): `--config <file>` and one
 * flag per common setting the command reads (a setting's `unreadBy` in core/settings.ts). None has a default and none
 * parses its value: unset flags leave the file and environment alone, and bad values are reported with every other
 * problem by `loadRavenConfig`. The help names each setting's default: the schema's, or `commandDefaults` (variables the
 * command sets under the environment, as `raven dev` does).
 *
 * @example
 * addConfigFlags(program.command('run')).action((opts: OptionValues) => {
 *   const config = loadRavenConfig({ file: opts.config as string | undefined, flags: configFromFlags(opts) });
 * });
 */
export function addConfigFlags(
  command: Command,
  use: ConfigCommand = 'run',
  commandDefaults: Readonly<Record<string, string | undefined>> = {},
): Command {
  const first = helpGroups[0]![0];
  command.addOption(new Option('--config <file>', `YAML config file [$${CONFIG_FILE_ENV}]`).helpGroup(first));
  const fields = configFields.filter((f) => f.flag !== undefined && !f.unreadBy?.includes(use));
  // Stable sort: within a group, the schema's order.
  for (const field of fields.sort((a, b) => groupOf(a.path) - groupOf(b.path))) {
    const heading = helpGroups[groupOf(field.path)]?.[0] ?? 'Other settings:';
    command.addOption(new Option(field.flag!, help(field, defaultShown(field, commandDefaults))).helpGroup(heading));
    // Defining `--x` before `--no-x` keeps the value undefined unless one is given (commander's rule).
    if (field.negatable)
      command.addOption(new Option(field.flag!.replace(/^--/, '--no-'), `turn ${field.path} off`).helpGroup(heading));
  }
  return command;
}

/**
 * The values of the flags `addConfigFlags` registered, as a flags layer for `loadRavenConfig` (strings converted to
 * the setting's type; a value that does not convert is passed through so validation names the flag).
 */
export function configFromFlags(opts: OptionValues): RavenConfigInput {
  const values: Record<string, unknown> = {};
  for (const field of configFields) {
    if (field.flag === undefined) continue;
    const value: unknown = opts[new Option(field.flag).attributeName()];
    if (typeof value === 'string' || typeof value === 'boolean')
      setPath(values, field.path, convert(field.kind, value));
  }
  return values;
}
