import { isRetryableStatusCode, retrying, type Clock, type Logger, type RetryOptions } from '../../core/index.ts';
import { OpenStackError, type ServiceType } from '../errors.ts';
import type { Interceptor, RawResponse } from './http.ts';

/** The request id a service answered with (Neutron, Octavia and Keystone all send one). */
export function requestIdOf(res: RawResponse): string | undefined {
  return res.headers['x-openstack-request-id'] ?? res.headers['x-compute-request-id'];
}

/**
 * One debug line per attempt: service, method, path, status, duration, request id. Never headers, query values or
 * bodies: they carry tokens, passwords and application-credential secrets.
 */
export function logging(logger: Logger, clock: Clock): Interceptor {
  return (next) => async (req) => {
    const started = clock.now();
    try {
      const res = await next(req);
      logger.debug(
        {
          service: req.service,
          method: req.method,
          path: req.path,
          status: res.status,
          ms: clock.now() - started,
          requestId: requestIdOf(res),
        },
        'openstack request',
      );
      return res;
    } catch (err) {
      logger.debug(
        {
          service: req.service,
          method: req.method,
          path: req.path,
          ms: clock.now() - started,
          err: err instanceof Error ? err.message : String(err),
        },
        'openstack request failed',
      );
      throw err;
    }
  };
}

/**
 * Retries only requests marked idempotent (GET, PUT, DELETE by default; never a POST that creates), on 429, 5xx and
 * connection failures, waiting `Retry-After` when the service sends one and jittered exponential back-off otherwise.
 * The last response (or error) is returned as it is for the caller to turn into an error.
 */
export function retry(
  options: Required<RetryOptions>,
  clock: Clock,
  logger: Logger,
  random: () => number = Math.random,
): Interceptor {
  return (next) => (req) =>
    retrying<RawResponse>((attempt) => next(attempt === 1 ? req : { ...req, attempt }), {
      options,
      clock,
      signal: req.signal,
      random,
      classify: (outcome) => {
        if (!req.idempotent) return { retry: false };
        if (outcome.ok) {
          return {
            retry: isRetryableStatusCode(outcome.value.status),
            retryAfter: outcome.value.headers['retry-after'],
          };
        }
        // Only failures to get any response are retried (status 0): not timeouts, not the caller's abort.
        const err = outcome.error;
        return { retry: err instanceof OpenStackError && err.status === 0 && err.code === 'OPENSTACK_UNREACHABLE' };
      },
      onAttempt: ({ attempt, outcome, retry, delayMs }) => {
        if (!retry) return;
        logger.debug(
          {
            service: req.service,
            method: req.method,
            path: req.path,
            attempt,
            status: outcome.ok ? outcome.value.status : 0,
            waitMs: delayMs,
          },
          'retrying openstack request',
        );
      },
    });
}

interface Waiter {
  resolve: () => void;
  reject: (reason: Error) => void;
  signal: AbortSignal | undefined;
}

/**
 * A counting semaphore whose waiters leave when their signal aborts. Many waiters often share one signal (a
 * controller's): each signal gets one abort listener, removed when its last waiter leaves, so a queue of any length
 * neither trips Node's listener-leak warning nor keeps a signal alive.
 */
export class Semaphore {
  #free: number;
  readonly #waiters: Waiter[] = [];
  /** Per signal with waiters: how many, and its one abort listener. */
  readonly #signals = new Map<AbortSignal, { waiters: number; onAbort: () => void }>();

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.#free > 0) {
      this.#free--;
      return () => this.#release();
    }
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      this.#waiters.push({ resolve, reject, signal });
      if (!signal) return;
      const watched = this.#signals.get(signal);
      if (watched) watched.waiters++;
      else {
        const onAbort = (): void => this.#abort(signal);
        this.#signals.set(signal, { waiters: 1, onAbort });
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    return () => this.#release();
  }

  #release(): void {
    const next = this.#waiters.shift();
    if (!next) {
      this.#free++;
      return;
    }
    this.#leave(next.signal);
    next.resolve();
  }

  /** Every waiter of `signal` leaves, rejected with its reason. */
  #abort(signal: AbortSignal): void {
    this.#signals.delete(signal);
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (waiter.signal !== signal) continue;
      this.#waiters.splice(i, 1);
      waiter.reject(signal.reason as Error);
    }
  }

  #leave(signal: AbortSignal | undefined): void {
    const watched = signal && this.#signals.get(signal);
    if (!watched || --watched.waiters > 0) return;
    this.#signals.delete(signal);
    signal.removeEventListener('abort', watched.onAbort);
  }

  get waiting(): number {
    return this.#waiters.length;
  }
}

/**
 * At most `limits[service]` requests in flight per service: Neutron is CPU-bound and slows for everyone when flooded.
 */
export function concurrency(limits: Record<ServiceType, number>): Interceptor {
  const semaphores = new Map<ServiceType, Semaphore>();
  return (next) => async (req) => {
    let sem = semaphores.get(req.service);
    if (!sem) semaphores.set(req.service, (sem = new Semaphore(limits[req.service])));
    const release = await sem.acquire(req.signal);
    try {
      return await next(req);
    } finally {
      release();
    }
  };
}
