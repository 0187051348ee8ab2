// The two operations of structured-merge-diff's merge.Updater, with the fieldmanager wrappers around them:
// recording an Update (any write that is not an apply) and applying a configuration.
import { isPlainObject } from '../../../../src/kube/api/index.ts';
import { ApplyConflictError, type Conflict } from './errors.ts';
import { EMPTY, isEmptySet, memberPaths, pathString, type Fields } from './fields.ts';
import {
  capUpdateManagers,
  dropEmpty,
  identityOf,
  ownerName,
  withFields,
  type ManagerEntry,
  type Managers,
} from './managed.ts';
import { mergeApplied, pruneApplied } from './merge.ts';
import type { TypeNode } from './schema.ts';
import { difference, intersection, onlySubtree, union, withoutSubtree } from './set-ops.ts';
import { compareObjects, fieldSetOf, jsonEqual, type Changes } from './walk.ts';

type JsonObject = Record<string, unknown>;

/**
 * The part of an object a write may change, by top-level field (the strategy's reset fields): the main resource of a
 * kind with a status subresource leaves `status` alone (`without`), its `/status` subresource changes only `status`
 * (`only`). Fields outside the scope are neither tracked nor applied.
 */
export interface Scope {
  readonly only?: string;
  readonly without?: string;
}

function scoped(set: Fields, scope: Scope): Fields {
  if (scope.only !== undefined) return onlySubtree(set, `f:${scope.only}`);
  if (scope.without !== undefined) return withoutSubtree(set, `f:${scope.without}`);
  return set;
}

function scopedChanges(changes: Changes, scope: Scope): Changes {
  return { changed: scoped(changes.changed, scope), removed: scoped(changes.removed, scope) };
}

/** Who writes and how: the fieldManager, the request's version and subresource. */
export interface Writer {
  readonly manager: string;
  readonly apiVersion: string;
  readonly subresource?: string | undefined;
  /** When this write happens (RFC 3339, seconds); asked only when an entry's time moves. */
  readonly now: () => string;
}

/**
 * Records an Update (Updater.Update behind managedFieldsUpdater): the fields that changed from `live` to `next` are
 * taken from every manager that had them, removed fields are dropped from every manager, and the writer's Update
 * entry gains what it changed (its time moves only then). A write that changes nothing returns `managers` itself.
 */
export function recordUpdate(
  live: JsonObject,
  next: JsonObject,
  managers: Managers,
  writer: Writer,
  type: TypeNode,
  scope: Scope = {},
): Managers {
  const { changed, removed } = scopedChanges(compareObjects(live, next, type), scope);
  if (isEmptySet(changed) && isEmptySet(removed)) return managers;
  const touched = isEmptySet(removed) ? changed : union(changed, removed);
  const own: ManagerEntry = {
    manager: writer.manager,
    operation: 'Update',
    apiVersion: writer.apiVersion,
    time: undefined,
    subresource: writer.subresource || undefined,
    fields: EMPTY,
  };
  const ownId = identityOf(own);
  const out = new Map<string, ManagerEntry>();
  for (const [id, entry] of managers) {
    // The writer's own entry only loses what was removed: what it changed, it keeps (changed ∩ removed = ∅).
    const fields =
      id === ownId && !isEmptySet(changed) ? difference(entry.fields, removed) : difference(entry.fields, touched);
    out.set(id, fields === entry.fields ? entry : withFields(entry, fields));
  }
  if (!isEmptySet(changed)) {
    const previous = out.get(ownId);
    out.set(ownId, withFields(previous ?? own, union(previous?.fields ?? EMPTY, changed), writer.now()));
  }
  return capUpdateManagers(dropEmpty(out));
}

/** An apply: the configuration, and what governs it. */
export interface ApplyRequest {
  /** The stored object, or undefined when the apply creates it. Never mutated. */
  readonly live: JsonObject | undefined;
  /** The applied configuration (decoded, version and kind checked). Its subtrees end up in the result. */
  readonly config: JsonObject;
  readonly managers: Managers;
  readonly writer: Writer;
  /** Take fields other managers own instead of failing with a conflict. */
  readonly force: boolean;
  readonly type: TypeNode;
  readonly scope?: Scope;
  /**
   * Conflicts allowed anyway: the fields of the live object's client-side `last-applied-configuration`, for kubectl.
   */
  readonly allowedConflicts?: Fields | undefined;
}

