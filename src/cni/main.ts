import { text } from 'node:stream/consumers';
import { runPlugin } from './plugin.ts';

/**
 * The `raven-cni` process: the runtime's environment and stdin in, the spec's answer on stdout, one JSON log line
 * per call on stderr. SIGTERM/SIGINT abort the call (a runtime gives up on a plugin that way).
 */
export async function main(given?: { stdin: string; startupMs: number }): Promise<void> {
  // Time since the process began: Node.js start-up and loading this module.
  const startupMs = given?.startupMs ?? performance.now();
  const abort = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => abort.abort());
  const stdin = given?.stdin ?? (process.stdin.isTTY ? '' : await text(process.stdin));
  const outcome = await runPlugin({
    env: process.env,
    stdin,
    signal: abort.signal,
    startupMs,
    log: (entry) =>
      process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', ...entry }) + '\n'),
  });
  process.stdout.write(outcome.stdout);
  process.exitCode = outcome.exitCode;
}
