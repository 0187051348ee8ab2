import { RavenError } from '../../core/index.ts';
import type { KubeObject, WatchEvent } from '../api/index.ts';
import { WatchInterruptedError } from './errors.ts';

/**
 * Splits a byte stream into newline-delimited JSON values. Chunks may end anywhere (mid-line, mid-UTF-8 character);
 * blank lines are skipped. A stream that ends inside a line was cut: that throws {@link WatchInterruptedError}.
 */
export async function* ndjson(
  chunks: AsyncIterable<Uint8Array | string>,
  what = 'stream',
): AsyncGenerator<unknown, void, undefined> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield parseLine(line, what);
    }
  }
  pending += decoder.decode();
  if (pending.trim())
    throw new WatchInterruptedError(what, new Error(`the stream ended inside a line (${pending.length} bytes)`));
}

function parseLine(line: string, what: string): unknown {
  try {
    return JSON.parse(line);
  } catch (err) {
    throw new RavenError('KUBE_DECODE', `${what}: a line is not JSON: ${line.slice(0, 120)}`, { cause: err });
  }
}

function isWatchEvent(value: unknown): value is WatchEvent {
  const v = value as { type?: unknown; object?: unknown } | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.type === 'string' &&
    typeof v.object === 'object' &&
    v.object !== null
  );
}

/**
 * The events of a watch response body, in order. Ends when the server ends the stream (e.g. `timeoutSeconds`), or
 * quietly when `signal` aborts; a cut connection throws {@link WatchInterruptedError}. `ERROR` events (410 Expired…)
 * are yielded as they are: deciding to relist is the caller's job. The body is destroyed however iteration stops.
 */
export async function* watchEvents<T extends KubeObject>(
  body: AsyncIterable<Uint8Array> & { destroy(err?: Error): unknown },
  path: string,
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  try {
    for await (const value of ndjson(body, path)) {
      if (!isWatchEvent(value))
        throw new RavenError('KUBE_DECODE', `watch ${path}: not a watch event: ${JSON.stringify(value).slice(0, 120)}`);
      yield value as WatchEvent<T>;
    }
  } catch (err) {
    if (signal?.aborted) return;
    if (err instanceof RavenError) throw err;
    throw new WatchInterruptedError(path, err);
  } finally {
    body.destroy();
  }
}
