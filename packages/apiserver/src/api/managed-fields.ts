// The field manager of the write verbs (k8s.io/apiserver's handlers wrapping managedfields.FieldManager): which
// managedFields a write starts from, the kind's schema and reset scope, kubectl's client-side-apply upgrade path,
// and the Status answers for apply failures.
import { isDeepStrictEqual } from 'node:util';
import { isPlainObject, type KubeObject } from '../../../../src/kube/api/index.ts';
import {
  ApplyConflictError,
  TypedValueError,
  applyConfiguration,
  builtinType,
  customResourceType,
  decodeManaged,
  dropEmpty,
  encodeManaged,
  fieldSetOf,
  isResetRequest,
  recordUpdate,
  type Fields,
  type Managers,
  type Scope,
  type TypeNode,
} from '../apply/index.ts';
import { apiErrors } from '../http/errors.ts';
import { present, type ApiContext, type Target } from './context.ts';

/** kubectl's client-side apply annotation, which server-side apply by kubectl keeps in step. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** The merge/tracking schema of the target's kind (in the request's version for custom resources). */
export function typeOf(target: Target): TypeNode {
  const def = target.def;
  if (!def.custom) return builtinType(def.group, def.kind);
  const version = target.apiVersion.slice(target.apiVersion.indexOf('/') + 1);
  return customResourceType(def.schemas?.[version]);
}

/**
 * The object in the request's version: field sets are paths of the version a manager writes in (events.k8s.io/v1
 * Events are stored as core/v1 ones).
 */
function served<T extends KubeObject | undefined>(target: Target, obj: T): T {
  return (obj && target.def.storedAs ? present(obj, target.apiVersion) : obj) as T;
}

/** What a write may change: `/status` only status; the main resource of a kind with a status subresource not status. */
export function scopeOf(target: Target, subresource: string | undefined): Scope {
  if (subresource === 'status') return { only: 'status' };
  return target.def.subresources?.includes('status') ? { without: 'status' } : {};
}

function storedManagers(obj: KubeObject | undefined): Managers {
  return decodeManaged(obj?.metadata.managedFields, true) ?? new Map();
}

/** Sets (or removes) `metadata.managedFields`. */
function setManaged(obj: KubeObject, managers: Managers): void {
  const encoded = encodeManaged(managers);
  if (encoded) obj.metadata.managedFields = encoded;
  else if (obj.metadata.managedFields !== undefined) delete obj.metadata.managedFields;
}

/**
 * What the object looked like before a create, for the diff (the typed empty object upstream): built-in kinds have
 * `spec`/`status` structs from the start, so only what is inside them counts as added; custom resources start empty.
 */
function emptyLike(target: Target, obj: KubeObject): Record<string, unknown> {
  if (target.def.custom) return {};
  const empty: Record<string, unknown> = { metadata: {} };
  for (const key of ['spec', 'status']) if (isPlainObject(obj[key])) empty[key] = {};
  return empty;
}

export interface WriteTracking {
  /** The field manager of the write. */
  manager: string;
  subresource: string | undefined;
  /** The `metadata.managedFields` the request carried (ignored on subresources). */
  requested: unknown;
}

/**
 * Records a create, update or non-apply patch in `next.metadata.managedFields` (FieldManager.UpdateNoErrors): starting
 * from the request's managedFields when it carries valid, non-empty ones (`[]` or `[{}]` reset tracking), from the
 * stored ones otherwise, the fields that changed from `old` (undefined on create) go to the writer's Update entry.
 * An update of an object without managedFields stays untracked (skipNonAppliedManager); a create is always tracked.
 */
