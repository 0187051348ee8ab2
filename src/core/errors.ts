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
}

/** The message of anything thrown, for logs and Status bodies. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
