import { isRetryableStatusCode, retrying, type Clock, type Logger, type RetryOptions } from '../../core/index.ts';
import { OpenStackError, type ServiceType } from '../errors.ts';
import type { Interceptor, RawResponse, RequestPriority } from './http.ts';

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

/** The priorities, highest first: the order in which waiters are served. */
const priorities: readonly RequestPriority[] = ['critical', 'normal', 'background'];

/**
 * A counting semaphore with three waiting lines: a released slot goes to the oldest waiter of the highest priority, so
 * a pod's claim queued behind a burst of pool refills is served next, not last. `reserved` slots are only ever held by
 * `critical` requests: slow background work (bulk creates) can never fill every slot, so a critical request waits at
 * most for one in-flight critical request to end. Within a priority, first come first served; a lower priority may
 * wait as long as higher ones keep coming (their volume is bounded by pods starting, and a starved refill only sends
 * more pods down the critical cold path).
 *
 * Waiters leave when their signal aborts. Many waiters often share one signal (a controller's): each signal gets one
 * abort listener, removed when its last waiter leaves, so a queue of any length neither trips Node's listener-leak
 * warning nor keeps a signal alive.
 */
export class Semaphore {
  readonly #size: number;
  readonly #reserved: number;
  #held = 0;
  /** Slots held by requests that are not `critical` (at most size − reserved). */
  #heldShared = 0;
  readonly #waiters: Record<RequestPriority, Waiter[]> = { critical: [], normal: [], background: [] };
  /** Per signal with waiters: how many, and its one abort listener. */
  readonly #signals = new Map<AbortSignal, { waiters: number; onAbort: () => void }>();

  constructor(size: number, reserved = 0) {
    if (!(reserved >= 0 && reserved < size)) throw new RangeError(`reserved ${reserved} must be in [0, ${size})`);
    this.#size = size;
    this.#reserved = reserved;
  }

  async acquire(signal?: AbortSignal, priority: RequestPriority = 'normal'): Promise<() => void> {
    // No waiter of this priority or above can take a slot now (they are served on every release), so taking a free
    // one never jumps ahead of them.
    if (this.#free(priority)) {
      this.#take(priority);
      return this.#releaser(priority);
    }
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      this.#waiters[priority].push({ resolve, reject, signal });
      if (!signal) return;
      const watched = this.#signals.get(signal);
      if (watched) watched.waiters++;
      else {
        const onAbort = (): void => this.#abort(signal);
        this.#signals.set(signal, { waiters: 1, onAbort });
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    return this.#releaser(priority);
  }

  #free(priority: RequestPriority): boolean {
    return this.#held < this.#size && (priority === 'critical' || this.#heldShared < this.#size - this.#reserved);
  }

  #take(priority: RequestPriority): void {
    this.#held++;
    if (priority !== 'critical') this.#heldShared++;
  }

  #releaser(priority: RequestPriority): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      if (priority !== 'critical') this.#heldShared--;
      this.#serve();
    };
  }

  /** Hands free slots to waiters, highest priority first. */
  #serve(): void {
    for (const priority of priorities) {
      const line = this.#waiters[priority];
      while (line.length > 0 && this.#free(priority)) {
        const next = line.shift()!;
        this.#take(priority);
        this.#leave(next.signal);
        next.resolve();
      }
    }
  }

  /** Every waiter of `signal` leaves, rejected with its reason. */
  #abort(signal: AbortSignal): void {
    this.#signals.delete(signal);
    for (const line of Object.values(this.#waiters))
      for (let i = line.length - 1; i >= 0; i--) {
        const waiter = line[i]!;
        if (waiter.signal !== signal) continue;
        line.splice(i, 1);
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
    return priorities.reduce((n, p) => n + this.#waiters[p].length, 0);
  }
}

/**
 * At most `limits[service]` requests in flight per service: Neutron is CPU-bound and slows for everyone when flooded.
 * Queued requests go by their priority, and a quarter of each service's slots is kept for `critical` ones (a pod's
 * claim or cold create must not wait behind pool refills: raven-cni waits only 10 s for a claim).
 */
export function concurrency(limits: Record<ServiceType, number>): Interceptor {
  const semaphores = new Map<ServiceType, Semaphore>();
  return (next) => async (req) => {
    let sem = semaphores.get(req.service);
    if (!sem) {
      const size = limits[req.service];
      semaphores.set(req.service, (sem = new Semaphore(size, Math.floor(size / 4))));
    }
    const release = await sem.acquire(req.signal, req.priority);
    try {
      return await next(req);
    } finally {
      release();
    }
  };
}
