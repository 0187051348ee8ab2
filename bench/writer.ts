/**
 * Parent-side handle of the writer child (writer-process.ts): a second process that writes ConfigMaps so the
 * informer being measured has the bench process's event loop to itself. Like processes.ts, the child inherits
 * `--import tsx`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Target } from './http.ts';

export interface WriterOptions extends Target {
  /** Created (or found) before the child says it is ready. */
  namespace: string;
  /** Writes in flight. */
  concurrency: number;
}

export type WriterCommand = { type: 'write'; prefix: string; objects: number; updates: number; capMs: number } | { type: 'close' };

export interface Written {
  type: 'written';
  creates: number;
  updates: number;
  elapsedMs: number;
  /** {@link epochMs} when the last write's reply arrived. */
  lastWriteAt: number;
  /** resourceVersion of `<prefix>-<i>` after its last write ('' if its create did not happen). */
  finalVersions: string[];
}

export type WriterReply = { type: 'ready' } | Written;

function next<K extends WriterReply['type']>(child: ChildProcess, type: K, timeoutMs: number): Promise<Extract<WriterReply, { type: K }>> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      if ((message as WriterReply).type !== type) return;
      done();
      resolve(message as Extract<WriterReply, { type: K }>);
    };
    const onExit = (code: number | null): void => {
      done();
      reject(new Error(`writer process exited (code ${code}) before sending '${type}'`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no '${type}' from the writer process within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export interface WriterProcess {
  /** Creates `<prefix>-0…objects-1`, then `updates` rounds of PUTs of each (with its last resourceVersion). */
  write(prefix: string, objects: number, updates: number, capMs: number): Promise<Written>;
  stop(): Promise<void>;
}

export async function startWriterProcess(options: WriterOptions): Promise<WriterProcess> {
  const file = fileURLToPath(new URL('./writer-process.ts', import.meta.url));
  const child = fork(file, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await next(child, 'ready', 30_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    async write(prefix, objects, updates, capMs) {
      child.send({ type: 'write', prefix, objects, updates, capMs } satisfies WriterCommand);
      return next(child, 'written', capMs + 10_000);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (child.connected) child.send({ type: 'close' } satisfies WriterCommand);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
