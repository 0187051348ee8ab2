import { realClock, TokenBucket, type Clock } from '../../core/index.ts';

/**
 * Decides how long a key waits before its next retry: client-go `util/workqueue/default_rate_limiters.go`.
 */
export interface RateLimiter {
  /** The delay before `key` is retried; records a failure for limiters that count them. */
  when(key: string): number;
  /** Stops tracking `key` (it succeeded): its failures reset. Separate from the queue's `done`. */
  forget(key: string): void;
  /** How many failures are recorded for `key`. */
  numRequeues(key: string): number;
}

/**
 * Per-key exponential backoff: `baseMs · 2^failures`, capped at `maxMs`. The first `when` returns `baseMs`.
 *
 * @example
 * const rl = new ItemExponentialFailureRateLimiter(5, 1000_000);
 * rl.when('a'); // 5
 * rl.when('a'); // 10
 * rl.forget('a'); // next when('a') is 5 again
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #baseMs: number;
  readonly #maxMs: number;

  constructor(baseMs = 5, maxMs = 1000_000) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
  }

  when(key: string): number {
    const exp = this.#failures.get(key) ?? 0;
    this.#failures.set(key, exp + 1);
    // 2^exp overflows to Infinity, never NaN, so the cap always holds.
    return Math.min(this.#baseMs * 2 ** exp, this.#maxMs);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** Per-key: `fastMs` for the first `maxFastAttempts` failures, then `slowMs`. */
export class ItemFastSlowRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #fastMs: number;
  readonly #slowMs: number;
  readonly #maxFastAttempts: number;

  constructor(fastMs: number, slowMs: number, maxFastAttempts: number) {
    this.#fastMs = fastMs;
    this.#slowMs = slowMs;
    this.#maxFastAttempts = maxFastAttempts;
  }

  when(key: string): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    return failures <= this.#maxFastAttempts ? this.#fastMs : this.#slowMs;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * One token bucket over all keys: each `when` reserves a token and returns how long until it is due, so a burst of
 * failures beyond the bucket's size is spread out at `qps`. Tracks no keys.
 *
 * @example
 * const rl = new BucketRateLimiter(new TokenBucket({ qps: 10, burst: 100, clock }));
 */
export class BucketRateLimiter implements RateLimiter {
  readonly #bucket: TokenBucket;

  constructor(bucket: TokenBucket) {
    this.#bucket = bucket;
  }

  when(_key: string): number {
    return this.#bucket.reserve();
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The strictest of several limiters: `when` asks every one (each records the failure) and returns the longest. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: the max of per-key exponential backoff (5 ms doubling to 1000 s) and an
 * overall bucket of 10 qps with a burst of 100, which only matters when many keys fail at once.
 */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(5, 1000_000),
    new BucketRateLimiter(new TokenBucket({ qps: 10, burst: 100, clock })),
  );
}
