/**
 * core: the few things every layer shares (errors, the logger interface, read-only types, time, token buckets, HTTP retry rules).
 * Imports nothing from src/; everything else may import it.
 */
export { RavenError, errorMessage } from './errors.ts';
export { type Logger, silentLogger } from './logger.ts';
export { type DeepReadonly, deepFreeze } from './readonly.ts';
export { type Clock, type TimerHandle, realClock, FakeClock } from './clock.ts';
export { TokenBucket, type TokenBucketOptions } from './token-bucket.ts';
export {
  type RetryOptions,
  defaultRetry,
  isRetryableStatus,
  isRetryableError,
  parseRetryAfter,
  retryDelay,
} from './http-retry.ts';
export { ravenVersion, ravenUserAgent } from './version.ts';
