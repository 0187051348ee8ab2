import { RavenError } from '../../../../src/core/index.ts';

/** The HTTP statuses a patch can fail with: 400 when the body is not a patch at all, 422 when it cannot be applied. */
export type PatchErrorStatus = 400 | 422;

/**
 * A PATCH body that is malformed (400, code `PATCH_INVALID`, reason `BadRequest`) or that cannot be applied to the
 * object (422, code `PATCH_FAILED`, reason `Invalid`). The server turns it into a `Status` as it stands: `message` is
 * written for the client, and `field` (when known) names the offending location for `details.causes[].field` — a
 * JSON pointer for JSON patches, a dotted field path (`spec.containers[name="a"].env`) for strategic ones.
 *
 * @example
 * throw new PatchError(422, 'json patch operation 0 (remove /spec/x) failed: the key "x" does not exist', {
 *   field: '/spec/x',
 * });
 */
export class PatchError extends RavenError {
  readonly status: PatchErrorStatus;
  readonly reason: 'BadRequest' | 'Invalid';
  readonly field: string | undefined;

  constructor(status: PatchErrorStatus, message: string, options?: { field?: string; cause?: unknown }) {
    super(status === 400 ? 'PATCH_INVALID' : 'PATCH_FAILED', message, options);
    this.status = status;
    this.reason = status === 400 ? 'BadRequest' : 'Invalid';
    this.field = options?.field;
  }
}

/** True for a {@link PatchError}. */
export function isPatchError(err: unknown): err is PatchError {
  return err instanceof PatchError;
}
