/**
 * controller/workqueue: client-go's `util/workqueue`, ported rule for rule, with time injected through core's Clock.
 *
 * Contract:
 * - Keys are strings (`namespace/name`). `add` dedups against keys already waiting.
 * - A key handed out by `get` is held by exactly one worker until `done`; adding it meanwhile parks it, and `done`
 *   queues it again — never two workers on one key, never a lost add.
 * - `addAfter` keeps the earliest due time per key; `addRateLimited` delays by a {@link RateLimiter} (by default
 *   per-key 5 ms·2ⁿ up to 1000 s, combined with a 10 qps / 100 burst bucket); `forget` resets a key's failures and is
 *   separate from `done`.
 * - `shutDown` ignores new adds and lets `get` return `{ shutdown: true }` once the queue is empty;
 *   `shutDownWithDrain` also waits (up to a deadline or signal) for in-flight keys to be `done`.
 * - Metrics are callbacks named for Prometheus; the queue depends on no metrics library.
 */
export { WorkQueue, type WorkQueueOptions, type GetResult, type DrainOptions } from './queue.ts';
export { DelayingQueue } from './delaying-queue.ts';
export { RateLimitingQueue, type RateLimitingQueueOptions } from './rate-limiting-queue.ts';
export {
  type RateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiters.ts';
export { type WorkQueueMetrics, workQueueMetricNames, noopMetrics } from './metrics.ts';
