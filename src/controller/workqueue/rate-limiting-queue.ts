import { DelayingQueue } from './delaying-queue.ts';
import type { WorkQueueOptions } from './queue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';

/** Options for {@link RateLimitingQueue}. */
export interface RateLimitingQueueOptions extends WorkQueueOptions {
  /** {@link defaultControllerRateLimiter} on the queue's clock by default. */
  rateLimiter?: RateLimiter;
}

/**
 * A {@link DelayingQueue} whose retries are spaced by a {@link RateLimiter}: client-go
 * `util/workqueue/rate_limiting_queue.go`. A worker calls `addRateLimited` when a reconcile fails, `forget` when it
 * succeeds, and `done` in every case.
 *
 * @example
 * const item = await q.get();
 * if (item.shutdown) return;
 * try {
 *   await reconcile(item.key);
 *   q.forget(item.key);
 * } catch {
 *   q.addRateLimited(item.key);
 * } finally {
 *   q.done(item.key);
 * }
 */
export class RateLimitingQueue extends DelayingQueue {
  readonly #limiter: RateLimiter;

  constructor(options: RateLimitingQueueOptions = {}) {
    super(options);
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
  }

  /** Adds `key` after the rate limiter's delay for it (which counts a failure), but no later than `maxDelayMs`. */
  addRateLimited(key: string, maxDelayMs = Infinity): void {
    this.addAfter(key, Math.min(this.#limiter.when(key), maxDelayMs));
  }

  /** Resets `key`'s failures in the rate limiter. Does not touch the queue; still call `done`. */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** How many times `key` has been rate-limited since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#limiter.numRequeues(key);
  }
}
