import { failureStatus, type KubeObject } from '../../../../src/kube/api/index.ts';
import { EXPIRED, type MvccStore, type StoreEvent } from '../store/index.ts';

/** What one watch asks for. */
export interface WatchSpec {
  table: string;
  /** Only this namespace; undefined for all namespaces or cluster-scoped kinds. */
  namespace?: string;
  /** Label and field selectors combined; objects that stop matching are sent as DELETED. */
  matches: (obj: KubeObject) => boolean;
  /** `apiVersion` and `kind` of the watched resource in the version asked for (bookmarks carry them). */
  apiVersion: string;
  kind: string;
  /**
   * How an object is shown on this watch (its apiVersion, or a Table row); `key` names the rendering, so watches that
   * share it share the serialised bytes.
   */
  render: { key: string; fn: (obj: KubeObject) => unknown };
  /** How events are framed on the wire (JSON lines unless the client negotiated protobuf). */
  encoding: WatchEncoding;
  /**
   * Events after this resourceVersion; undefined = the current state as synthetic ADDED events first. It may be newer
   * than the store's: the watch then waits for it.
   */
  fromRv: number | undefined;
  bookmarks: boolean;
  timeoutMs: number;
}

export interface WatchHubOptions {
  /** How often BOOKMARK events go to watches that asked for them. */
  bookmarkIntervalMs: number;
  /** Bytes a watch may have queued unread before it is closed as too slow (real servers do the same). */
  maxQueuedBytes: number;
}

const encoder = new TextEncoder();

/** The framing of a watch stream; `key` names it, so watches that share it share the bytes. */
export interface WatchEncoding {
  key: string;
  event(type: string, object: unknown): Uint8Array;
}

/** One JSON event per line (`application/json` watches). */
export const jsonLines: WatchEncoding = { key: 'json', event: (type, object) => encodeEvent(type, object) };

/** A watch whose client reads too slowly is ended; `tooSlow` counts them (for tests and logs). */
export interface WatchHubStats {
  open: number;
  closedTooSlow: number;
}

/**
 * Fans committed store events out to open watches. Each event is serialised once per (type, apiVersion) and the same
 * bytes are queued to every matching watch; a watch whose unread queue passes `maxQueuedBytes` is ended instead of
 * growing without bound or slowing the others.
 */
export class WatchHub {
  readonly #store: MvccStore;
  readonly #options: WatchHubOptions;
  readonly #byTable = new Map<string, Set<Watcher>>();
  readonly #unsubscribe: () => void;
  readonly #bookmarkTimer: NodeJS.Timeout;
  #closedTooSlow = 0;
  readonly #pendingWakes = new Set<Watcher>();
  #wakeScheduled = false;

  constructor(store: MvccStore, options: WatchHubOptions) {
    this.#store = store;
    this.#options = options;
    this.#unsubscribe = store.subscribe((event) => this.#dispatch(event));
    this.#bookmarkTimer = setInterval(() => this.#sendBookmarks(), options.bookmarkIntervalMs);
  }

  get stats(): WatchHubStats {
    let open = 0;
    for (const set of this.#byTable.values()) open += set.size;
    return { open, closedTooSlow: this.#closedTooSlow };
  }

  /**
   * Opens a watch. Returns the NDJSON byte stream, or `EXPIRED` when `fromRv` has left the history window (the caller
   * answers with a 410 `Expired` event, as the real server does).
   */
  open(spec: WatchSpec): ReadableStream<Uint8Array> | typeof EXPIRED {
    let backlog: StoreEvent[] = [];
    if (spec.fromRv !== undefined) {
      const events = this.#store.eventsSince(spec.table, spec.fromRv);
      if (events === EXPIRED) return EXPIRED;
      backlog = events;
    }
    const watcher = new Watcher(
      spec,
      this.#options.maxQueuedBytes,
      () => this.#forget(watcher),
      (w) => this.#scheduleWake(w),
    );
    if (spec.fromRv === undefined) {
      for (const obj of this.#store.list(spec.table, spec.namespace)) {
        if (spec.matches(obj)) watcher.push(spec.encoding.event('ADDED', spec.render.fn(obj)));
      }
    } else {
      for (const event of backlog) this.#deliver(watcher, event);
    }
    let set = this.#byTable.get(spec.table);
    if (!set) this.#byTable.set(spec.table, (set = new Set()));
    set.add(watcher);
    return watcher.stream;
  }

  /** Ends every open watch: `abort` cuts the connection (a network drop), `clean` ends the stream normally. */
  dropAll(mode: 'abort' | 'clean'): number {
    let n = 0;
    for (const set of this.#byTable.values()) {
      for (const watcher of [...set]) {
        watcher.end(mode === 'abort' ? new Error('watch dropped by fault injection') : undefined);
        n++;
      }
    }
    return n;
  }

  /** Ends every watch on one table (its resource stopped being served: a deleted CRD). */
  endTable(table: string): void {
    for (const watcher of [...(this.#byTable.get(table) ?? [])]) watcher.end();
  }

  close(): void {
    clearInterval(this.#bookmarkTimer);
    this.#unsubscribe();
    this.dropAll('clean');
  }

  /**
   * Wakes watchers with new lines together once the current turn of the event loop is done: every line queued in one
   * turn (several writes, or a bookmark round) leaves in one chunk, so one socket write per watcher, not per event
   * (kube-apiserver likewise flushes when its event channel is empty).
   */
  #scheduleWake(watcher: Watcher): void {
    this.#pendingWakes.add(watcher);
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      const watchers = [...this.#pendingWakes];
      this.#pendingWakes.clear();
      for (const w of watchers) w.wake();
    });
  }

  #forget(watcher: Watcher): void {
    const set = this.#byTable.get(watcher.spec.table);
    set?.delete(watcher);
    if (set?.size === 0) this.#byTable.delete(watcher.spec.table);
  }

  #dispatch(event: StoreEvent): void {
    const set = this.#byTable.get(event.table);
    if (!set) return;
    for (const watcher of set) this.#deliver(watcher, event);
  }

  #deliver(watcher: Watcher, event: StoreEvent): void {
    const { spec } = watcher;
    if (spec.namespace !== undefined && spec.namespace !== event.namespace) return;
    if (spec.fromRv !== undefined && event.rv <= spec.fromRv) return;
    const nowMatches = event.type !== 'DELETED' && spec.matches(event.object);
    const wasMatching = event.prev !== undefined && spec.matches(event.prev);
    let line: Uint8Array;
    if (nowMatches) {
      line = lineFor(event, wasMatching ? 'MODIFIED' : 'ADDED', spec);
    } else if (wasMatching) {
      line = lineFor(event, 'DELETED', spec);
    } else {
      return;
    }
    if (!watcher.push(line)) this.#closedTooSlow++;
  }

  #sendBookmarks(): void {
    const current = this.#store.currentRv;
    const rv = String(current);
    const lines = new Map<string, Uint8Array>();
    for (const set of this.#byTable.values()) {
      for (const watcher of set) {
        // Never a resourceVersion older than the watch asked for (a watch from a future one waits silently).
        if (!watcher.spec.bookmarks || (watcher.spec.fromRv ?? 0) > current) continue;
        const { apiVersion, kind } = watcher.spec;
        const cacheKey = `${apiVersion}\u0000${kind}\u0000${watcher.spec.encoding.key}`;
        let line = lines.get(cacheKey);
        if (!line) {
          line = watcher.spec.encoding.event('BOOKMARK', { apiVersion, kind, metadata: { resourceVersion: rv } });
          lines.set(cacheKey, line);
        }
        if (!watcher.push(line)) this.#closedTooSlow++;
      }
    }
  }
}

