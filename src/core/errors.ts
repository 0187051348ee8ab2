/**
 * The base of every error Raven throws on purpose: a stable machine-readable `code` and an optional `cause` chain.
 *
 * @example
 * throw new RavenError('CONFIG_INVALID', 'service CIDR "10.0.0.0/33" is not a CIDR', { cause: err });
 */
export class RavenError extends Error {
  readonly code: string;
  /**
   * The id a remote service gave the failed request (OpenStack's `X-OpenStack-Request-Id`), for that service's
   * operators. Never part of `message`: a message is what a person reads (a Kubernetes Event), and an id that differs
   * at every attempt would make each repeat of one failure look new. {@link errorMessage} adds it for logs.
   */
  readonly requestId: string | undefined;

  constructor(code: string, message: string, options?: { cause?: unknown; requestId?: string | undefined }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.requestId = options?.requestId;
  }

  /**
   * True when the error means a service Raven depends on was down: no response, or a 5xx. The clients' errors say so
   * for themselves (see {@link isOutage}); anything else is not an outage.
   */
  get outage(): boolean {
    return false;
  }
}

/**
 * The message of anything thrown, for logs and Status bodies: the error's message, then the request ids found along
 * its `cause` chain (`… (request req-1a2b)`), so a log line leads to the service's own logs.
 */
export function errorMessage(err: unknown): string {
  const ids: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if (e instanceof RavenError && e.requestId && !ids.includes(e.requestId)) ids.push(e.requestId);
  const message = err instanceof Error ? err.message : String(err);
  return ids.length > 0 ? `${message} (request ${ids.join(', ')})` : message;
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
