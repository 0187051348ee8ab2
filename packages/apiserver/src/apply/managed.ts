// `metadata.managedFields` entries: decoding (what the server stored, or what a client sent), manager identities,
// the order real servers write entries in, and the cap on Update entries (k8s.io/apimachinery/pkg/util/managedfields).
import { isPlainObject } from '../../../../src/kube/api/index.ts';
import { EMPTY, isEmptySet, parseFields, type Fields } from './fields.ts';
import { union } from './set-ops.ts';

/** One entry of `metadata.managedFields`, as served. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Fields;
  subresource?: string;
}

/** One manager's fields, decoded. */
export interface ManagerEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  /** The version the fields are expressed in (the version of the request that last wrote them). */
  readonly apiVersion: string;
  readonly time: string | undefined;
  readonly subresource: string | undefined;
  readonly fields: Fields;
  /** The entry as stored, reused as long as nothing about it changes. */
  readonly encoded?: ManagedFieldsEntry;
}

/** Entries by manager identity (see {@link identityOf}). */
export type Managers = ReadonlyMap<string, ManagerEntry>;

/**
 * What tells managers apart (BuildManagerIdentifier): name, operation, subresource, and for Update entries the
 * apiVersion; an applier keeps one entry whatever version it applies in.
 */
export function identityOf(entry: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return `${entry.operation}\u0000${entry.manager}\u0000${entry.operation === 'Apply' ? '' : entry.apiVersion}\u0000${entry.subresource ?? ''}`;
}

/** How a conflict names an owner (printManager): `"a"`, `"b" with subresource "status" using v1`. */
export function ownerName(entry: ManagerEntry): string {
  let name = JSON.stringify(entry.manager);
  if (entry.subresource) name += ` with subresource ${JSON.stringify(entry.subresource)}`;
  return entry.operation === 'Update' ? `${name} using ${entry.apiVersion}` : name;
}

/** True when a request's managedFields asks to reset tracking: `[]`, or one empty entry `[{}]`. */
export function isResetRequest(raw: unknown): boolean {
  if (!Array.isArray(raw)) return false;
  return raw.length === 0 || (raw.length === 1 && isPlainObject(raw[0]) && Object.keys(raw[0]).length === 0);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Decodes `metadata.managedFields` (DecodeManagedFields): undefined when any entry is invalid (an operation other
 * than Apply/Update, no apiVersion, a fieldsType other than FieldsV1, a malformed set or time). Stored entries
 * (`trusted`) are taken as they are; a client's are checked and canonicalised.
 */
export function decodeManaged(raw: unknown, trusted = false): Managers | undefined {
  if (raw === undefined || raw === null) return new Map();
  if (!Array.isArray(raw)) return undefined;
  const out = new Map<string, ManagerEntry>();
  if (trusted) {
    // Written by this server (or checked when a client wrote them): no need to check again.
    for (const e of raw as ManagedFieldsEntry[]) {
      const entry: ManagerEntry = {
        manager: e.manager ?? '',
        operation: e.operation!,
        apiVersion: e.apiVersion!,
        time: e.time,
        subresource: e.subresource,
        fields: e.fieldsV1 ?? EMPTY,
        encoded: e,
      };
      out.set(identityOf(entry), entry);
    }
    return out;
  }
  for (const item of raw) {
    if (!isPlainObject(item)) return undefined;
    const e = item as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update') return undefined;
    if (typeof e.apiVersion !== 'string' || e.apiVersion === '') return undefined;
    if (e.fieldsType !== 'FieldsV1') return undefined;
    if (e.manager !== undefined && typeof e.manager !== 'string') return undefined;
    if (e.subresource !== undefined && typeof e.subresource !== 'string') return undefined;
    if (e.time !== undefined && e.time !== null && (typeof e.time !== 'string' || !RFC3339.test(e.time)))
      return undefined;
    const fields = e.fieldsV1 === undefined || e.fieldsV1 === null ? EMPTY : parseFields(e.fieldsV1);
    if (!fields) return undefined;
    const entry: ManagerEntry = {
      manager: e.manager ?? '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time ?? undefined,
      subresource: e.subresource || undefined,
      fields,
    };
    out.set(identityOf(entry), entry);
  }
  return out;
}

function seconds(time: string | undefined): number {
  return time === undefined ? 0 : Math.floor(Date.parse(time) / 1000);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The order real servers write entries in (sortEncodedManagedFields): Apply first, then oldest first. */
function compareEntries(p: ManagerEntry, q: ManagerEntry): number {
  if (p.operation !== q.operation) return compareStrings(p.operation, q.operation);
  return (
    seconds(p.time) - seconds(q.time) ||
    compareStrings(p.manager, q.manager) ||
    compareStrings(p.apiVersion, q.apiVersion) ||
    compareStrings(p.subresource ?? '', q.subresource ?? '')
  );
}

/** Encodes entries for `metadata.managedFields` (undefined when there are none); unchanged entries are reused. */
export function encodeManaged(managers: Managers): ManagedFieldsEntry[] | undefined {
  if (managers.size === 0) return undefined;
  return [...managers.values()].sort(compareEntries).map((e) => {
    if (e.encoded) return e.encoded;
    const out: ManagedFieldsEntry = {};
    if (e.manager !== '') out.manager = e.manager;
    out.operation = e.operation;
    out.apiVersion = e.apiVersion;
    if (e.time !== undefined) out.time = e.time;
    out.fieldsType = 'FieldsV1';
    out.fieldsV1 = e.fields;
    if (e.subresource !== undefined) out.subresource = e.subresource;
    return out;
  });
}

/** `entry` with other fields (and time); the stored form is dropped so that it is encoded again. */
export function withFields(entry: ManagerEntry, fields: Fields, time = entry.time): ManagerEntry {
  return {
    manager: entry.manager,
    operation: entry.operation,
    apiVersion: entry.apiVersion,
    time,
    subresource: entry.subresource,
    fields,
  };
}

/** Entries whose set became empty are dropped (the Updater deletes empty managers). */
export function dropEmpty(managers: Map<string, ManagerEntry>): Map<string, ManagerEntry> {
  for (const [id, entry] of managers) if (isEmptySet(entry.fields)) managers.delete(id);
  return managers;
}

/** How many Update entries an object keeps; older ones merge into `ancient-changes` (DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;

/** capManagersManager.capUpdateManagers: merges the oldest Update entries into per-version buckets. */
export function capUpdateManagers(
  managers: Map<string, ManagerEntry>,
  max = MAX_UPDATE_MANAGERS,
): Map<string, ManagerEntry> {
  if (managers.size <= max) return managers;
  const updaters = [...managers.entries()].filter(([, e]) => e.operation === 'Update');
  if (updaters.length <= max) return managers;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || compareStrings(ia, ib));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const [id, entry] = updaters[i]!;
    const bucket: ManagerEntry = {
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: entry.apiVersion,
      time: entry.time,
      subresource: undefined,
      fields: {},
    };
    const bucketId = identityOf(bucket);
    const first = firstOfVersion.get(entry.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(entry.apiVersion, id);
      continue;
    }
    if (!managers.has(bucketId)) {
      const moved = managers.get(first)!;
      managers.delete(first);
      managers.set(bucketId, { ...bucket, fields: moved.fields });
    }
    managers.set(bucketId, { ...bucket, fields: union(entry.fields, managers.get(bucketId)!.fields) });
    managers.delete(id);
    length--;
  }
  return managers;
}
