/**
 * core: the few things every layer shares (errors, the logger interface, read-only types, time, token buckets, HTTP
 * retry rules, IP arithmetic, compact string maps and interning).
 * Imports nothing from src/; everything else may import it.
 */
export { RavenError, errorMessage, isOutage } from './errors.ts';
export { type Logger, silentLogger } from './logger.ts';
export { type DeepReadonly, deepFreeze } from './readonly.ts';
export { type Clock, type TimerHandle, realClock, FakeClock } from './clock.ts';
export { TokenBucket, type TokenBucketOptions } from './token-bucket.ts';
export { StringPool } from './string-pool.ts';
export { StringSetMap } from './string-set-map.ts';
export {
  type RetryOptions,
  type AttemptOutcome,
  type AttemptReport,
  type RetryLoop,
  type RetryVerdict,
  defaultRetry,
  isRetryableStatus,
  isRetryableStatusCode,
  isRetryableError,
  parseRetryAfter,
  retryDelay,
  retrying,
} from './http-retry.ts';
export {
  type IpVersion,
  type IpAddress,
  type IpCidr,
  type IpParseOptions,
  type ParsedCidr,
  addressBits,
  parseIp,
  formatIp,
  ipBytes,
  isIPv4Mapped,
  unmapIPv4,
  parseCidr,
  formatCidr,
  cidrSize,
  cidrLast,
  cidrContains,
  cidrsOverlap,
  cidrExclude,
} from './ip.ts';
export { cidrIntersect, cidrUnion } from './cidr-set.ts';
export { globMatch } from './glob.ts';
export { ravenVersion, ravenUserAgent } from './version.ts';
