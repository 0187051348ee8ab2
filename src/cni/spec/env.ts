import { CniError } from './errors.ts';
import { CNI_COMMANDS, CniErrorCode, type CniCommand } from './types.ts';

/** What the runtime passes in the environment (spec "Parameters"). */
export interface CniEnvironment {
  command: CniCommand;
  containerId: string;
  netns: string;
  ifName: string;
  /** `CNI_ARGS`, parsed: `K8S_POD_NAMESPACE`, `K8S_POD_NAME`, `K8S_POD_UID`… */
  args: Record<string, string>;
  path: string;
}

/** `CNI_ARGS`: `KEY=VALUE` pairs separated by `;`. A malformed pair is the runtime's error, so it is refused. */
export function parseCniArgs(raw: string | undefined): Record<string, string> {
  const args: Record<string, string> = {};
  if (!raw) return args;
  for (const pair of raw.split(';')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CniError(CniErrorCode.INVALID_ENVIRONMENT, `CNI_ARGS: "${pair}" is not KEY=VALUE`);
    args[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return args;
}

/**
 * The environment of one invocation, checked: the variables the spec requires for the command must be there
 * (`CNI_NETNS` is optional for DEL, which must work after the namespace is gone).
 */
export function readCniEnvironment(env: NodeJS.ProcessEnv): CniEnvironment {
  const command = env.CNI_COMMAND;
  if (!command) throw new CniError(CniErrorCode.INVALID_ENVIRONMENT, 'CNI_COMMAND is not set');
  if (!(CNI_COMMANDS as readonly string[]).includes(command))
    throw new CniError(
      CniErrorCode.INVALID_ENVIRONMENT,
      `CNI_COMMAND "${command}" is not one of ${CNI_COMMANDS.join(', ')}`,
    );
  const cniCommand = command as CniCommand;
  const required: Record<CniCommand, string[]> = {
    ADD: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME'],
    CHECK: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME'],
    DEL: ['CNI_CONTAINERID', 'CNI_IFNAME'],
    VERSION: [],
  };
  const missing = required[cniCommand].filter((name) => !env[name]);
  if (missing.length > 0)
    throw new CniError(CniErrorCode.INVALID_ENVIRONMENT, `${command} needs ${missing.join(', ')} in the environment`);
  return {
    command: cniCommand,
    containerId: env.CNI_CONTAINERID ?? '',
    netns: env.CNI_NETNS ?? '',
    ifName: env.CNI_IFNAME ?? '',
    args: parseCniArgs(env.CNI_ARGS),
    path: env.CNI_PATH ?? '',
  };
}
