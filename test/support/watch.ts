/**
 * Reading NDJSON watch streams in end-to-end tests: open a watch with fetch, then take parsed events one by one,
 * each wait bounded by a timeout. The whole stream is bounded too (`maxMs`), and `close()` aborts it.
 */
import type { RequestInit, Response } from 'undici';
import type { KubeObject, StatusDetails } from '../../src/kube/api/index.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** The object; a `Status` for ERROR events (then `code`, `reason`, `message` are set). */
  object: KubeObject & { code?: number; reason?: string; message?: string; status?: unknown; details?: StatusDetails };
}

/** Anything that sends an authenticated request to the server under test (e.g. a `TestServer`). */
export interface Requester {
  request(this: void, path: string, init?: RequestInit): Promise<Response>;
}

export interface WatchOptions {
  /** Upper bound on the whole stream: it is aborted after this long (default 30 s). */
  maxMs?: number;
}

/** Default wait for one event. */
export const EVENT_TIMEOUT_MS = 5_000;

export class WatchTimeoutError extends Error {
  override readonly name = 'WatchTimeoutError';
}

/** One open watch stream; events are parsed as they arrive and queued until taken. */
export class WatchStream {
  readonly status: number;
  readonly #controller: AbortController;
  readonly #queue: WatchEvent[] = [];
  #ended = false;
  #closed = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;
  /** Settles when the stream has ended (cleanly, by error, or by `close()`). */
  readonly done: Promise<void>;
  /** The body of a reply that was not a watch stream (status other than 200), once read. */
  errorBody: string | undefined;

  constructor(response: Response, controller: AbortController) {
    this.status = response.status;
    this.#controller = controller;
    this.done = this.#pump(response);
  }

  /** True once the server ended the stream (or it failed, or was closed). */
  get ended(): boolean {
    return this.#ended;
  }

  /** The error the stream failed with (a cut connection, or `maxMs` passed), if any; not set by `close()`. */
  get failure(): Error | undefined {
    return this.#closed ? undefined : this.#failure;
  }

  async #pump(response: Response): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      if (!response.body) return;
      if (response.status !== 200) {
        // Not a stream of events: a failure Status. Keep it for the test to inspect; yield no events.
        this.errorBody = await response.text();
        return;
      }
      for await (const chunk of response.body) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = text.indexOf('\n')) >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          if (line.trim() !== '') this.#queue.push(JSON.parse(line) as WatchEvent);
        }
        this.#notify();
      }
      if (text.trim() !== '') throw new Error(`watch stream ended inside a line: ${text.slice(0, 200)}`);
    } catch (err) {
      this.#failure = err instanceof Error ? err : new Error(String(err));
    } finally {
      this.#ended = true;
      this.#notify();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /**
   * The next event; `undefined` once the stream has ended and every event was taken. Rejects with
   * {@link WatchTimeoutError} when nothing arrives within `timeoutMs`, or with the stream's error.
   */
  async next(timeoutMs = EVENT_TIMEOUT_MS): Promise<WatchEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = this.#queue.shift();
      if (event) return event;
      if (this.#ended) {
        if (this.#failure && !this.#closed) throw this.#failure;
        return undefined;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new WatchTimeoutError(`no watch event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Exactly `count` events (rejects if the stream ends or stalls first); `timeoutMs` bounds the whole wait. */
  async take(count: number, timeoutMs = EVENT_TIMEOUT_MS): Promise<WatchEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const out: WatchEvent[] = [];
    while (out.length < count) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (!event)
        throw new Error(
          `watch ended after ${out.length} of ${count} events: ${JSON.stringify(out.map((e) => e.type))}`,
        );
      out.push(event);
    }
    return out;
  }

  /** Events up to and including the first one `predicate` accepts. */
  async until(predicate: (event: WatchEvent) => boolean, timeoutMs = EVENT_TIMEOUT_MS): Promise<WatchEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const out: WatchEvent[] = [];
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (!event)
        throw new Error(`watch ended before the awaited event; got ${JSON.stringify(out.map((e) => e.type))}`);
      out.push(event);
      if (predicate(event)) return out;
    }
  }

  /** Every event that arrives within `ms` (the stream may stay open): for asserting that nothing (more) comes. */
  async drain(ms: number): Promise<WatchEvent[]> {
    const deadline = Date.now() + ms;
    const out: WatchEvent[] = [];
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return out;
      try {
        const event = await this.next(left);
        if (!event) return out;
        out.push(event);
      } catch (err) {
        if (err instanceof WatchTimeoutError) return out;
        throw err;
      }
    }
  }

  /** Every remaining event until the server ends the stream; rejects if it does not end within `timeoutMs`. */
  async rest(timeoutMs = EVENT_TIMEOUT_MS): Promise<WatchEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const out: WatchEvent[] = [];
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (!event) return out;
      out.push(event);
    }
  }

  /** Aborts the stream (idempotent). */
  close(): void {
    this.#closed = true;
    this.#controller.abort();
  }
}

/**
 * Opens a watch (`path` should carry `watch=true` or use the `/watch/` prefix) and starts reading it.
 * @example
 * const w = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0');
 * const [first] = await w.take(1);
 * w.close();
 */
export async function openWatch(source: Requester, path: string, options: WatchOptions = {}): Promise<WatchStream> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new WatchTimeoutError(`watch ${path} still open after ${options.maxMs ?? 30_000} ms`)),
    options.maxMs ?? 30_000,
  );
  timer.unref();
  controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  let response: Response;
  try {
    response = await source.request(path, { signal: controller.signal });
  } catch (err) {
    controller.abort();
    throw err;
  }
  const stream = new WatchStream(response, controller);
  void stream.done.finally(() => clearTimeout(timer));
  return stream;
}
