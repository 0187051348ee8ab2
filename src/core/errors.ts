/**
 * The base of every error Raven throws on purpose: a stable machine-readable `code` and an optional `cause` chain.
 *
 * @example
 * throw new RavenError('CONFIG_INVALID', 'service CIDR "10.0.0.0/33" is not a CIDR', { cause: err });
 */
export class RavenError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /**
   * True when the error means a service Raven depends on was down: no response, or a 5xx. The clients' errors say so
   * for themselves (see {@link isOutage}); anything else is not an outage.
   */
  get outage(): boolean {
    return false;
  }
}

/** The message of anything thrown, for logs and Status bodies. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * True when `err` or an error in its cause chain is a {@link RavenError} that reports an outage (the Kubernetes API or
 * OpenStack unreachable, or failing with 5xx): retried soon, such a failure heals by itself once the service is back.
 */
export function isOutage(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if (e instanceof RavenError && e.outage) return true;
  return false;
}
