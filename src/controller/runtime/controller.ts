import { setMaxListeners } from 'node:events';
import {
  RavenError,
  errorMessage,
  isOutage,
  realClock,
  silentLogger,
  type Clock,
  type Logger,
} from '../../core/index.ts';
import { apiVersionOf, keyOf, objectReference, type KubeObject } from '../../kube/api/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import type { EventRecorder } from '../events/index.ts';
import { RateLimitingQueue, type RateLimiter } from '../workqueue/index.ts';
import type { ControllerMetrics, MetricsProvider } from './metrics.ts';
import { primarySource, type Source } from './source.ts';
import {
  RetryableError,
  terminalErrorOf,
  type ReconcileOutcome,
  type ReconcileResult,
  type Reconciler,
} from './result.ts';

export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in logs, metrics and the `controller` label. */
  name: string;
  /** The primary kind: every change of one of its objects queues that object's key, and Events are recorded on it. */
  for?: SharedInformer<T> | undefined;
  /**
   * Instead of a kind, keys that name no Kubernetes object (a Neutron security group Raven derives from several
   * objects): they come from the sources only, a resync queues `list()`, and failures are logged without an Event.
   */
  keys?: KeySpace | undefined;
  reconcile: Reconciler;
  /** Where else keys come from: other kinds mapped to primary keys, event channels (see {@link Source}). */
  sources?: readonly Source[];
  /** Keys reconciled at once (each key by one worker at a time, whatever this is). Default 1. */
  workers?: number;
  /**
   * A reconcile's signal aborts after this long (the reconcile still holds its key until it returns). Default 60000.
   */
  reconcileTimeoutMs?: number;
  /** On stop, how long in-flight reconciles may run before their signals abort. Default 30000. */
  drainTimeoutMs?: number;
  /** Queue every cached key this often, to catch drift nobody announced (e.g. a port deleted by hand). Default off. */
  resyncEveryMs?: number;
  /** Spacing of retries; client-go's default controller limiter by default. */
  rateLimiter?: RateLimiter;
  /**
   * A retry whose cause is an outage (the Kubernetes API or OpenStack unreachable, or a 5xx: `isOutage`) waits at most
   * this long, so keys that failed during an outage go again within seconds of its end instead of minutes. Default 5000.
   */
  outageRetryDelayMs?: number;
  /** Where failures become Kubernetes Events on the primary object. Without it they are only logged. */
  recorder?: EventRecorder;
  clock?: Clock;
  logger?: Logger;
  metrics?: MetricsProvider;
}

/** The keys of a controller that is not for a Kubernetes kind (see {@link ControllerOptions.keys}). */
export interface KeySpace {
  /** Every key there is now: what a resync queues. */
  list(): Iterable<string>;
}

export interface StartOptions {
  /** Overrides the controller's `drainTimeoutMs` for this stop (0: abort in-flight reconciles at once). */
  drainTimeoutMs?: number;
  /** Aborts in-flight reconciles at once and skips what is still queued (leadership lost, or no time left). */
  hardStop?: AbortSignal;
}

/**
 * controller-runtime's controller: changes from informers become keys in a rate-limited work queue, and `workers`
 * loops hand each key to the {@link Reconciler}. A key is never reconciled by two workers at once, and a change that
 * arrives meanwhile is reconciled again afterwards. See the folder's `index.ts` for the outcome rules.
 *
 * Build one with {@link ControllerBuilder} (`newControllerManagedBy(manager).for(services)…complete(reconciler)`).
 *
 * @example
 * const services = new Controller({
 *   name: 'service', for: serviceInformer, reconcile, workers: 4, recorder,
 *   sources: [informerSource(sliceInformer, sliceToService)],
 * });
 * await services.start(signal); // resolves once stopped and drained
 */