/**
 * The serialised line for an event seen as `type` by a watch. A DELETED sent because an object left a watch's
 * selection carries the previous state at the event's resourceVersion (the real cacher does the same).
 */
function lineFor(event: StoreEvent, type: 'ADDED' | 'MODIFIED' | 'DELETED', spec: WatchSpec): Uint8Array {
  const { render, encoding } = spec;
  const cacheKey = `${type}\u0000${render.key}\u0000${encoding.key}`;
  let line = event.lines.get(cacheKey);
  if (!line) {
    let obj = event.object;
    if (type === 'DELETED' && event.type === 'MODIFIED' && event.prev) {
      obj = { ...event.prev, metadata: { ...event.prev.metadata, resourceVersion: String(event.rv) } };
    }
    line = encoding.event(type, render.fn(obj));
    event.lines.set(cacheKey, line);
  }
  return line;
}

/** One NDJSON watch line. */
export function encodeEvent(type: string, object: unknown): Uint8Array {
  return encoder.encode(`{"type":"${type}","object":${JSON.stringify(object)}}\n`);
}

/** One open watch: a bounded queue of lines drained by the HTTP response as fast as the client reads. */
class Watcher {
  readonly spec: WatchSpec;
  readonly stream: ReadableStream<Uint8Array>;
  readonly #maxQueuedBytes: number;
  readonly #onEnd: () => void;
  readonly #scheduleWake: (watcher: Watcher) => void;
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  #ended = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(spec: WatchSpec, maxQueuedBytes: number, onEnd: () => void, scheduleWake: (watcher: Watcher) => void) {
    this.#scheduleWake = scheduleWake;
    this.spec = spec;
    this.#maxQueuedBytes = maxQueuedBytes;
    this.#onEnd = onEnd;
    this.#timer = setTimeout(() => this.end(), spec.timeoutMs);
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.#pull(controller),
        cancel: () => this.end(),
      },
      { highWaterMark: 0 },
    );
  }

  /** Queues a line; returns false when that made the watch too slow (it is then ended, its backlog dropped). */
  push(line: Uint8Array): boolean {
    if (this.#ended) return true;
    this.#queue.push(line);
    this.#queuedBytes += line.byteLength;
    if (this.#queuedBytes > this.#maxQueuedBytes) {
      // Like the real server: drop what the client has not read and end the watch, here with an ERROR event saying
      // why; the client re-watches from the last resourceVersion it processed.
      const status = failureStatus(
        500,
        'InternalError',
        `watch closed: the client read too slowly (more than ${this.#maxQueuedBytes} bytes were waiting); watch again from the last resourceVersion received`,
      );
      const error = this.spec.encoding.event('ERROR', status);
      this.#queue = [error];
      this.#queuedBytes = error.byteLength;
      this.end();
      return false;
    }
    if (this.#wake) this.#scheduleWake(this);
    return true;
  }

  /** Lets a waiting `pull` hand out what is queued. */
  wake(): void {
    this.#wake?.();
  }

  /** Ends the watch: cleanly after the queued lines, or at once with `failure` (the connection is cut). */
  end(failure?: Error): void {
    if (failure) this.#failure = failure;
    if (this.#ended && !failure) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#onEnd();
    this.#wake?.();
  }

  async #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.#queue.length === 0 && !this.#ended) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
    if (this.#failure) {
      controller.error(this.#failure);
      return;
    }
    if (this.#queue.length === 1) controller.enqueue(this.#queue[0]!);
    else if (this.#queue.length > 1) controller.enqueue(Buffer.concat(this.#queue, this.#queuedBytes));
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#ended) controller.close();
  }
}
