/**
 * apiserver/patch: the PATCH engines of the embedded API server, as pure functions over parsed JSON.
 *
 * Contract: every engine takes the current object and the decoded patch body and returns a new object; inputs are
 * never mutated (callers may pass frozen, shared snapshots) and the result shares no structure with them. Failures
 * throw {@link PatchError} carrying the HTTP status the server must answer: 400 (`PATCH_INVALID`, BadRequest) when the
 * body is not a patch of its type, 422 (`PATCH_FAILED`, Invalid) when it cannot be applied. Choosing the engine from
 * the request's Content-Type ({@link patchTypeOf}), 415 for unknown types and for strategic patches of kinds without
 * a schema, dryRun, resourceVersion preconditions and validation of the result are the caller's job.
 *
 * Engines: RFC 7386 merge patch, RFC 6902 JSON patch (with Kubernetes' replace-as-add), and Kubernetes strategic
 * merge patch driven by a declarative {@link StrategicSchema} (built-ins from {@link strategicSchemaFor}).
 * Server-side apply (`application/apply-patch+yaml`) is recognised by patchTypeOf and implemented in `../apply`
 * (merging under field management rather than patching).
 */
export { PatchError, isPatchError, type PatchErrorStatus } from './errors.ts';
export { patchTypeOf, type PatchType } from './content-type.ts';
export { applyMergePatch } from './merge-patch.ts';
export { applyJsonPatch } from './json-patch.ts';
export { applyStrategicMergePatch } from './strategic.ts';
export type { ListStrategy, StrategicSchema } from './schema.ts';
export { strategicSchemaFor } from './builtin-schemas.ts';