export function trackWrite(
  ctx: ApiContext,
  target: Target,
  old: KubeObject | undefined,
  next: KubeObject,
  tracking: WriteTracking,
): void {
  let base: Managers | undefined;
  const requested = tracking.requested;
  if (tracking.subresource !== undefined || requested === undefined || requested === null) base = undefined;
  else if (isResetRequest(requested)) base = new Map();
  else if (old && isDeepStrictEqual(requested, old.metadata.managedFields)) base = undefined;
  else {
    const decoded = decodeManaged(requested);
    base = decoded && decoded.size > 0 ? decoded : undefined;
  }
  const stored = base === undefined;
  base ??= storedManagers(old);
  if (base.size === 0 && old !== undefined) {
    // skipNonAppliedManager: an update of an object nobody manages (tracking reset, or never tracked) is not
    // tracked; only an apply starts tracking it again.
    if (next.metadata.managedFields !== undefined) delete next.metadata.managedFields;
    return;
  }
  // A create's entry is stamped with the object's creationTimestamp: the same clock reading, taken once.
  const created = old === undefined ? next.metadata.creationTimestamp : undefined;
  const now = typeof created === 'string' ? () => created : ctx.now;
  const writer = { manager: tracking.manager, apiVersion: target.apiVersion, subresource: tracking.subresource, now };
  const before = old ? served(target, old) : emptyLike(target, next);
  const managers = recordUpdate(
    before,
    served(target, next),
    base,
    writer,
    typeOf(target),
    scopeOf(target, tracking.subresource),
  );
  if (stored && managers === base) {
    // Nothing changed hands: keep the stored entries as they are.
    if (old?.metadata.managedFields !== undefined) next.metadata.managedFields = old.metadata.managedFields;
    else if (next.metadata.managedFields !== undefined) delete next.metadata.managedFields;
  } else {
    setManaged(next, managers === base && !stored ? dropEmpty(new Map(managers)) : managers);
  }
}

export interface ApplyOptions {
  manager: string;
  force: boolean;
  subresource: string | undefined;
}

/**
 * Server-side apply of `config` (already checked to be an object of the target's kind and version) to `live`
 * (undefined: the apply creates the object). Returns the merged object with its managedFields, for the create or
 * update path. 409 with FieldManagerConflict causes on conflicts; 500 when the configuration does not fit the schema,
 * as upstream answers.
 */
export function applyToObject(
  ctx: ApiContext,
  target: Target,
  stored: KubeObject | undefined,
  config: KubeObject,
  options: ApplyOptions,
): KubeObject {
  const type = typeOf(target);
  const live = served(target, stored);
  const kubectl = options.manager === 'kubectl' && typeof live?.metadata.annotations?.[LAST_APPLIED] === 'string';
  const lastApplied = kubectl ? lastAppliedOf(config) : undefined;
  let result;
  try {
    result = applyConfiguration({
      live,
      config,
      managers: storedManagers(live),
      writer: {
        manager: options.manager,
        apiVersion: target.apiVersion,
        subresource: options.subresource,
        now: ctx.now,
      },
      force: options.force,
      type,
      scope: scopeOf(target, options.subresource),
      allowedConflicts: kubectl ? lastAppliedFields(live, type) : undefined,
    });
  } catch (err) {
    if (err instanceof ApplyConflictError) throw apiErrors.applyConflict(err.message, err.causes);
    if (err instanceof TypedValueError) {
      const gvk = `${target.def.group}/${target.apiVersion.slice(target.apiVersion.indexOf('/') + 1)}, Kind=${target.def.kind}`;
      throw apiErrors.unknown(
        500,
        `failed to create typed patch object (${target.namespace ?? ''}/${config.metadata.name ?? ''}; ${gvk}): ${err.message}`,
      );
    }
    throw err;
  }
  const obj = result.object as KubeObject;
  if (lastApplied !== undefined) setLastApplied(obj, lastApplied);
  setManaged(obj, result.managers);
  return obj;
}

/**
 * The fields of the live object's client-side last-applied configuration (lastAppliedManager): conflicts kubectl may
 * take.
 */
function lastAppliedFields(live: KubeObject, type: TypeNode): Fields | undefined {
  try {
    const parsed = JSON.parse(live.metadata.annotations![LAST_APPLIED]!) as unknown;
    return isPlainObject(parsed) ? fieldSetOf(parsed, type) : undefined;
  } catch {
    return undefined;
  }
}

/** JSON as Go's encoding/json writes a map: keys sorted, `<`, `>`, `&` escaped; and the encoder's newline. */
function goJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (!isPlainObject(v)) return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  };
  const text = JSON.stringify(sortKeys(value)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${text}\n`;
}

/** buildLastApplied: the applied configuration without the annotation itself. */
function lastAppliedOf(config: KubeObject): string {
  const annotations = { ...config.metadata.annotations };
  delete annotations[LAST_APPLIED];
  const { annotations: _a, ...meta } = config.metadata;
  return goJson({ ...config, metadata: Object.keys(annotations).length > 0 ? { ...meta, annotations } : meta });
}

/** setLastApplied: dropped instead when the annotations would grow past their size limit. */
function setLastApplied(obj: KubeObject, value: string): void {
  const annotations: Record<string, string> = { ...obj.metadata.annotations, [LAST_APPLIED]: value };
  const size = Object.entries(annotations).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)),
    0,
  );
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED];
  if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
  else delete obj.metadata.annotations;
}
