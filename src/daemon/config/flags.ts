import { Option, type Command, type OptionValues } from 'commander';
import { CONFIG_FILE_ENV, configFields, type ConfigField } from './fields.ts';
import type { RavenConfigInput } from './schema.ts';
import { convert, setPath } from './sources.ts';

/** The first sentence of a field's doc, without markdown, and where else it can be set. */
function help(field: ConfigField): string {
  const sentence = field.doc.replace(/\*\*|`/g, '').split(/(?<=\.) /)[0]!;
  return `${sentence} [${field.path}${field.env ? `, $${field.env}` : ''}]`;
}

/**
 * Registers the configuration flags on a command (`raven run`, `raven plan`, `raven gc`…): `--config <file>` and one
 * flag per common setting (the table in fields.ts). None has a default and none parses its value: unset flags leave
 * the file and environment alone, and bad values are reported with every other problem by `loadRavenConfig`.
 *
 * @example
 * addConfigFlags(program.command('run')).action((opts: OptionValues) => {
 *   const config = loadRavenConfig({ file: opts.config as string | undefined, flags: configFromFlags(opts) });
 * });
 */
export function addConfigFlags(command: Command): Command {
  command.option('--config <file>', `YAML config file [$${CONFIG_FILE_ENV}]`);
  for (const field of configFields) {
    if (field.flag === undefined) continue;
    command.addOption(new Option(field.flag, help(field)));
    // Defining `--x` before `--no-x` keeps the value undefined unless one is given (commander's rule).
    if (field.negatable) command.addOption(new Option(field.flag.replace(/^--/, '--no-'), `turn ${field.path} off`));
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
