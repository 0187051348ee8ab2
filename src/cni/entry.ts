/**
 * The `raven-cni` executable's entry point, kept light on purpose: it imports only Node.js's own modules until it
 * knows it needs more. With `daemonSocket` in the configuration it forwards the call to `raven node` over that unix
 * socket and prints the answer; otherwise it loads the whole plugin and runs the call itself. In the bundle the whole
 * plugin is a lazily evaluated module, so the forwarding path never pays for loading it (docs/cni.md).
 */
import { connect } from 'node:net';
import { text } from 'node:stream/consumers';
import { stdinField } from './stdin-field.ts';

/** How long a forwarded call may take: the daemon bounds each phase itself; this only stops a hung socket. */
const FORWARD_TIMEOUT_MS = 300_000;

export async function runEntry(): Promise<void> {
  // Forwarded, start-up ends here: Node.js and this small module are all the call loads.
  const startupMs = performance.now();
  const stdin = process.stdin.isTTY ? '' : await text(process.stdin);
  const socketPath = stdinField(stdin, 'daemonSocket');
  if (socketPath && process.env.CNI_COMMAND !== 'VERSION') {
    const forwarded = await forward(socketPath, stdin, startupMs);
    // DEL needs neither the API nor the daemon: when the daemon is down (stopped first at a node's shutdown, or
    // crashed), it runs here, so a sandbox can always be torn down.
    if (forwarded || process.env.CNI_COMMAND !== 'DEL') return;
  }
  await runHere(stdin);
}

async function runHere(stdin: string): Promise<void> {
  const { main } = await import('./main.ts');
  // Start-up ends where the work begins: here, once the whole plugin is loaded.
  await main({ stdin, startupMs: performance.now() });
}

/** Forwards the call and prints the daemon's answer; false (and "try again later" printed) when it did not answer. */
async function forward(socketPath: string, stdin: string, startupMs: number): Promise<boolean> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('CNI_') && !!entry[1]),
  );
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(socketPath);
      let data = '';
      socket.setEncoding('utf8');
      socket.setTimeout(FORWARD_TIMEOUT_MS, () => socket.destroy(new Error('no answer in time')));
      socket.once('connect', () => socket.write(JSON.stringify({ env, stdin, startupMs }) + '\n'));
      socket.on('data', (chunk: string) => (data += chunk));
      socket.once('error', reject);
      socket.once('end', () => resolve(data));
    });
    const { stdout, exitCode, logs } = JSON.parse(answer) as { stdout: string; exitCode: number; logs: string[] };
    for (const line of logs) process.stderr.write(line + '\n');
    process.stdout.write(stdout);
    process.exitCode = exitCode;
    return true;
  } catch (err) {
    if (process.env.CNI_COMMAND === 'DEL') return false;
    // Code 11: the runtime retries the sandbox; the daemon may be starting or restarting.
    const msg = `raven node is not answering on ${socketPath}: ${err instanceof Error ? err.message : String(err)}`;
    process.stdout.write(JSON.stringify({ cniVersion: stdinField(stdin, 'cniVersion') ?? '1.0.0', code: 11, msg }));
    process.exitCode = 1;
    return false;
  }
}
