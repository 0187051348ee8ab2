import { hostname } from 'node:os';
import { RavenError, errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import type { Event, EventType, ObjectReference } from '../../kube/api/index.ts';
import { KubeStatusError, isNotFound, isTooManyRequests, resources, type KubeClient } from '../../kube/client/index.ts';
import { EventCorrelator, type RecordOptions } from './correlator.ts';

export interface EventRecorderOptions {
  client: KubeClient;
  /** `source.component` and `reportingComponent` (e.g. `raven-controller`). */
  component: string;
  /** `reportingInstance` and `source.host`. Default: the host name. */
  instance?: string;
  clock?: Clock;
  logger?: Logger;
  /** Identical events within this window update one Event. Default 10 min. */
  windowMs?: number;
  /** Spam filter per source+object. Defaults: 1/300 qps, burst 25 (client-go). */
  spamQps?: number;
  spamBurst?: number;
  /**
   * Writes waiting at most; beyond it new events are dropped (client-go's broadcaster drops when full). Default 1000.
   */
  maxPending?: number;
  /** Attempts per write for retryable failures (5xx, 429, unreachable). Default 3 (client-go: 12 × 10 s). */
  maxAttempts?: number;
  /** The wait between attempts. Default 1000 ms. */
  retryDelayMs?: number;
}

interface Write {
  action: 'create' | 'patch';
  event: Event;
}

/** `metav1.Time`: RFC 3339 in whole seconds. */
function timeString(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A retryable failure: the server was busy or failing, or unreachable; a 4xx (but 429) will not get better. */
function retryable(err: unknown): boolean {
  if (err instanceof KubeStatusError) return err.httpCode >= 500 || isTooManyRequests(err);
  return !(err instanceof Error && err.name === 'AbortError');
}

/**
 * Records core/v1 Events the way client-go's `record.EventRecorder` does: correlated (repeats patch one Event's
 * count), spam-filtered, and written in the background. See the folder's `index.ts` for the contract.
 *
 * @example
 * const recorder = new EventRecorder({ client, component: 'raven-controller', logger });
 * const ref = objectReference(service, { kind: 'Service', apiVersion: 'v1' });
 * recorder.record(ref, 'Warning', 'LoadBalancerFailed', err.message);
 * await recorder.close(); // on shutdown
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #instance: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #correlator: EventCorrelator;
  readonly #maxPending: number;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;
  readonly #closing = new AbortController();
  #pending = 0;
  #tail: Promise<void> = Promise.resolve();
  #seq = 0;

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#component = options.component;
    this.#instance = options.instance ?? hostname();
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ component: 'event-recorder' });
    this.#maxPending = options.maxPending ?? 1000;
    this.#maxAttempts = options.maxAttempts ?? 3;
    this.#retryDelayMs = options.retryDelayMs ?? 1000;
    this.#correlator = new EventCorrelator({
      clock: this.#clock,
      source: `${this.#component}/${this.#instance}`,
      ...(options.windowMs !== undefined ? { windowMs: options.windowMs } : {}),
      ...(options.spamQps !== undefined ? { spamQps: options.spamQps } : {}),
      ...(options.spamBurst !== undefined ? { spamBurst: options.spamBurst } : {}),
    });
  }

  /** Writes that are queued or in flight. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Records one occurrence. Never blocks and never throws: the write happens in the background and its failure is
   * logged. Events for cluster-scoped objects go to the `default` namespace, as in client-go. Returns whether the
   * occurrence was taken (false: dropped as a `once` repeat, by the spam filter, or on a full or closed queue), so a
   * caller can log a state once where it records it once.
   */
  record(
    involved: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    options?: RecordOptions,
  ): boolean {
    try {
      if (this.#closing.signal.aborted) {
        this.#log.warn({ involved, reason }, 'event recorded after close: dropped');
        return false;
      }
      const c = this.#correlator.correlate(
        involved,
        type,
        reason,
        message,
        () => this.#newName(involved.name),
        options,
      );
      if (c.action === 'skip') {
        this.#log.debug({ involved, reason }, 'event dropped (spam filter, or already reported)');
        return false;
      }
      if (this.#pending >= this.#maxPending) {
        this.#log.warn({ involved, reason, pending: this.#pending }, 'event queue full: dropped');
        return false;
      }
      const event: Event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: c.name, namespace: involved.namespace || 'default' },
        involvedObject: Object.fromEntries(
          Object.entries(involved).filter(([, v]) => v !== undefined),
        ) as ObjectReference,
        reason,
        message,
        type,
        count: c.count,
        firstTimestamp: timeString(c.firstTimestamp),
        lastTimestamp: timeString(c.lastTimestamp),
        source: { component: this.#component, host: this.#instance },
        reportingComponent: this.#component,
        reportingInstance: this.#instance,
      };
      this.#enqueue({ action: c.action, event });
      return true;
    } catch (err) {
      this.#log.error({ error: errorMessage(err), involved, reason }, 'failed to record an event');
      return false;
    }
  }

  /** Resolves when every write queued so far has finished (or rejects with the signal's reason if it aborts first). */
  async flush(signal?: AbortSignal): Promise<void> {
    const tail = this.#tail;
    if (!signal) return tail;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      void tail.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Stops accepting events and waits for pending writes (retry waits are cut short; `signal` bounds the wait). */
  async close(signal?: AbortSignal): Promise<void> {
    this.#closing.abort(new RavenError('RECORDER_CLOSED', 'event recorder closed'));
    await this.flush(signal);
  }

  /** client-go's `<name>.<%x of UnixNano>`: 16 hex digits; the low digits make names unique within a millisecond. */
  #newName(objectName: string): string {
    const nanos = BigInt(Math.floor(this.#clock.now())) * 1_000_000n + BigInt(this.#seq++ % 1_000_000);
    return `${objectName}.${nanos.toString(16).padStart(16, '0')}`;
  }

  #enqueue(write: Write): void {
    this.#pending++;
    // One write at a time, in order: a patch must follow the create of the same Event (client-go's single sink
    // goroutine).
    this.#tail = this.#tail.then(() => this.#write(write)).finally(() => void this.#pending--);
  }

  async #write(write: Write): Promise<void> {
    const { event } = write;
    const ctx = {
      event: `${event.metadata.namespace}/${event.metadata.name}`,
      involved: event.involvedObject,
      reason: event.reason,
      count: event.count,
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#send(write);
        return;
      } catch (err) {
        const again = attempt < this.#maxAttempts && retryable(err) && !this.#closing.signal.aborted;
        this.#log.warn(
          { ...ctx, action: write.action, attempt, error: errorMessage(err), retry: again },
          'failed to write an event',
        );
        if (!again) return;
        try {
          await this.#clock.sleep(this.#retryDelayMs, this.#closing.signal);
        } catch {
          return;
        }
      }
    }
  }

  async #send({ action, event }: Write): Promise<void> {
    const ns = event.metadata.namespace!;
    if (action === 'patch') {
      try {
        await this.#client.patch(
          resources.events,
          event.metadata.name!,
          ns,
          { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message },
          'merge',
        );
        return;
      } catch (err) {
        // The Event is gone (expired by the server's TTL, or its create failed): create it again with the count so far.
        if (!isNotFound(err)) throw err;
      }
    }
    await this.#client.create(resources.events, event);
  }
}
