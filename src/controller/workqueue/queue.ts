import { realClock, type Clock, type TimerHandle } from '../../core/index.ts';
import { completeMetrics, type WorkQueueMetrics } from './metrics.ts';

/** What {@link WorkQueue.get} resolves to: a key to process, or word that the queue has shut down and is empty. */
export type GetResult = { key: string; shutdown: false } | { shutdown: true };

/** Options shared by every queue. */
export interface WorkQueueOptions {
  /** Time source for metrics, drain deadlines and delays; {@link realClock} by default. */
  clock?: Clock;
  /** Metric callbacks; any left out are no-ops. */
  metrics?: Partial<WorkQueueMetrics>;
}

/** Options for {@link WorkQueue.shutDownWithDrain}. */
export interface DrainOptions {
  /** Give up after this many milliseconds (on the queue's clock). */
  timeoutMs?: number;
  /** Give up when this aborts. */
  signal?: AbortSignal;
}

interface Waiter {
  resolve(r: GetResult): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * A FIFO of string keys with client-go `util/workqueue/queue.go` semantics:
 *
 * - `add` is a no-op for a key already waiting (the *dirty* set), so a burst of events costs one reconcile.
 * - A key handed out by `get` is *processing* until `done`. Adding it meanwhile marks it dirty but does not queue it
 *   (it is *parked*); `done` then puts it back at the tail. So no key is ever held by two workers at once, and an
 *   add during processing is never lost.
 * - After `shutDown`, adds are ignored; `get` keeps handing out what is queued, then resolves `{ shutdown: true }`.
 *
 * @example
 * const q = new WorkQueue();
 * q.add('default/web');
 * const item = await q.get();
 * if (!item.shutdown) {
 *   try { await reconcile(item.key); } finally { q.done(item.key); }
 * }
 */
export class WorkQueue {
  /** The injected clock (subclasses schedule delays on it). */
  protected readonly clock: Clock;
  /** The metric callbacks, completed with no-ops. */
  protected readonly metrics: WorkQueueMetrics;
  // FIFO as an array with a moving head, compacted now and then (shift() is O(n)).
  #queue: string[] = [];
  #head = 0;
  /** Keys that need processing: queued, or parked behind a worker. */
  readonly #dirty = new Set<string>();
  /** Keys held by a worker → when it got them (for workDuration / unfinishedWork). */
  readonly #processing = new Map<string, number>();
  /** Keys counted by the `adds` metric → when, for the `latency` metric. */
  readonly #addTimes = new Map<string, number>();
  #waiters: Waiter[] = [];
  #shuttingDown = false;
  #drain: { resolve(drained: boolean): void; cleanup(): void } | undefined;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.metrics = completeMetrics(options.metrics);
  }

  /** Marks `key` as needing processing. Ignored while it is already waiting, and after shutdown. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.metrics.adds();
    this.metrics.depth(this.#dirty.size);
    if (!this.#addTimes.has(key)) this.#addTimes.set(key, this.clock.now());
    if (this.#processing.has(key)) return; // parked: done() will queue it
    this.#push(key);
  }

  /** Keys waiting to be handed out (parked keys are not counted until their worker is done). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /**
   * Waits for the next key (FIFO) and marks it processing; the caller must call {@link WorkQueue.done} with it.
   * Resolves `{ shutdown: true }` once the queue is shut down and empty. Rejects with the signal's reason if `signal`
   * aborts first (nothing is taken from the queue then).
   */
  get(signal?: AbortSignal): Promise<GetResult> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.len() > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve({ shutdown: true });
    return new Promise<GetResult>((resolve, reject) => {
      const waiter: Waiter = { resolve, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
    });
  }

  /**
   * Ends processing of `key`. If it was added while processing, it goes back on the queue now.
   * A key that is not processing is ignored (client-go would re-queue a dirty key here, duplicating it).
   */
  done(key: string): void {
    const started = this.#processing.get(key);
    if (started === undefined) return;
    this.metrics.workDuration(this.clock.now() - started);
    this.#processing.delete(key);
    if (this.#dirty.has(key)) this.#push(key);
    // As in client-go, a drain ends when nothing is processing, even if this key just went back on the queue.
    if (this.#processing.size === 0) this.#drain?.resolve(true);
  }

  /** Stops accepting adds; waiting `get` calls resolve `{ shutdown: true }` once the queue is empty. */
  shutDown(): void {
    this.#shuttingDown = true;
    // client-go: a plain ShutDown also cancels a ShutDownWithDrain in progress.
    this.#drain?.resolve(false);
    this.#wakeForShutdown();
  }

  /**
   * Like {@link WorkQueue.shutDown}, then waits until no key is processing (every in-flight key is `done`).
   * Resolves `true` when drained, `false` when the deadline or signal came first or `shutDown()` cut it short.
   * Workers keep calling `get` meanwhile, so keys still queued are handed out as usual.
   */
  shutDownWithDrain(options: DrainOptions = {}): Promise<boolean> {
    this.#shuttingDown = true;
    this.#drain?.resolve(false);
    this.#wakeForShutdown();
    if (this.#processing.size === 0) return Promise.resolve(true);
    const { timeoutMs, signal } = options;
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle | undefined;
      const onAbort = () => drain.resolve(false);
      const drain = {
        cleanup: () => {
          if (timer !== undefined) this.clock.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
        resolve: (drained: boolean) => {
          if (this.#drain !== drain) return;
          this.#drain = undefined;
          drain.cleanup();
          resolve(drained);
        },
      };
      this.#drain = drain;
      if (timeoutMs !== undefined) timer = this.clock.setTimeout(() => drain.resolve(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** True once `shutDown` or `shutDownWithDrain` has been called. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Reports the unfinishedWork and longestRunning metrics now (client-go refreshes them every 500 ms). */
  updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const started of this.#processing.values()) {
      total += now - started;
      longest = Math.max(longest, now - started);
    }
    this.metrics.unfinishedWork(total);
    this.metrics.longestRunning(longest);
  }

  #push(key: string): void {
    this.#queue.push(key);
    // Hand keys straight to waiting workers, oldest waiter first, so a key is never seen by two of them.
    while (this.#waiters.length > 0 && this.len() > 0) {
      const waiter = this.#waiters.shift()!;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.#take());
    }
  }

  #take(): GetResult {
    const key = this.#queue[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    const now = this.clock.now();
    this.#dirty.delete(key);
    this.#processing.set(key, now);
    this.metrics.depth(this.#dirty.size);
    const added = this.#addTimes.get(key);
    if (added !== undefined) {
      this.metrics.latency(now - added);
      this.#addTimes.delete(key);
    }
    return { key, shutdown: false };
  }

  #wakeForShutdown(): void {
    if (this.len() > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
      w.resolve({ shutdown: true });
    }
  }
}
