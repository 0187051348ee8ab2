import { Command } from 'commander';
import { errorMessage, RavenError, ravenVersion } from '../core/index.ts';
import { addRavenCommands } from './cli-raven.ts';

/**
 * The commands of the development tools (`@raven/dev`: the embedded API server, the simulators, `raven dev`). The
 * product names them anyway, hidden, so a build without them says where they are instead of "unknown command".
 */
const devToolCommands = ['apiserver', 'sim', 'dev'] as const;

/**
 * The `raven` command line: the product's commands, then `addDevTools`'s (the development tools add theirs this way,
 * so the product never imports them); without it, `raven dev`, `sim` and `apiserver` fail with where to find them.
 */
export function buildCli(addDevTools?: (program: Command) => void): Command {
  const program = new Command('raven')
    .description('Keeps OpenStack networking (Neutron, Octavia) in step with a Kubernetes cluster.')
    .version(ravenVersion, '-v, --version')
    .showHelpAfterError();
  addRavenCommands(program);
  if (addDevTools) addDevTools(program);
  else
    for (const name of devToolCommands)
      program
        .command(name, { hidden: true })
        .argument('[args...]')
        .helpOption(false)
        .allowUnknownOption()
        .action(() => {
          throw new RavenError(
            'DEV_TOOLS_ABSENT',
            `raven ${name} is part of the development tools: run it from a source checkout (npm ci && npm run build)`,
          );
        });
  return program;
}

/** Entry point: runs the CLI `build` makes; clear one-line errors, exit code 2 for bad input. */
export async function main(argv: string[], build: () => Command = buildCli): Promise<void> {
  try {
    await build().parseAsync(argv);
  } catch (err) {
    const code = err instanceof RavenError ? ` [${err.code}]` : '';
    process.stderr.write(`raven: error${code}: ${errorMessage(err)}\n`);
    process.exitCode = 2;
  }
}
