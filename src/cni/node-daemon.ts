import { chmod, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { errorMessage } from '../core/index.ts';
import { runPlugin, type NodeConnections } from './plugin.ts';

/** One call forwarded by the thin plugin: its `CNI_*` environment, its stdin, its own start-up time. One JSON line. */
export interface ForwardedCall {
  env: Record<string, string>;
  stdin: string;
  startupMs: number;
}

/** The daemon's answer: what the plugin prints and exits with, and the log lines it writes to the runtime's log. */
export interface ForwardedAnswer {
  stdout: string;
  exitCode: number;
  logs: string[];
}

export interface NodeDaemonOptions {
  socketPath: string;
  connections: NodeConnections;
  log: (entry: Record<string, unknown>) => void;
  /** Called once the socket accepts calls. */
  onListening?: () => void;
}

/**
 * `raven node`: the node side's daemon half (kuryr's split, docs/cni.md). It listens on a unix socket (mode 0600:
 * root's runtime only) and runs each forwarded call through the same `runPlugin` as the standalone plugin, with one
 * long-lived Kubernetes client and one Neutron session instead of new ones per call. Runs until `signal` aborts, then
 * finishes the calls in flight and removes its socket.
 */
export async function serveNodeDaemon(options: NodeDaemonOptions, signal: AbortSignal): Promise<void> {
  const { socketPath, connections } = options;
  await rm(socketPath, { force: true });
  const inFlight = new Set<Promise<void>>();
  // One listener on the daemon's signal for all calls (not one per call): a stop aborts every call in flight.
  const calls = new Set<AbortController>();
  signal.addEventListener('abort', () => calls.forEach((call) => call.abort()), { once: true });
  const server = createServer((socket) => {
    const abort = new AbortController();
    calls.add(abort);
    const done = handle(socket, options, abort).finally(() => {
      calls.delete(abort);
      inFlight.delete(done);
    });
    inFlight.add(done);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  options.log({ msg: 'raven node listening', socket: socketPath });
  options.onListening?.();
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.allSettled(inFlight);
  await rm(socketPath, { force: true });
  await connections.close();
}

async function handle(socket: Socket, options: NodeDaemonOptions, abort: AbortController): Promise<void> {
  // A runtime that gives up closes its end: the call is abandoned with it.
  socket.once('close', () => abort.abort());
  try {
    const call = JSON.parse(await firstLine(socket)) as ForwardedCall;
    const logs: string[] = [];
    const outcome = await runPlugin({
      env: call.env,
      stdin: call.stdin,
      signal: abort.signal,
      startupMs: call.startupMs,
      connections: options.connections,
      log: (entry) => {
        const line = JSON.stringify({ time: new Date().toISOString(), level: 'info', ...entry });
        logs.push(line);
        options.log(entry);
      },
    });
    const answer: ForwardedAnswer = { ...outcome, logs };
    socket.end(JSON.stringify(answer) + '\n');
  } catch (err) {
    options.log({ level: 'error', msg: `a forwarded call failed: ${errorMessage(err)}` });
    socket.destroy();
  }
}

function firstLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
      const end = data.indexOf('\n');
      if (end >= 0) resolve(data.slice(0, end));
    });
    socket.once('error', reject);
    socket.once('end', () => reject(new Error('the plugin closed the connection before its call was complete')));
  });
}

/**
 * {@link serveNodeDaemon}, resolved once the socket accepts calls (or rejected if it never does), with `stopped`: the
 * rest of the run, which ends when `signal` aborts.
 */
export async function startNodeDaemon(
  options: Omit<NodeDaemonOptions, 'onListening'>,
  signal: AbortSignal,
): Promise<{ stopped: Promise<void> }> {
  let listening = () => {};
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const stopped = serveNodeDaemon({ ...options, onListening: listening }, signal);
  await Promise.race([ready, stopped]);
  return { stopped };
}
