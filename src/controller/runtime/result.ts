import { RavenError } from '../../core/index.ts';

/**
 * What a reconcile asks for next (controller-runtime's `reconcile.Result`). Returning nothing (or `{}`) means "done:
 * converged"; `requeueAfterMs` means "look again later" — polling, e.g. while Octavia reports `PENDING_*`; `requeue`
 * means "again soon", spaced by the rate limiter like a failure but without logging one.
 */
export interface ReconcileResult {
  requeueAfterMs?: number;
  requeue?: boolean;
  /**
   * What the object waits for (`PENDING_UPDATE`, `NoSubnet` …), counted by the controller until a later reconcile of
   * the key says otherwise (see `Controller.waiting()`; a {@link RetryableError}'s reason counts the same way).
   */
  waiting?: string;
}

/**
 * Converges the world to the desired state of one key (`namespace/name`, or `name` for cluster-scoped kinds). It reads
 * the desired state from a cache — never from the event that queued it — so it is level-triggered and idempotent.
 * It must honour `signal` (aborted on the per-reconcile timeout and on a shutdown past its drain deadline), and must
 * not sleep: return `{ requeueAfterMs }` instead. Throwing means "failed: retry with back-off"; throwing a
 * {@link TerminalError} means "failed and retrying will not help".
 */
export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void> | ReconcileResult | void;

/**
 * The outcome of one reconcile, as counted by metrics (controller-runtime's `result` label values, plus
 * `terminal_error`).
 */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after' | 'terminal_error';

export interface TerminalErrorOptions {
  /** The Event's reason (UpperCamelCase, e.g. `InvalidCIDR`). Default `ReconcileFailed`. */
  reason?: string;
  cause?: unknown;
}

/**
 * A failure that retrying cannot fix (a malformed object, an invalid CIDR): the controller logs it, records a Warning
 * Event on the object, and does not requeue the key until something changes it again (controller-runtime's
 * `reconcile.TerminalError`).
 *
 * @example
 * if (!isCidr(cidr)) {
 *   throw new TerminalError(`subnet cidr "${cidr}" is not a CIDR`, { reason: 'InvalidCIDR' });
 * }
 */
export class TerminalError extends RavenError {
  readonly reason: string;

  constructor(message: string, options: TerminalErrorOptions = {}) {
    super('RECONCILE_TERMINAL', message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options.reason ?? 'ReconcileFailed';
  }
}

/** The {@link TerminalError} that was thrown, or that is in the `cause` chain of what was thrown. */
export function terminalErrorOf(err: unknown): TerminalError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if (e instanceof TerminalError) return e;
  return undefined;
}

export interface RetryableErrorOptions {
  cause?: unknown;
  /**
   * The back-off never waits longer than this between attempts. For conditions fixed outside Raven (a quota raised,
   * addresses freed) that nothing announces: the default limiter would otherwise reach minutes after a dozen tries.
   */
  maxRetryDelayMs?: number;
}

/**
 * A failure worth retrying (with back-off) that the user should see by name: its `reason` becomes the Warning Event's
 * reason instead of the generic `ReconcileError` (e.g. `QuotaExceeded`, `SubnetExhausted`).
 */
export class RetryableError extends RavenError {
  readonly reason: string;
  readonly maxRetryDelayMs: number | undefined;

  constructor(reason: string, message: string, options: RetryableErrorOptions = {}) {
    super('RECONCILE_RETRYABLE', message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.maxRetryDelayMs = options.maxRetryDelayMs;
  }
}
