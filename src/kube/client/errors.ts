import { RavenError } from '../../core/index.ts';
import { failureStatus, isStatus, type Status, type StatusReason } from '../api/index.ts';

/**
 * The API server answered with an error: its `Status` (always one; a non-Status body is turned into one from the HTTP
 * code, as client-go's `newUnstructuredResponseError` does), with the request that got it. `code` is stable:
 * `KUBE_<REASON>` (`KUBE_NOTFOUND`, `KUBE_CONFLICT`…), or `KUBE_STATUS_<http code>` when the reason is empty.
 *
 * @example
 * try { await client.get(resources.pods, 'web', 'default'); }
 * catch (err) { if (!isNotFound(err)) throw err; }
 */
export class KubeStatusError extends RavenError {
  readonly status: Status;
  readonly method: string;
  readonly path: string;

  constructor(status: Status, method: string, path: string, options?: { cause?: unknown }) {
    const code = status.reason ? `KUBE_${status.reason.toUpperCase()}` : `KUBE_STATUS_${status.code}`;
    super(
      code,
      `${method} ${path}: ${status.code}${status.reason ? ` ${status.reason}` : ''}: ${status.message ?? ''}`,
      options,
    );
    this.status = status;
    this.method = method;
    this.path = path;
  }

  /** The HTTP status code. */
  get httpCode(): number {
    return this.status.code;
  }

  get reason(): StatusReason | undefined {
    return this.status.reason;
  }

  /** A 5xx: the API server failed on its side. */
  override get outage(): boolean {
    return this.status.code >= 500;
  }
}

/**
 * The API server could not be reached or the connection failed (DNS, refused, TLS, reset, timeout): code
 * `KUBE_UNREACHABLE`.
 */
export class KubeTransportError extends RavenError {
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, cause: unknown, source?: string) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super('KUBE_UNREACHABLE', `${method} ${path}${source ? ` (${source})` : ''}: ${why}`, { cause });
    this.method = method;
    this.path = path;
  }

  override get outage(): boolean {
    return true;
  }
}

/** A watch stream was cut before it ended cleanly: code `WATCH_INTERRUPTED`. The caller re-watches from its last RV. */
export class WatchInterruptedError extends RavenError {
  readonly path: string;

  constructor(path: string, cause?: unknown) {
    super('WATCH_INTERRUPTED', `watch ${path} was interrupted${cause instanceof Error ? `: ${cause.message}` : ''}`, {
      cause,
    });
    this.path = path;
  }
}

const reasonForCode: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The Status of an error response: the body when it is one, else one built from the HTTP code and the body's text. */
export function statusFromResponse(httpCode: number, body: string): Status {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isStatus(parsed))
      return { ...parsed, code: typeof parsed.code === 'number' && parsed.code > 0 ? parsed.code : httpCode };
  } catch {
    // not JSON: fall through
  }
  const text = body.trim().slice(0, 512);
  const reason = reasonForCode[httpCode] ?? (httpCode >= 500 ? 'InternalError' : '');
  return failureStatus(httpCode, reason, text || `the server responded with HTTP ${httpCode}`);
}

function statusOf(err: unknown): Status | undefined {
  if (err instanceof KubeStatusError) return err.status;
  return undefined;
}

const knownReasons = new Set<string>([...Object.values(reasonForCode), 'AlreadyExists', 'Expired', 'ServerTimeout']);

function has(err: unknown, code: number, ...reasons: StatusReason[]): boolean {
  const s = statusOf(err);
  if (!s) return false;
  // As client-go's apierrors: the reason decides; the HTTP code decides only when the reason is not a known one.
  if (s.reason && reasons.includes(s.reason)) return true;
  return !knownReasons.has(s.reason ?? '') && s.code === code;
}

/** 404 NotFound. */
export const isNotFound = (err: unknown): boolean => has(err, 404, 'NotFound');
/** 409 AlreadyExists (a create of a name in use). */
export const isAlreadyExists = (err: unknown): boolean => has(err, 409, 'AlreadyExists');
/** 409 Conflict (a write at a stale resourceVersion). */
export const isConflict = (err: unknown): boolean => has(err, 409, 'Conflict');
/** 410 Gone or Expired: the resourceVersion or continue token is too old; relist. */
export const isGone = (err: unknown): boolean => has(err, 410, 'Gone', 'Expired');
/** Same as {@link isGone} (client-go has both `IsGone` and `IsResourceExpired`). */
export const isExpired = isGone;
/** 422 Invalid. */
export const isInvalid = (err: unknown): boolean => has(err, 422, 'Invalid');
/** 400 BadRequest. */
export const isBadRequest = (err: unknown): boolean => has(err, 400, 'BadRequest');
/** 403 Forbidden. */
export const isForbidden = (err: unknown): boolean => has(err, 403, 'Forbidden');
/** 401 Unauthorized. */
export const isUnauthorized = (err: unknown): boolean => has(err, 401, 'Unauthorized');
/** 405 MethodNotAllowed. */
export const isMethodNotAllowed = (err: unknown): boolean => has(err, 405, 'MethodNotAllowed');
/** 429 TooManyRequests. */
export const isTooManyRequests = (err: unknown): boolean => has(err, 429, 'TooManyRequests');
/** 500 ServerTimeout (the server could not finish in time; retryable). */
export const isServerTimeout = (err: unknown): boolean => has(err, -1, 'ServerTimeout');
/** 504 Timeout (the request's own timeout ran out). */
export const isTimeout = (err: unknown): boolean => has(err, 504, 'Timeout');
/**
 * 504 Timeout with the cause `ResourceVersionTooLarge`: a list or watch asked for a resourceVersion newer than the
 * server's (after an API server lost its state, or behind a lagging watch cache). client-go's
 * `isTooLargeResourceVersionError`, with its fallbacks for servers before 1.19 that say so only in a cause's message
 * or in the Status message.
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  const s = statusOf(err);
  if (!s) return false;
  const causes = s.details?.causes ?? [];
  if (causes.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  if (!isTimeout(err)) return false;
  return (
    causes.some((c) => c.message === 'Too large resource version') ||
    (s.message ?? '').includes('Too large resource version')
  );
}
/** 500 InternalError. */
export const isInternalError = (err: unknown): boolean => has(err, 500, 'InternalError');
/** 503 ServiceUnavailable. */
export const isServiceUnavailable = (err: unknown): boolean => has(err, 503, 'ServiceUnavailable');
/** The API server could not be reached (`KUBE_UNREACHABLE`). */
export const isUnreachable = (err: unknown): boolean => err instanceof KubeTransportError;
/** A watch stream was cut (`WATCH_INTERRUPTED`). */
export const isWatchInterrupted = (err: unknown): boolean => err instanceof WatchInterruptedError;

/** The `Status` carried by a {@link KubeStatusError}, else undefined. */
export function statusOfError(err: unknown): Status | undefined {
  return statusOf(err);
}
