/**
 * Parent-side handle of the writer child (writer-process.ts): a second process that writes ConfigMaps so the
 * informer being measured has the bench process's event loop to itself. Like processes.ts, the child inherits
 * `--import tsx`.
 */
import type { Target } from './http.ts';
import { forkEntry, nextMessage, stopChild } from './processes.ts';

export interface WriterOptions extends Target {
  /** Created (or found) before the child says it is ready. */
  namespace: string;
  /** Writes in flight. */
  concurrency: number;
}

export type WriterCommand =
  { type: 'write'; prefix: string; objects: number; updates: number; capMs: number } | { type: 'close' };

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

export interface WriterProcess {
  /** Creates `<prefix>-0…objects-1`, then `updates` rounds of PUTs of each (with its last resourceVersion). */
  write(prefix: string, objects: number, updates: number, capMs: number): Promise<Written>;
  stop(): Promise<void>;
}

export async function startWriterProcess(options: WriterOptions): Promise<WriterProcess> {
  const child = forkEntry('./writer-process.ts', options);
  await nextMessage<WriterReply, 'ready'>(child, 'ready', 30_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    async write(prefix, objects, updates, capMs) {
      child.send({ type: 'write', prefix, objects, updates, capMs } satisfies WriterCommand);
      return nextMessage<WriterReply, 'written'>(child, 'written', capMs + 10_000);
    },
    stop: () => stopChild(child, { type: 'close' }),
  };
}