export interface ApplyResult {
  /** The merged object, without `metadata.managedFields`. */
  readonly object: JsonObject;
  readonly managers: Managers;
  /** False when the object (managedFields aside) is the live one. */
  readonly changed: boolean;
}

function scopedConfig(config: JsonObject, scope: Scope): JsonObject {
  if (scope.without !== undefined && Object.prototype.hasOwnProperty.call(config, scope.without)) {
    const { [scope.without]: _dropped, ...rest } = config;
    return rest;
  }
  if (scope.only !== undefined) {
    const { apiVersion, kind, metadata } = config;
    return {
      apiVersion,
      kind,
      metadata,
      ...(config[scope.only] === undefined ? {} : { [scope.only]: config[scope.only] }),
    };
  }
  return config;
}

function withoutManagedFields(obj: JsonObject): JsonObject {
  const meta = obj.metadata;
  if (!isPlainObject(meta) || !Object.prototype.hasOwnProperty.call(meta, 'managedFields')) return obj;
  const { managedFields: _managed, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/**
 * Applies a configuration (Updater.Apply): merges it into the live object, prunes what this manager applied last
 * time and nobody owns now, and fails with {@link ApplyConflictError} when that changes fields another manager owns
 * (unless `force`, which takes them over). The applier's Apply entry becomes exactly the configuration's fields;
 * fields set to equal values stay shared with their other owners. The entry's time moves when the object changes.
 *
 * @throws {ApplyConflictError} on conflicts without `force`.
 * @throws {TypedValueError} when the configuration does not fit the schema (a list item without its key…).
 */
export function applyConfiguration(request: ApplyRequest): ApplyResult {
  const { writer, type } = request;
  const scope = request.scope ?? {};
  const live = request.live ? withoutManagedFields(request.live) : {};
  const set = scoped(fieldSetOf(request.config, type), scope);
  const merged = (mergeApplied(structuredClone(live), scopedConfig(request.config, scope), type) ?? {}) as JsonObject;
  const own: ManagerEntry = {
    manager: writer.manager,
    operation: 'Apply',
    apiVersion: writer.apiVersion,
    time: undefined,
    subresource: writer.subresource || undefined,
    fields: set,
  };
  const id = identityOf(own);
  const previous = request.managers.get(id);
  const managers = new Map(request.managers);
  managers.set(id, own);
  if (previous && !isEmptySet(previous.fields))
    pruneApplied(
      merged,
      previous.fields,
      [...managers.values()].map((e) => e.fields),
      type,
    );

  const { changed, removed } = scopedChanges(compareObjects(live, merged, type), scope);
  const conflicts = new Map<string, Fields>();
  for (const [other, entry] of managers) {
    if (other === id) continue;
    const taken = intersection(entry.fields, changed);
    if (!isEmptySet(taken)) conflicts.set(other, taken);
  }
  if (conflicts.size > 0 && !request.force) {
    const allowed = request.allowedConflicts;
    const remaining = [...conflicts].map(
      ([other, taken]) => [other, allowed ? difference(taken, allowed) : taken] as const,
    );
    if (!allowed || remaining.some(([, taken]) => !isEmptySet(taken)))
      throw new ApplyConflictError(conflictList(managers, remaining));
  }
  for (const [other, entry] of managers) {
    if (other === id) continue;
    const fields = difference(difference(entry.fields, conflicts.get(other) ?? EMPTY), removed);
    if (fields !== entry.fields) managers.set(other, withFields(entry, fields));
  }
  const objectChanged = !jsonEqual(live, merged);
  const time = objectChanged || !previous ? writer.now() : previous.time;
  const unchanged =
    previous && previous.apiVersion === own.apiVersion && time === previous.time && jsonEqual(previous.fields, set);
  managers.set(id, unchanged ? previous : { ...own, time });
  return { object: merged, managers: dropEmpty(managers), changed: objectChanged };
}

function conflictList(managers: Managers, sets: ReadonlyArray<readonly [string, Fields]>): Conflict[] {
  const out: Conflict[] = [];
  const sorted = sets
    .map(([id, set]) => [ownerName(managers.get(id)!), set] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [owner, set] of sorted) for (const path of memberPaths(set)) out.push({ owner, field: pathString(path) });
  return out;
}
