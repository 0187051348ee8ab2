import { hostname } from 'node:os';
import {
  RavenError,
  errorMessage,
  realClock,
  silentLogger,
  type Clock,
  type Logger,
  type TimerHandle,
} from '../../core/index.ts';
import {
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  type Event,
  type EventType,
  type ObjectReference,
} from '../../kube/api/index.ts';
import { KubeStatusError, isNotFound, isTooManyRequests, resources, type KubeClient } from '../../kube/client/index.ts';
import { EventCorrelator, messageOf, type AggregatedEvent, type RecordOptions } from './correlator.ts';

export interface EventRecorderOptions {
  client: KubeClient;
  /** `source.component` and `reportingComponent` (e.g. `raven-controller`). */
  component: string;
  /** `reportingInstance` and `source.host`. Default: the host name. */
  instance?: string;
  clock?: Clock;
  logger?: Logger;
  /** An Event takes further occurrences of its reason until none came for this long. Default 10 min. */
  windowMs?: number;
  /** At most one new Event per object, type and reason this often. Default 60 s. */
  newEventIntervalMs?: number;
  /** Further occurrences of an Event reach the API as one patch at most this often. Default 10 s. */
  coalesceMs?: number;
  /** Spam filter per source+object, charged per write. Defaults: 1/300 qps, burst 25 (client-go). */
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

/** `.` and 16 hex digits: the part of an Event's name after its object's name. */
const NAME_SUFFIX_LENGTH = 17;

/**
 * client-go's Event name `<object name>.<%x of UnixNano>`, with the object's name cut (the same cut for every Event
 * of one object) so that the whole stays a DNS subdomain of at most 253 characters: client-go sends the full name and
 * the API server rejects the Event of an object whose name is longer than 236. The hex digits keep names unique.
 */
export function eventName(objectName: string, nanos: bigint): string {
  const max = DNS1123_SUBDOMAIN_MAX_LENGTH - NAME_SUFFIX_LENGTH;
  // A label must not end in '-', nor may the name hold '..': trim what the cut left at the end.
  const head = objectName.length <= max ? objectName : objectName.slice(0, max).replace(/[-.]+$/, '');
  return `${head}.${nanos.toString(16).padStart(16, '0')}`;
}

/** A retryable failure: the server was busy or failing, or unreachable; a 4xx (but 429) will not get better. */
function retryable(err: unknown): boolean {
  if (err instanceof KubeStatusError) return err.httpCode >= 500 || isTooManyRequests(err);
  return !(err instanceof Error && err.name === 'AbortError');
}

/** How many objects' latest Event the recorder keeps (Map order: the least recently changed goes first). */
export const LATEST_EVENTS = 20_000;

/** An object's latest Event, as {@link EventRecorder.latest} answers. */
export interface LatestEvent {
  type: EventType;
  reason: string;
  message: string;
  /** ms since the epoch. */
  at: number;
}

/**
 * Records core/v1 Events the way client-go's `record.EventRecorder` does: correlated (repeats are counted on one
 * Event), spam-filtered, and written in the background, with the repeats of an Event coalesced into one patch per
 * `coalesceMs`. See the folder's `index.ts` for the contract.
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
  readonly #coalesceMs: number;
  readonly #maxPending: number;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;
  readonly #closing = new AbortController();
  /** Events with occurrences not yet written, and the timer that writes them. */
  readonly #due = new Map<AggregatedEvent, TimerHandle>();
  #pending = 0;
  #tail: Promise<void> = Promise.resolve();
  #seq = 0;
  /** Each object's latest Event (what the topology view shows as why it is stuck), oldest dropped past the bound. */
  readonly #latest = new Map<string, LatestEvent>();

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#component = options.component;
    this.#instance = options.instance ?? hostname();
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ component: 'event-recorder' });
    this.#coalesceMs = options.coalesceMs ?? 10_000;
    this.#maxPending = options.maxPending ?? 1000;
    this.#maxAttempts = options.maxAttempts ?? 3;
    this.#retryDelayMs = options.retryDelayMs ?? 1000;
    this.#correlator = new EventCorrelator({
      clock: this.#clock,
      source: `${this.#component}/${this.#instance}`,
      ...(options.windowMs !== undefined ? { windowMs: options.windowMs } : {}),
      ...(options.newEventIntervalMs !== undefined ? { newEventIntervalMs: options.newEventIntervalMs } : {}),
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
   * logged. A new Event is written at once; a repeat is counted and written with the others that follow it within
   * `coalesceMs`. Events for cluster-scoped objects go to the `default` namespace, as in client-go. Returns whether
   * the occurrence was taken (false: dropped as a `once` repeat, after close, or a new Event's write dropped by the
   * spam filter or a full queue), so a caller can log a state once where it records it once.
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
      this.#remember(involved, type, reason, message);
      const c = this.#correlator.correlate(
        involved,
        type,
        reason,
        message,
        () => this.#newName(involved.name),
        options,
      );
      if (c.action === 'skip') {
        this.#log.debug({ involved, reason }, 'event dropped: already reported');
        return false;
      }
      if (c.action === 'new') return this.#submit(c.event, 'create');
      if (!this.#due.has(c.event))
        this.#due.set(
          c.event,
          this.#clock.setTimeout(() => {
            this.#due.delete(c.event);
            this.#submit(c.event, 'patch');
          }, this.#coalesceMs),
        );
      return true;
    } catch (err) {
      this.#log.error({ error: errorMessage(err), involved, reason }, 'failed to record an event');
      return false;
    }
  }

  /**
   * Writes the occurrences still waiting out `coalesceMs` now, then resolves when every write queued so far has
   * finished (or rejects with the signal's reason if it aborts first).
   */
  async flush(signal?: AbortSignal): Promise<void> {
    for (const [event, timer] of this.#due) {
      this.#clock.clearTimeout(timer);
      this.#due.delete(event);
      this.#submit(event, 'patch');
    }
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

  /** Stops accepting events and writes what is pending (retry waits are cut short; `signal` bounds the wait). */
  async close(signal?: AbortSignal): Promise<void> {
    this.#closing.abort(new RavenError('RECORDER_CLOSED', 'event recorder closed'));
    await this.flush(signal);
  }

  /**
   * The latest Event recorded on an object by this process (its type, reason, message and when it was first said), or
   * undefined. In memory, for the last {@link LATEST_EVENTS} objects that had one.
   */
  latest(kind: string, namespace: string, name: string): LatestEvent | undefined {
    return this.#latest.get(`${kind}/${namespace}/${name}`);
  }

  #remember(involved: ObjectReference, type: EventType, reason: string, message: string): void {
    const key = `${involved.kind}/${involved.namespace ?? ''}/${involved.name}`;
    const was = this.#latest.get(key);
    if (was?.type === type && was.reason === reason && was.message === message) return;
    this.#latest.delete(key);
    this.#latest.set(key, { type, reason, message, at: this.#clock.now() });
    if (this.#latest.size > LATEST_EVENTS) this.#latest.delete(this.#latest.keys().next().value!);
  }

  #newName(objectName: string): string {
    // The low digits make names unique within a millisecond.
    return eventName(objectName, BigInt(Math.floor(this.#clock.now())) * 1_000_000n + BigInt(this.#seq++ % 1_000_000));
  }

  /**
   * Queues a write of the Event as it stands now, unless the spam filter or a full queue drops it: its count stays in
   * the correlator, and the next write carries it. A patch that finds no Event creates it (see {@link #send}).
   */
  #submit(aggregated: AggregatedEvent, action: Write['action']): boolean {
    const { involved, reason } = aggregated;
    if (!this.#correlator.allowWrite(involved)) {
      this.#log.debug({ involved, reason, count: aggregated.count }, 'event write dropped by the spam filter');
      return false;
    }
    if (this.#pending >= this.#maxPending) {
      this.#log.warn({ involved, reason, pending: this.#pending }, 'event queue full: dropped');
      return false;
    }
    const event: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: aggregated.name, namespace: involved.namespace || 'default' },
      involvedObject: Object.fromEntries(
        Object.entries(involved).filter(([, v]) => v !== undefined),
      ) as ObjectReference,
      reason,
      message: messageOf(aggregated),
      type: aggregated.type,
      count: aggregated.count,
      firstTimestamp: timeString(aggregated.first),
      lastTimestamp: timeString(aggregated.last),
      source: { component: this.#component, host: this.#instance },
      reportingComponent: this.#component,
      reportingInstance: this.#instance,
    };
    this.#enqueue({ action, event });
    return true;
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
        // The Event is gone (expired by the server's TTL, or its create failed or was dropped): create it with the count
        // so far.
        if (!isNotFound(err)) throw err;
      }
    }
    await this.#client.create(resources.events, event);
  }
}
