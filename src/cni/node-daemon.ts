import { rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { errorMessage } from '../core/index.ts';
import { runPlugin, type NodeConnections } from './plugin.ts';
import { CniError, CniErrorCode } from './spec/index.ts';

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

/**
 * The longest call the daemon reads (its env and stdin as one JSON line). A CNI call is kilobytes; a line past this is
 * answered with a CNI error and the connection closed, so a caller cannot make the daemon buffer without bound.
 */
export const MAX_CALL_BYTES = 1024 * 1024;

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
  // The socket is made with its final mode: a chmod after listen() would leave it open to anyone for a moment.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
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
    if (!(err instanceof CniError)) return void socket.destroy();
    // Said to the plugin (which prints it for the runtime), then closed; the rest of the line is not read.
    const answer: ForwardedAnswer = { stdout: JSON.stringify(err.body('1.0.0')), exitCode: 1, logs: [] };
    socket.end(JSON.stringify(answer) + '\n', () => socket.destroy());
  }
}

/** The call's line, at most {@link MAX_CALL_BYTES}; past that, a CniError and no more reading. */
function firstLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      const end = chunk.indexOf(0x0a);
      if (end >= 0 && size + end <= MAX_CALL_BYTES) {
        socket.off('data', onData);
        return resolve(Buffer.concat([...chunks, chunk.subarray(0, end)]).toString('utf8'));
      }
      size += chunk.length;
      chunks.push(chunk);
      if (end < 0 && size <= MAX_CALL_BYTES) return;
      socket.off('data', onData);
      socket.pause();
      reject(new CniError(CniErrorCode.DECODING_FAILURE, `the forwarded call is longer than ${MAX_CALL_BYTES} bytes`));
    };
    socket.on('data', onData);
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
