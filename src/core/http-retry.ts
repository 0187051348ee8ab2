/**
 * When a request may be sent again, and how long to wait first. Pure, so the rules are unit-tested without a server.
 *
 * The rules (undici's retry interceptor and client-go's `request.go`, made conservative; shared by the Kubernetes and OpenStack clients):
 * - a response of 429 or 5xx is retried only for idempotent methods (GET, HEAD, PUT, DELETE): sending them twice
 *   cannot do more than once (a PUT carries its resourceVersion, so a duplicate is a 409, not a second write);
 * - a connection error is retried for GET and HEAD; for other methods only when the connection was refused, because
 *   then the request provably never reached the server (client-go's `IsRetryableError` does the same);
 * - POST and PATCH are otherwise never retried: that is the reconcile loop's job.
 * The wait is the response's `Retry-After` (seconds) when it has one, else exponential backoff with full jitter; both
 * capped at `maxDelayMs`.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (1 = never retry). Default 4. */
  maxAttempts?: number;
  /** Cap on one wait. Default 10 s. */
  maxDelayMs?: number;
  /** The first backoff step. Default 200 ms. */
  baseDelayMs?: number;
}

export const defaultRetry: Required<RetryOptions> = { maxAttempts: 4, maxDelayMs: 10_000, baseDelayMs: 200 };

const idempotent = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const safe = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True when a response with this HTTP status may be retried for this method. */
export function isRetryableStatus(method: string, httpCode: number): boolean {
  return idempotent.has(method) && (httpCode === 429 || (httpCode >= 500 && httpCode <= 599 && httpCode !== 501));
}

/** The `code` of an error or of its causes (undici wraps system errors). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** True when a connection error may be retried for this method. */
export function isRetryableError(method: string, err: unknown): boolean {
  const codes = codesOf(err);
  if (codes.includes('ECONNREFUSED')) return true;
  // TLS verification failures will not fix themselves.
  if (
    codes.some(
      (c) => c.startsWith('ERR_TLS') || c.includes('CERT') || c.startsWith('UNABLE_TO') || c.startsWith('SELF_SIGNED'),
    )
  )
    return false;
  return safe.has(method);
}

/** The delay a `Retry-After` header asks for (seconds or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long to wait before attempt `attempt + 1` (attempt counts from 1): `retryAfterMs` when given, else a random
 * delay in [0, base·2^(attempt-1)] ("full jitter"), never more than `maxDelayMs`.
 */
export function retryDelay(
  attempt: number,
  options: Required<RetryOptions>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, options.maxDelayMs);
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * random());
}
