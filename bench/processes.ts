/**
 * Parent-side handles of the benchmark's child processes (server-process.ts, watch-process.ts) and the messages they
 * exchange. Children inherit this process's `--import tsx` (and `--expose-gc`, `--cpu-prof` when given).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ServerOptions {
  tls: 'none' | 'self-signed';
  historyLimit?: number;
}

export type ServerCommand =
  { type: 'seed-pods'; namespace: string; count: number } | { type: 'stats' } | { type: 'close' };

export type ServerReply =
  | { type: 'ready'; url: string; token: string; caPem: string | null }
  | { type: 'seeded'; resourceVersion: number }
  | { type: 'stats'; openWatches: number; closedTooSlow: number; rssBytes: number };

export interface WatchOptions {
  url: string;
  token: string;
  caPem: string | null;
  /** Path and query of the watch, e.g. `/api/v1/namespaces/bench/configmaps?watch=true`. */
  path: string;
  count: number;
}

export type WatchCommand = { type: 'drain'; expected: number; timeoutMs: number } | { type: 'close' };

export type WatchReply =
  | { type: 'ready' }
  | { type: 'drained'; minLines: number; totalLines: number; totalBytes: number; waitedMs: number; ended: number };

/** The next message of `type` from a child, or a rejection when it exits first or `timeoutMs` passes. */
export function nextMessage<T extends { type: string }, K extends T['type']>(
  child: ChildProcess,
  type: K,
  timeoutMs: number,
): Promise<Extract<T, { type: K }>> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      if ((message as T).type !== type) return;
      cleanup();
      resolve(message as Extract<T, { type: K }>);
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`child process exited (code ${code}) before sending '${type}'`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no '${type}' from child process within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Forks one of bench/'s child entries with its options as argv[2]. */
export function forkEntry(file: string, options: object): ChildProcess {
  return fork(fileURLToPath(new URL(file, import.meta.url)), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Ends a child: asks it to close, and kills it (by its own handle) if it has not exited within 5 s. */
export async function stopChild(child: ChildProcess, command: { type: 'close' }): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.send(command);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export interface ServerProcess {
  url: string;
  token: string;
  caPem: string | null;
  seedPods(namespace: string, count: number, timeoutMs: number): Promise<number>;
  stats(): Promise<Extract<ServerReply, { type: 'stats' }>>;
  stop(): Promise<void>;
}

/** Starts the API server on 127.0.0.1, port 0, in a child process. */
export async function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  const child = forkEntry('./server-process.ts', options);
  const ready = await nextMessage<ServerReply, 'ready'>(child, 'ready', 30_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    url: ready.url,
    token: ready.token,
    caPem: ready.caPem,
    async seedPods(namespace, count, timeoutMs) {
      child.send({ type: 'seed-pods', namespace, count } satisfies ServerCommand);
      return (await nextMessage<ServerReply, 'seeded'>(child, 'seeded', timeoutMs)).resourceVersion;
    },
    async stats() {
      child.send({ type: 'stats' } satisfies ServerCommand);
      return nextMessage<ServerReply, 'stats'>(child, 'stats', 10_000);
    },
    stop: () => stopChild(child, { type: 'close' }),
  };
}

export interface WatchProcess {
  /** Waits until every watch has received `expected` lines (or `timeoutMs`); reports what arrived. */
  drain(expected: number, timeoutMs: number): Promise<Extract<WatchReply, { type: 'drained' }>>;
  stop(): Promise<void>;
}

/** Opens `options.count` watches from a child process; resolves once every one has its response headers. */
export async function startWatchProcess(options: WatchOptions): Promise<WatchProcess> {
  const child = forkEntry('./watch-process.ts', options);
  await nextMessage<WatchReply, 'ready'>(child, 'ready', 60_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    async drain(expected, timeoutMs) {
      child.send({ type: 'drain', expected, timeoutMs } satisfies WatchCommand);
      return nextMessage<WatchReply, 'drained'>(child, 'drained', timeoutMs + 10_000);
    },
    stop: () => stopChild(child, { type: 'close' }),
  };
}
