import { spawn } from 'node:child_process';
import { CniError, CniErrorCode } from './spec/index.ts';

/**
 * Runs a command to completion and resolves its stdout; a non-zero exit rejects with an I/O-failure CniError that
 * names the command and carries its stderr. `input` goes to stdin (for `ip -batch -`).
 */
export function run(command: string, args: readonly string[], options: { input?: string; signal?: AbortSignal } = {}) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (err) =>
      reject(new CniError(CniErrorCode.IO_FAILURE, `${command} could not run: ${err.message}`, { cause: err })),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new CniError(
            CniErrorCode.IO_FAILURE,
            `${command} ${args.join(' ')} failed: ${stderr.trim() || `exit ${code}`}`,
            {
              details: stderr.trim(),
            },
          ),
        );
    });
    // A command that exits without reading its input closes the pipe: its exit status says what happened.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** `ip …` in the root namespace, or inside the network namespace at path `netns`. */
export function ip(args: readonly string[], options: { netns?: string; input?: string; signal?: AbortSignal } = {}) {
  const { netns, ...rest } = options;
  return netns ? run('nsenter', [`--net=${netns}`, 'ip', ...args], rest) : run('ip', args, rest);
}

/** Whether a failed `ip` call failed only because the device is not there. */
export function isNoSuchDevice(err: unknown): boolean {
  return err instanceof CniError && /Cannot find device|does not exist/.test(err.message);
}
