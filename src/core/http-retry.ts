/**
 * When a request may be sent again, how long to wait first, and the one loop that does it ({@link retrying}). The
 * rules are pure, so they are unit-tested without a server; the loop takes a Clock, so it is tested without waiting.
 *
 * The rules (undici's retry interceptor and client-go's `request.go`, made conservative; shared by the Kubernetes and
 * OpenStack clients):
 * - a response of 429 or 5xx is retried only for idempotent methods (GET, HEAD, PUT, DELETE): sending them twice
 *   cannot do more than once (a PUT carries its resourceVersion, so a duplicate is a 409, not a second write);
 * - a connection error is retried for GET and HEAD; for other methods only when the connection was refused, because
 *   then the request provably never reached the server (client-go's `IsRetryableError` does the same);
 * - POST and PATCH are otherwise never retried: that is the reconcile loop's job.
 * The wait is the response's `Retry-After` (seconds) when it has one, else exponential backoff with full jitter; both
 * capped at `maxDelayMs`.
 *
 * Each client reads its own outcomes with these rules (`classify`). The OpenStack client differs on two points: it
 * marks idempotency per request (a flag defaulting from the method: Keystone's token POST is idempotent, a
 * router-interface PUT is not), and it retries any failure to connect (not a timeout) of an idempotent request.
 * Counting attempts, computing the wait, sleeping on the Clock and stopping on abort happen once, in {@link retrying}.
 */
import type { Clock } from './clock.ts';

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

/** True for 429 and 5xx except 501 (Not Implemented will not change): statuses worth asking again, if it is safe. */
export function isRetryableStatusCode(httpCode: number): boolean {
  return httpCode === 429 || (httpCode >= 500 && httpCode <= 599 && httpCode !== 501);
}

/** True when a response with this HTTP status may be retried for this method. */
export function isRetryableStatus(method: string, httpCode: number): boolean {
  return idempotent.has(method) && isRetryableStatusCode(httpCode);
}

/** The `code` of an error or of its causes (a client may wrap the system error). */
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

/** How one attempt ended: what it resolved with, or what it threw. */
export type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A client's reading of an outcome under the rules above. */
export interface RetryVerdict {
  /** Whether the outcome may be retried (the loop still stops after `maxAttempts`). */
  retry: boolean;
  /** The response's `Retry-After` header, when it has one: the wait then follows it instead of the backoff. */
  retryAfter?: string | undefined;
}

/** One judged attempt, for a client's log line. */
export interface AttemptReport<T> {
  /** 1 for the first attempt. */
  attempt: number;
  outcome: AttemptOutcome<T>;
  /** Whether another attempt follows; if not, the outcome is what {@link retrying} settles with. */
  retry: boolean;
  /** The wait before the next attempt (only when `retry`). */
  delayMs?: number;
}

export interface RetryLoop<T> {
  options: Required<RetryOptions>;
  /** Sleeps between attempts and reads `now` for `Retry-After` dates. */
  clock: Clock;
  /** Once aborted, no further attempt is made and nothing more is reported; the last outcome stands. */
  signal?: AbortSignal | undefined;
  /** Whether this outcome may be retried, and the `Retry-After` it carries. */
  classify(outcome: AttemptOutcome<T>): RetryVerdict;
  /** Called once per attempt, after the verdict and before any wait. Must not throw. */
  onAttempt?(report: AttemptReport<T>): void;
  /** For the backoff's jitter; tests pin it. */
  random?: () => number;
}

function settle<T>(outcome: AttemptOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}

/**
 * Calls `send` until an outcome may not be retried or `maxAttempts` is reached, waiting {@link retryDelay} between
 * attempts on the Clock. Resolves or rejects with the last outcome as it is: the client turns it into its own errors.
 * An abort during a wait rejects with the signal's reason (the Clock's `sleep`); an abort noticed after an attempt
 * keeps that attempt's outcome.
 *
 * @example
 * const res = await retrying((attempt) => send(req, attempt), {
 *   options: defaultRetry, clock, signal,
 *   classify: (o) => (o.ok ? { retry: isRetryableStatus(method, o.value.status), retryAfter:
 *   o.value.headers['retry-after'] } : { retry: isRetryableError(method, o.error) }),
 * });
 */
export async function retrying<T>(send: (attempt: number) => Promise<T>, loop: RetryLoop<T>): Promise<T> {
  const { options, clock, signal } = loop;
  for (let attempt = 1; ; attempt++) {
    let outcome: AttemptOutcome<T>;
    try {
      outcome = { ok: true, value: await send(attempt) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // The caller gave up: another attempt could only be wasted.
    if (signal?.aborted) return settle(outcome);
    const verdict = loop.classify(outcome);
    const retry = verdict.retry && attempt < options.maxAttempts;
    if (!retry) {
      loop.onAttempt?.({ attempt, outcome, retry });
      return settle(outcome);
    }
    const delayMs = retryDelay(attempt, options, parseRetryAfter(verdict.retryAfter, clock.now()), loop.random);
    loop.onAttempt?.({ attempt, outcome, retry, delayMs });
    await clock.sleep(delayMs, signal);
  }
}