export class Controller<T extends KubeObject> {
  readonly name: string;
  readonly #primary: SharedInformer<T> | undefined;
  readonly #keys: () => Iterable<string>;
  readonly #reconcile: Reconciler;
  readonly #workers: number;
  readonly #timeoutMs: number;
  readonly #drainTimeoutMs: number;
  readonly #resyncEveryMs: number;
  readonly #outageRetryDelayMs: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: Partial<ControllerMetrics>;
  readonly #hasMetrics: boolean;
  readonly #queue: RateLimitingQueue;
  readonly #sources: readonly Source[];
  /** Aborts every in-flight reconcile: when a stop outlives its drain deadline. */
  readonly #hardStop = new AbortController();
  /** Start time of each key being reconciled, for the stuck-worker check. */
  readonly #inFlight = new Map<string, number>();
  /** What each waiting key waits for: its last reconcile's `waiting`, or its last retryable failure's reason. */
  readonly #waiting = new Map<string, string>();
  #started = false;

  constructor(options: ControllerOptions<T>) {
    this.name = options.name;
    this.#primary = options.for;
    const primary = options.for;
    if (!primary === !options.keys)
      throw new RavenError('CONTROLLER_CONFIG_INVALID', `controller ${options.name}: give exactly one of for and keys`);
    this.#keys = primary ? () => primary.lister().list().map(keyOf) : () => options.keys!.list();
    this.#reconcile = options.reconcile;
    this.#workers = options.workers ?? 1;
    this.#timeoutMs = options.reconcileTimeoutMs ?? 60_000;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
    this.#resyncEveryMs = options.resyncEveryMs ?? 0;
    this.#outageRetryDelayMs = options.outageRetryDelayMs ?? 5_000;
    this.#recorder = options.recorder;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ controller: this.name });
    this.#metrics = options.metrics?.controller(this.name) ?? {};
    this.#hasMetrics = options.metrics !== undefined;
    if (!Number.isInteger(this.#workers) || this.#workers < 1)
      throw new RavenError(
        'CONTROLLER_CONFIG_INVALID',
        `controller ${this.name}: workers must be a positive integer, got ${this.#workers}`,
      );
    if (!(this.#timeoutMs > 0))
      throw new RavenError('CONTROLLER_CONFIG_INVALID', `controller ${this.name}: reconcileTimeoutMs must be positive`);
    this.#queue = new RateLimitingQueue({
      clock: this.#clock,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      ...(options.metrics ? { metrics: options.metrics.workQueue(this.name) } : {}),
    });
    this.#sources = [...(primary ? [primarySource(primary)] : []), ...(options.sources ?? [])];
    // Every worker's reconcile listens on it.
    setMaxListeners(0, this.#hardStop.signal);
  }

  /** Keys waiting (not counting keys waiting out a delay). */
  queueLength(): number {
    return this.#queue.len();
  }

  /**
   * Keys queued or being reconciled now, plus one when a key waiting out a delay comes back within `horizonMs`: 0
   * when the controller is idle (for that long).
   */
  pending(horizonMs = 0): number {
    const due = this.#queue.nextDueAt();
    const soon = due !== undefined && due <= this.#clock.now() + horizonMs ? 1 : 0;
    return this.#queue.len() + this.#inFlight.size + soon;
  }

  /**
   * How many keys wait, by what for: the last reconcile of each returned `{ waiting }` or threw a `RetryableError`
   * (its reason). A key leaves the count when a reconcile of it ends otherwise — the object converged, or is gone.
   */
  waiting(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const reason of this.#waiting.values()) counts.set(reason, (counts.get(reason) ?? 0) + 1);
    return counts;
  }

  /** What is wrong, or undefined: a reconcile held past twice its timeout means a reconciler ignores its signal. */
  health(): string | undefined {
    const now = this.#clock.now();
    for (const [key, since] of this.#inFlight) {
      if (now - since > 2 * this.#timeoutMs)
        return `controller ${this.name}: reconcile of ${key} has run ${Math.round((now - since) / 1000)} s, past twice its ${this.#timeoutMs / 1000} s timeout`;
    }
    return undefined;
  }

  /**
   * Subscribes to the informers (which replay what they hold, so every object is reconciled once at start), runs the
   * workers, and when `signal` aborts: stops the sources, lets in-flight and queued reconciles finish within the
   * drain deadline, aborts the rest, and resolves. Informers are run by their owner, not by the controller.
   */
  async start(signal: AbortSignal, options: StartOptions = {}): Promise<void> {
    if (this.#started)
      throw new RavenError('CONTROLLER_ALREADY_STARTED', `controller ${this.name}: start() called twice`);
    this.#started = true;
    this.#log.info({ workers: this.#workers }, 'controller starting');
    this.#metrics.maxConcurrentReconciles?.(this.#workers);
    const unsubscribe = this.#sources.map((s) => s.start((keys) => this.#enqueue(keys), this.#log));
    const stopTimers = this.#startTimers();
    const workers = Array.from({ length: this.#workers }, () => this.#worker());
    const abortNow = (): void =>
      this.#hardStop.abort(
        options.hardStop?.reason ?? new RavenError('CONTROLLER_STOPPED', `controller ${this.name} stopped`),
      );
    options.hardStop?.addEventListener('abort', abortNow, { once: true });
    if (options.hardStop?.aborted) abortNow();

    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    for (const u of unsubscribe) u();
    stopTimers();
    const drainMs = options.drainTimeoutMs ?? this.#drainTimeoutMs;
    const drained = await this.#queue.shutDownWithDrain({ timeoutMs: drainMs, signal: this.#hardStop.signal });
    if (!drained) {
      this.#log.warn(
        { drainTimeoutMs: drainMs, inFlight: [...this.#inFlight.keys()].slice(0, 20) },
        'stopped before the queue drained: aborting in-flight reconciles',
      );
      abortNow();
    }
    await Promise.all(workers);
    options.hardStop?.removeEventListener('abort', abortNow);
    this.#log.info({}, 'controller stopped');
  }

  /** One add per distinct key of an event (see {@link informerSource}). */
  #enqueue(keys: Iterable<string>): void {
    for (const key of new Set(keys)) this.#queue.add(key);
  }

  /** The resync and unfinished-work timers; returns their stop. */
  #startTimers(): () => void {
    const timers: (() => void)[] = [];
    const every = (ms: number, fn: () => void): void => {
      const tick = (): void => {
        fn();
        handle = this.#clock.setTimeout(tick, ms);
      };
      let handle = this.#clock.setTimeout(tick, ms);
      timers.push(() => this.#clock.clearTimeout(handle));
    };
    if (this.#resyncEveryMs > 0)
      every(this.#resyncEveryMs, () => {
        for (const key of this.#keys()) this.#queue.add(key);
      });
    // client-go refreshes the unfinished-work gauges every 500 ms; without metrics there is nothing to refresh.
    if (this.#hasMetrics) every(500, () => this.#queue.updateUnfinishedWork());
    return () => {
      for (const stop of timers) stop();
    };
  }

  async #worker(): Promise<void> {
    for (;;) {
      const item = await this.#queue.get();
      if (item.shutdown) return;
      if (this.#hardStop.signal.aborted) {
        this.#queue.done(item.key);
        continue;
      }
      await this.#process(item.key);
    }
  }

  async #process(key: string): Promise<void> {
    const started = this.#clock.now();
    this.#inFlight.set(key, started);
    this.#metrics.activeWorkers?.(this.#inFlight.size);
    // One controller per reconcile, aborted by its timeout or the hard stop (a listener removed afterwards, rather than
    // AbortSignal.any, which keeps a dependent signal per reconcile alive on the long-lived hard-stop signal).
    const abort = new AbortController();
    const signal = abort.signal;
    // A reconcile may wait on many requests at once (a pool refill tags each new port in parallel), each listening on
    // this signal: past 10, Node would print a MaxListenersExceededWarning for no leak.
    setMaxListeners(0, signal);
    const onHardStop = (): void => abort.abort(this.#hardStop.signal.reason);
    this.#hardStop.signal.addEventListener('abort', onHardStop, { once: true });
    const timer = this.#clock.setTimeout(
      () =>
        abort.abort(new RavenError('RECONCILE_TIMEOUT', `reconcile of ${key} timed out after ${this.#timeoutMs} ms`)),
      this.#timeoutMs,
    );
    let outcome: ReconcileOutcome;
    try {
      // Through a promise, so a reconciler that throws synchronously is handled like one that rejects.
      const result: ReconcileResult | void = await Promise.resolve().then(() => this.#reconcile(key, signal));
      outcome = this.#onResult(key, result);
    } catch (err) {
      outcome = this.#onError(key, err, signal.aborted ? signal.reason : undefined);
    } finally {
      this.#clock.clearTimeout(timer);
      this.#hardStop.signal.removeEventListener('abort', onHardStop);
      this.#inFlight.delete(key);
      this.#queue.done(key);
    }
    const ms = this.#clock.now() - started;
    this.#metrics.activeWorkers?.(this.#inFlight.size);
    this.#metrics.reconciled?.(outcome, ms);
  }

  #onResult(key: string, result: ReconcileResult | void): ReconcileOutcome {
    if (result?.waiting) this.#waiting.set(key, result.waiting);
    else this.#waiting.delete(key);
    const after = result?.requeueAfterMs ?? 0;
    if (after > 0) {
      this.#queue.forget(key);
      this.#queue.addAfter(key, after);
      return 'requeue_after';
    }
    if (result?.requeue) {
      this.#queue.addRateLimited(key);
      return 'requeue';
    }
    this.#queue.forget(key);
    return 'success';
  }

  #onError(key: string, err: unknown, abortReason: unknown): ReconcileOutcome {
    const terminal = terminalErrorOf(err);
    const code = err instanceof RavenError ? err.code : undefined;
    // An abort caused by our own timeout is reported as the timeout, whatever the reconciler wrapped it in.
    const failure = abortReason instanceof RavenError && abortReason.code === 'RECONCILE_TIMEOUT' ? abortReason : err;
    // The log line carries the request ids of the cause chain; the Event's message does not, so that repeats of one
    // failure read the same and aggregate into one Event.
    const logged = errorMessage(failure);
    const message = failure instanceof Error ? failure.message : String(failure);
    if (err instanceof RetryableError) this.#waiting.set(key, err.reason);
    else this.#waiting.delete(key);
    if (terminal) {
      this.#queue.forget(key);
      this.#log.error({ key, code, err: logged }, 'reconcile failed for good (terminal error); not retrying');
      this.#event(key, terminal.reason, message);
      return 'terminal_error';
    }
    const attempt = this.#queue.numRequeues(key) + 1;
    this.#queue.addRateLimited(
      key,
      Math.min(
        (err instanceof RetryableError ? err.maxRetryDelayMs : undefined) ?? Infinity,
        isOutage(err) ? this.#outageRetryDelayMs : Infinity,
      ),
    );
    this.#log.warn({ key, code, attempt, err: logged }, 'reconcile failed; retrying with back-off');
    this.#event(key, err instanceof RetryableError ? err.reason : 'ReconcileError', message);
    return 'error';
  }

  /** A Warning Event on the primary object, when it still exists and a recorder is wired. */
  #event(key: string, reason: string, message: string): void {
    if (!this.#recorder || !this.#primary) return;
    const obj = this.#primary.lister().get(key);
    if (!obj) return;
    const { group, version, kind, resource } = this.#primary.resource;
    const ref = objectReference(obj, { kind: kind ?? resource, apiVersion: apiVersionOf(group, version) });
    this.#recorder.record(ref, 'Warning', reason, message);
  }
}
