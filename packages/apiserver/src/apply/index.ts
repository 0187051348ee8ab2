/**
 * apiserver/apply: server-side apply and `metadata.managedFields`, after sigs.k8s.io/structured-merge-diff and
 * k8s.io/apimachinery's managedfields, as pure functions over parsed JSON.
 *
 * Contract:
 * - Field sets ({@link Fields}) are held in the FieldsV1 wire format (`f:<field>`, `k:<key json>` for items of
 *   associative lists, `v:<json>` for items of set lists, `.` for a node that is itself a member), sorted as upstream
 *   serialises them, and treated as immutable: operations share untouched subtrees with their inputs.
 * - A kind's {@link TypeNode} says which lists are associative (built-ins: their strategic-merge keys plus the list
 *   markers that differ; custom resources: `x-kubernetes-list-type`/`-list-map-keys`) or sets; every other list is
 *   atomic. {@link builtinType} and {@link customResourceType} build them.
 * - {@link recordUpdate}: any non-apply write (create, update, patch) gives the fields it changed to the writer's
 *   `Update` entry and takes them from everyone else; removed fields leave every set. No change, no new entry/time.
 * - {@link applyConfiguration}: merges an applied configuration, prunes what the applier stopped applying (unless
 *   someone else owns it), and throws {@link ApplyConflictError} for fields other managers own with a different value
 *   (unless forced, which takes them). Equal values are shared. The applier's `Apply` entry is its configuration.
 * - Entries are decoded with {@link decodeManaged} (invalid → undefined, so the caller keeps the stored ones) and
 *   encoded with {@link encodeManaged} in the order real servers write them; the fields the server owns (apiVersion,
 *   kind, metadata.name, uid, resourceVersion, managedFields…) never appear in a set.
 * Inputs are never mutated (the live object may be a frozen store snapshot); HTTP, admission and persistence are the
 * caller's job.
 */
export type { Fields } from './fields.ts';
export { isEmptySet, memberPaths, pathString, parseFields } from './fields.ts';
export { difference, intersection, union } from './set-ops.ts';
export { builtinType, customResourceType, type TypeNode } from './schema.ts';
export { compareObjects, fieldSetOf, type Changes } from './walk.ts';
export { mergeApplied } from './merge.ts';
export {
  capUpdateManagers,
  decodeManaged,
  dropEmpty,
  encodeManaged,
  identityOf,
  isResetRequest,
  type ManagedFieldsEntry,
  type ManagerEntry,
  type Managers,
} from './managed.ts';
export {
  applyConfiguration,
  recordUpdate,
  type ApplyRequest,
  type ApplyResult,
  type Scope,
  type Writer,
} from './track.ts';
export { ApplyConflictError, TypedValueError, type Conflict } from './errors.ts';
