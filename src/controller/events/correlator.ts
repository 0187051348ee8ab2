import { TokenBucket, type Clock } from '../../core/index.ts';
import type { EventType, ObjectReference } from '../../kube/api/index.ts';

export interface CorrelatorOptions {
  clock: Clock;
  /** The reporting component: part of every key, as client-go's `source`. */
  source: string;
  /**
   * Identical events further apart than this start a new Event object. Default 10 min (client-go's aggregation window).
   */
  windowMs?: number;
  /** Entries kept in each LRU cache. Default 4096 (client-go's maxLruCacheEntries). */
  cacheSize?: number;
  /** The spam filter's per source+object bucket. Default 1/300 qps, burst 25 (client-go's defaults). */
  spamQps?: number;
  spamBurst?: number;
}

export interface RecordOptions {
  /**
   * The event reports a state a reconcile sees again at every pass ("load balancer stuck since T", "port 80/SCTP is
   * unsupported"), not an occurrence: an identical event (same object, type, reason and message) recorded within the
   * window is dropped instead of counted, and the state is reported again once the window has passed. This is the
   * reconcilers' "warn once while it holds", kept here so that a reconciler keeps no per-object memory of its own.
   */
  once?: boolean;
}

/** What to write: create a new Event, or patch the existing one with the new count and lastTimestamp. */
export type Correlation =
  | { action: 'create'; name: string; count: number; firstTimestamp: number; lastTimestamp: number }
  | { action: 'patch'; name: string; count: number; firstTimestamp: number; lastTimestamp: number }
  | { action: 'skip' };

interface Seen {
  name: string;
  count: number;
  first: number;
  last: number;
}

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
 * client-go's `EventCorrelator`, minus the message aggregator: an LRU of identical events (source, involved object,
 * type, reason, message) turns a repeat into a patch of the existing Event (count+1, lastTimestamp), and a spam
 * filter (a token bucket per source+object) drops what exceeds the rate. As in client-go, a dropped event still
 * counts, so the next one written carries the true count.
 */
export class EventCorrelator {
  readonly #clock: Clock;
  readonly #source: string;
  readonly #windowMs: number;
  readonly #spamQps: number;
  readonly #spamBurst: number;
  readonly #seen: Lru<Seen>;
  readonly #buckets: Lru<TokenBucket>;

  constructor(options: CorrelatorOptions) {
    this.#clock = options.clock;
    this.#source = options.source;
    this.#windowMs = options.windowMs ?? 600_000;
    this.#spamQps = options.spamQps ?? 1 / 300;
    this.#spamBurst = options.spamBurst ?? 25;
    this.#seen = new Lru(options.cacheSize ?? 4096);
    this.#buckets = new Lru(options.cacheSize ?? 4096);
  }

  /**
   * Decides what to write for one occurrence; `newName` makes the name of a new Event. With `once`, an identical
   * event seen within the window is skipped rather than counted (see {@link RecordOptions.once}).
   */
  correlate(
    involved: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    newName: () => string,
    options: RecordOptions = {},
  ): Correlation {
    const now = this.#clock.now();
    const key = JSON.stringify([this.#source, ...objectKey(involved), type, reason, message]);
    const prev = this.#seen.get(key);
    let result: Correlation;
    if (options.once && prev && now - prev.last <= this.#windowMs) return { action: 'skip' };
    if (prev && now - prev.last <= this.#windowMs) {
      const next = { ...prev, count: prev.count + 1, last: now };
      this.#seen.set(key, next);
      result = { action: 'patch', name: next.name, count: next.count, firstTimestamp: next.first, lastTimestamp: now };
    } else {
      const name = newName();
      this.#seen.set(key, { name, count: 1, first: now, last: now });
      result = { action: 'create', name, count: 1, firstTimestamp: now, lastTimestamp: now };
    }
    return this.#allowed(involved) ? result : { action: 'skip' };
  }

  #allowed(involved: ObjectReference): boolean {
    const key = JSON.stringify([this.#source, ...objectKey(involved)]);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket({ qps: this.#spamQps, burst: this.#spamBurst, clock: this.#clock });
      this.#buckets.set(key, bucket);
    }
    return bucket.tryTake();
  }
}
