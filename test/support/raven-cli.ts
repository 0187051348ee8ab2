/**
 * The `raven` command (`bin/raven.js`) as a child process, the way a user runs it: an environment with nothing that
 * points it at a real cloud or cluster, and its output collected as it comes.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

export const ravenBin = new URL('../../bin/raven.js', import.meta.url).pathname;

/** This process's environment without `OS_*`, `RAVEN_*`, `KUBECONFIG` and `FLANNEL_NET`, plus `extra`. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([k]) => !k.startsWith('OS_') && !k.startsWith('RAVEN_') && k !== 'KUBECONFIG' && k !== 'FLANNEL_NET',
  );
  return { ...Object.fromEntries(kept), ...extra };
}

export interface RavenChild {
  proc: ChildProcessByStdio<null, Readable, Readable>;
  /** All it printed so far. */
  readonly stdout: string;
  /** The last 20,000 characters it printed on stderr. */
  readonly stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `raven <args>`; `detached` gives it a process group of its own. */
export function spawnRaven(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean },
): RavenChild {
  const proc = spawn(process.execPath, [ravenBin, ...args], {
    cwd: options.cwd,
    env: options.env,
    detached: options.detached ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}
