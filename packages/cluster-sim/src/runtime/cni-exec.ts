import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { RavenError } from '../../../../src/core/index.ts';
import {
  cniErrorSchema,
  cniResultSchema,
  type CniCommand,
  type CniErrorBody,
  type CniResult,
  type NetConfList,
} from '../../../../src/cni/spec/index.ts';

/** What a runtime knows about one sandbox when it calls a plugin (the spec's environment, unencoded). */
export interface SandboxCall {
  containerId: string;
  /** The network namespace's path; empty for a DEL after it is gone. */
  netns: string;
  ifName: string;
  /** `CNI_ARGS`: `K8S_POD_NAMESPACE`, `K8S_POD_NAME`, `K8S_POD_UID`… */
  args: Readonly<Record<string, string>>;
}

/** A plugin answered with the spec's error object (or broke the protocol). */
export class CniCallError extends RavenError {
  readonly plugin: string;
  readonly body: CniErrorBody | undefined;
  readonly stderr: string;

  constructor(plugin: string, command: CniCommand, message: string, body?: CniErrorBody, stderr = '') {
    super('CNI_PLUGIN_FAILED', `${plugin} ${command}: ${message}`);
    this.plugin = plugin;
    this.body = body;
    this.stderr = stderr;
  }
}

export interface PluginRun {
  /** Parsed stdout: a result for ADD, undefined for DEL and CHECK. */
  result: CniResult | undefined;
  stderr: string;
  elapsedMs: number;
}

/** The plugin executable named `type`, searched in `dirs` as a runtime searches `CNI_PATH`. */
export async function findPlugin(type: string, dirs: readonly string[]): Promise<string> {
  for (const dir of dirs) {
    const path = join(dir, type);
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {
      // not in this directory
    }
  }
  throw new RavenError('CNI_PLUGIN_NOT_FOUND', `CNI plugin "${type}" is not in ${dirs.join(':')}`);
}

/**
 * Runs one plugin exactly as a container runtime does: the configuration as JSON on stdin, the call in `CNI_*`
 * variables, the answer on stdout. A non-zero exit with the spec's error object becomes a {@link CniCallError}.
 */
export function execPlugin(
  path: string,
  command: CniCommand,
  conf: Readonly<Record<string, unknown>>,
  call: SandboxCall,
  options: { dirs: readonly string[]; signal?: AbortSignal; env?: NodeJS.ProcessEnv },
): Promise<PluginRun> {
  const started = performance.now();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    ...options.env,
    CNI_COMMAND: command,
    CNI_CONTAINERID: call.containerId,
    CNI_NETNS: call.netns,
    CNI_IFNAME: call.ifName,
    CNI_ARGS: Object.entries(call.args)
      .map(([k, v]) => `${k}=${v}`)
      .join(';'),
    CNI_PATH: options.dirs.join(':'),
  };
  const name = typeof conf.type === 'string' ? conf.type : path;
  return new Promise((resolve, reject) => {
    const child = spawn(path, [], { env, stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (err) => reject(new CniCallError(name, command, err.message, undefined, stderr)));
    child.on('close', (code) => {
      const elapsedMs = performance.now() - started;
      let parsed: unknown;
      try {
        parsed = stdout.trim() === '' ? undefined : JSON.parse(stdout);
      } catch {
        return reject(
          new CniCallError(name, command, `stdout is not JSON: ${stdout.slice(0, 200)}`, undefined, stderr),
        );
      }
      if (code !== 0) {
        const body = cniErrorSchema.safeParse(parsed);
        const why = body.success ? `${body.data.msg} (code ${body.data.code})` : `exit ${code}: ${stderr.trim()}`;
        return reject(new CniCallError(name, command, why, body.success ? body.data : undefined, stderr));
      }
      if (command !== 'ADD') return resolve({ result: undefined, stderr, elapsedMs });
      const result = cniResultSchema.safeParse(parsed);
      if (!result.success)
        return reject(new CniCallError(name, command, `not a CNI result: ${result.error.message}`, undefined, stderr));
      resolve({ result: result.data, stderr, elapsedMs });
    });
    // A plugin that exits without reading its configuration closes the pipe: its exit status and stdout tell why.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(conf));
  });
}

/** One plugin's configuration inside a list, as libcni builds it: the list's name and version, the previous result. */
function pluginConf(
  list: NetConfList,
  plugin: NetConfList['plugins'][number],
  prevResult: CniResult | undefined,
): Record<string, unknown> {
  return {
    ...plugin,
    cniVersion: list.cniVersion,
    name: list.name,
    ...(prevResult ? { prevResult } : {}),
  };
}

export interface ListRun {
  result: CniResult | undefined;
  /** Each plugin's stderr and time, in the order they ran. */
  runs: { type: string; stderr: string; elapsedMs: number }[];
}

/**
 * Runs a network configuration list as libcni does: ADD through every plugin in order, each given the previous one's
 * result; DEL in reverse order with the cached result, carrying on past failures and reporting the first; CHECK in
 * order with the cached result.
 */
export async function execList(
  list: NetConfList,
  command: Exclude<CniCommand, 'VERSION'>,
  call: SandboxCall,
  options: { dirs: readonly string[]; cached?: CniResult | undefined; signal?: AbortSignal },
): Promise<ListRun> {
  const runs: ListRun['runs'] = [];
  const plugins = command === 'DEL' ? [...list.plugins].reverse() : list.plugins;
  let prev = command === 'ADD' ? undefined : options.cached;
  let firstError: Error | undefined;
  for (const plugin of plugins) {
    const { type } = plugin;
    try {
      const path = await findPlugin(type, options.dirs);
      const run = await execPlugin(path, command, pluginConf(list, plugin, prev), call, options);
      runs.push({ type, stderr: run.stderr, elapsedMs: run.elapsedMs });
      if (command === 'ADD') prev = run.result;
    } catch (err) {
      if (command !== 'DEL') throw err;
      firstError ??= err instanceof Error ? err : new Error(String(err));
    }
  }
  if (firstError) throw firstError;
  return { result: command === 'ADD' ? prev : undefined, runs };
}
