import { TokenBucket, type Clock } from '../../core/index.ts';
import type { EventType, ObjectReference } from '../../kube/api/index.ts';

export interface CorrelatorOptions {
  clock: Clock;
  /** The reporting component: part of every key, as client-go's `source`. */
  source: string;
  /**
   * An Event object takes further occurrences of its reason until none has come for this long; after it, the next
   * one starts a new Event. Default 10 min (client-go's aggregation interval).
   */
  windowMs?: number;
  /**
   * At most one new Event object per object, type and reason this often: an occurrence with another message within
   * it is folded into the current Event (its message becomes the latest). Default 60 s.
   */
  newEventIntervalMs?: number;
  /** Entries kept in each LRU cache. Default 4096 (client-go's maxLruCacheEntries). */
  cacheSize?: number;
  /** The spam filter's per source+object bucket, charged per write. Default 1/300 qps, burst 25 (client-go's). */
  spamQps?: number;
  spamBurst?: number;
}

export interface RecordOptions {
  /**
   * The event reports a state a reconcile sees again at every pass ("load balancer stuck since T", "port 80/SCTP is
   * unsupported"), not an occurrence: while the Event's latest message is this very message (and the window has not
   * passed since it was counted), a repeat is dropped instead of counted; another message is a new occurrence. This is
   * the reconcilers' "warn once while it holds", kept here so that a reconciler keeps no per-object memory of its own.
   */
  once?: boolean;
}

/**
 * One Event object as the correlator knows it: what the API holds once the writes queued for it have landed. The
 * correlator updates it in place; the recorder reads it when it writes.
 */
export interface AggregatedEvent {
  readonly name: string;
  readonly involved: ObjectReference;
  readonly type: EventType;
  readonly reason: string;
  /** Occurrences so far, including those whose writes were dropped or not yet made. */
  count: number;
  readonly first: number;
  last: number;
  /** The latest occurrence's message. */
  latest: string;
  /** Occurrences with other messages were folded in. */
  combined: boolean;
}

/** An Event object's message: the latest, marked as client-go marks an aggregate when other messages were folded in. */
export function messageOf(event: AggregatedEvent): string {
  return event.combined ? `(combined from similar events): ${event.latest}` : event.latest;
}

/**
 * What to do with one occurrence: start a new Event object (`new`), count it on the current one (`fold`: its count,
 * lastTimestamp and latest message change), or drop it (`skip`: a `once` repeat).
 */
export type Correlation = { action: 'new' | 'fold'; event: AggregatedEvent } | { action: 'skip' };

/** A tiny LRU on Map's insertion order: a hit is moved to the end, the oldest is evicted first. */
class Lru<V> {
  readonly #map = new Map<string, V>();
  constructor(readonly size: number) {}
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.size) this.#map.delete(this.#map.keys().next().value!);
  }
}

function objectKey(o: ObjectReference): string[] {
  return [o.kind, o.apiVersion ?? '', o.namespace ?? '', o.name, o.uid ?? ''];
}

/**
 * client-go's `EventCorrelator` (`tools/record/events_cache.go`), aggregating by reason from the first occurrence.
 * Where it differs, and why:
 * - client-go's EventLogger counts only identical events (same message) on one Event, and its EventAggregator
 *   combines events that differ only in message once 10 distinct ones came within 10 min. Here the key is (source,
 *   involved object, type, reason) from the start: an occurrence with another message is counted on the current
 *   Event, whose message becomes the latest (prefixed `(combined from similar events)` as client-go's aggregate),
 *   unless that Event is at least `newEventIntervalMs` old: then it starts a new one. So one object and reason make
 *   at most one new Event a minute (client-go: up to 10 in 10 min, then one), and a message that varies at each try
 *   (an address, a count) never floods.
 * - client-go's spam filter is charged per occurrence, as each of its occurrences is a write. The recorder coalesces
 *   occurrences into fewer writes, so it charges the filter per write: it still caps what one object costs the API
 *   server, and the counts keep growing in the cache, carried by the next write that passes.
 * - `once` (see {@link RecordOptions.once}) has no client-go counterpart: reconcilers here keep no memory of their own.
 */
export class EventCorrelator {
  readonly #clock: Clock;
  readonly #source: string;
  readonly #windowMs: number;
  readonly #newEventIntervalMs: number;
  readonly #spamQps: number;
  readonly #spamBurst: number;
  readonly #events: Lru<AggregatedEvent>;
  readonly #buckets: Lru<TokenBucket>;

  constructor(options: CorrelatorOptions) {
    this.#clock = options.clock;
    this.#source = options.source;
    this.#windowMs = options.windowMs ?? 600_000;
    this.#newEventIntervalMs = options.newEventIntervalMs ?? 60_000;
    this.#spamQps = options.spamQps ?? 1 / 300;
    this.#spamBurst = options.spamBurst ?? 25;
    this.#events = new Lru(options.cacheSize ?? 4096);
    this.#buckets = new Lru(options.cacheSize ?? 4096);
  }

  /** Counts one occurrence; `newName` names a new Event object. */
  correlate(
    involved: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    newName: () => string,
    options: RecordOptions = {},
  ): Correlation {
    const now = this.#clock.now();
    const key = JSON.stringify([this.#source, ...objectKey(involved), type, reason]);
    const prev = this.#events.get(key);
    const current = prev && now - prev.last <= this.#windowMs ? prev : undefined;
    if (current?.latest === message && options.once) return { action: 'skip' };
    if (current && (current.latest === message || now - current.first < this.#newEventIntervalMs)) {
      current.count++;
      current.last = now;
      current.combined ||= current.latest !== message;
      current.latest = message;
      return { action: 'fold', event: current };
    }
    const event: AggregatedEvent = {
      name: newName(),
      involved,
      type,
      reason,
      count: 1,
      first: now,
      last: now,
      latest: message,
      combined: false,
    };
    this.#events.set(key, event);
    return { action: 'new', event };
  }

  /** Whether one more write about `involved` passes the spam filter (a token bucket per source+object). */
  allowWrite(involved: ObjectReference): boolean {
    const key = JSON.stringify([this.#source, ...objectKey(involved)]);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket({ qps: this.#spamQps, burst: this.#spamBurst, clock: this.#clock });
      this.#buckets.set(key, bucket);
    }
    return bucket.tryTake();
  }
}
