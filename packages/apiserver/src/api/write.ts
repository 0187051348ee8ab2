import { isDeepStrictEqual } from 'node:util';
import { isPlainObject, type KubeObject } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  PatchError,
  strategicSchemaFor,
  type PatchType,
} from '../patch/index.ts';
import { admitQuota } from './quota.ts';
import {
  admit,
  checkNamespaceAcceptsCreate,
  decodeApplyConfig,
  decodeObject,
  type DecodeOptions,
  stampNew,
  tracksGeneration,
} from './admission.ts';
import type { ApiContext, Target } from './context.ts';
import { present } from './context.ts';
import { finishDeletion, pendingFinalizers } from './delete.ts';
import { applyToObject, trackWrite } from './managed-fields.ts';
import { storedAs } from '../store/index.ts';

export interface WriteResult {
  status: number;
  object: KubeObject;
}

/** How a write was asked for (CreateOptions, UpdateOptions, PatchOptions). */
export interface WriteOptions extends DecodeOptions {
  /** `dryRun=All`: everything but persisting. */
  dryRun: boolean;
  /** Who writes: the `fieldManager` parameter, else the User-Agent's product (`kubectl`, `python`…), else `unknown`. */
  fieldManager: string;
  /** Server-side apply only: take over fields other managers own instead of failing with a conflict. */
  force?: boolean;
}

/**
 * How a write's managedFields come about: recorded as an Update of `manager` (create, update, non-apply patch),
 * or already computed by server-side apply.
 */
type Tracking = { manager: string; requested: unknown } | 'applied';

/** POST: a new object (generateName, uid, defaults, validation, allocations); 409 if the name is taken. */
export function createObject(ctx: ApiContext, target: Target, body: unknown, options: WriteOptions): WriteResult {
  const obj = decodeObject(target, body, undefined, options);
  return createDecoded(ctx, target, obj, options.dryRun, {
    manager: options.fieldManager,
    requested: obj.metadata.managedFields,
  });
}

function createDecoded(
  ctx: ApiContext,
  target: Target,
  obj: KubeObject,
  dryRun: boolean,
  tracking: Tracking,
): WriteResult {
  stampNew(ctx, target, obj);
  const hooks = ctx.hooks.get(target.table);
  hooks?.defaults?.(obj);
  // Upstream tracks the object as decoded and defaulted, before the strategy initialises it (status, finalizers).
  if (tracking !== 'applied') trackWrite(ctx, target, undefined, obj, { ...tracking, subresource: undefined });
  hooks?.initialize?.(obj);
  admit(ctx, target, obj, undefined);
  const name = obj.metadata.name!;
  checkNamespaceAcceptsCreate(ctx, target, name);
  admitQuota(ctx, target, obj);
  if (ctx.store.get(target.table, target.namespace ?? '', name)) throw apiErrors.alreadyExists(target.def, name);
  hooks?.allocate?.(obj, undefined);
  if (dryRun) {
    hooks?.release?.(undefined, obj);
    return { status: 201, object: present(obj, target.apiVersion) };
  }
  const stored = ctx.store.create(target.table, obj);
  hooks?.committed?.(stored, undefined);
  return { status: 201, object: present(stored, target.apiVersion) };
}

/** PUT of an object or its `/status`: optimistic concurrency on resourceVersion, then the same path as every update. */
export function updateObject(
  ctx: ApiContext,
  target: Target,
  name: string,
  body: unknown,
  subresource: string | undefined,
  options: WriteOptions,
): WriteResult {
  const obj = decodeObject(target, body, name, options);
  const tracking = { manager: options.fieldManager, requested: obj.metadata.managedFields };
  const old = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!old) {
    if (target.def.createOnUpdate && subresource === undefined)
      return createDecoded(ctx, target, obj, options.dryRun, tracking);
    throw apiErrors.notFound(target.def, name);
  }
  const rv = obj.metadata.resourceVersion;
  if (!rv && target.def.unconditionalUpdate === false) {
    throw apiErrors.invalid(target.def, name, [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.resourceVersion',
        message: 'Invalid value: 0x0: must be specified for an update',
      },
    ]);
  }
  return applyUpdate(ctx, target, old, obj, subresource, options.dryRun, tracking);
}

/**
 * Server-side apply (`application/apply-patch+yaml`): merges the applied configuration into the object under field
 * management (409 on conflicts unless `force`), creating the object when it does not exist (201), then the same
 * create or update path as every write.
 */
export function applyObject(
  ctx: ApiContext,
  target: Target,
  name: string,
  body: unknown,
  subresource: string | undefined,
  options: WriteOptions,
): WriteResult {
  const config = decodeApplyConfig(target, body, name);
  const live = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!live && subresource !== undefined) throw apiErrors.notFound(target.def, name);
  const merged = applyToObject(ctx, target, live, config, {
    manager: options.fieldManager,
    force: options.force ?? false,
    subresource,
  });
  const obj = decodeObject(target, merged, name, options);
  if (!live) return createDecoded(ctx, target, obj, options.dryRun, 'applied');
  return applyUpdate(ctx, target, live, obj, subresource, options.dryRun, 'applied');
}

/** PATCH in the json, merge and strategic content types; the patched object then goes through the update path. */
export function patchObject(
  ctx: ApiContext,
  target: Target,
  name: string,
  type: PatchType,
  patch: unknown,
  subresource: string | undefined,
  options: WriteOptions,
): WriteResult {
  if (type === 'apply') return applyObject(ctx, target, name, patch, subresource, options);
  const old = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!old) throw apiErrors.notFound(target.def, name);
  // A patch applies to the object as this client sees it (events.k8s.io Events, another version of a custom resource).
  const base = structuredClone(present(old, target.apiVersion));
  let patched: unknown;
  try {
    if (type === 'json') {
      patched = applyJsonPatch(base, patch);
    } else if (type === 'merge') {
      if (!isPlainObject(patch)) throw apiErrors.badRequest('a merge patch must be a JSON object');
      patched = applyMergePatch(base, patch);
    } else {
      const schema = target.def.custom ? undefined : strategicSchemaFor(target.def.group, target.def.kind);
      if (!schema) {
        throw apiErrors.unsupportedMediaType(
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
        );
      }
      patched = applyStrategicMergePatch(base, patch, schema);
    }
  } catch (err) {
    if (err instanceof PatchError)
      throw err.status === 400 ? apiErrors.badRequest(err.message) : apiErrors.unprocessable(err.message);
    throw err;
  }
  const obj = decodeObject(target, patched, name, options);
  return applyUpdate(ctx, target, old, obj, subresource, options.dryRun, {
    manager: options.fieldManager,
    requested: obj.metadata.managedFields,
  });
}

/**
 * The update path shared by PUT and PATCH: the stale-resourceVersion check, carrying over what the client may not
 * change, defaults and validation, allocations, and the finalizer rule (an object being deleted whose last finalizer
 * goes is removed). An update that changes nothing is not written, as on the real server.
 */
function applyUpdate(
  ctx: ApiContext,
  target: Target,
  old: KubeObject,
  input: KubeObject,
  subresource: string | undefined,
  dryRun: boolean,
  tracking: Tracking,
): WriteResult {
  const name = old.metadata.name!;
  const rv = input.metadata.resourceVersion;
  if (rv && rv !== old.metadata.resourceVersion) throw apiErrors.conflict(target.def, name);
  const hasStatus = target.def.subresources?.includes('status') ?? false;
  let next: KubeObject;
  if (subresource === 'status') {
    if (!hasStatus) throw apiErrors.pathNotFound();
    next = structuredClone(old);
    if (input.status === undefined) delete next.status;
    else next.status = input.status;
    // An apply to /status computed the managedFields along with the status it takes.
    if (tracking === 'applied') {
      if (input.metadata.managedFields === undefined) delete next.metadata.managedFields;
      else next.metadata.managedFields = input.metadata.managedFields;
    }
  } else if (subresource !== undefined) {
    throw apiErrors.pathNotFound();
  } else {
    next = input;
    if (hasStatus) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
    if (target.def.kind === 'Namespace' && target.def.group === '') next.spec = structuredClone(old.spec);
    const meta = next.metadata;
    // As rest.BeforeUpdate: an update without a uid keeps the stored one; one with another uid is refused (admit).
    if (!meta.uid) meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (old.metadata.deletionTimestamp !== undefined) meta.deletionTimestamp = old.metadata.deletionTimestamp;
    if (old.metadata.deletionGracePeriodSeconds !== undefined)
      meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
  }
  const hooks = ctx.hooks.get(target.table);
  hooks?.defaults?.(next);
  admit(ctx, target, next, old);
  next.metadata.resourceVersion = old.metadata.resourceVersion;
  if (tracksGeneration(target)) {
    next.metadata.generation = old.metadata.generation ?? 1;
    if (specChanged(old, next)) next.metadata.generation += 1;
  }
  if (tracking !== 'applied') trackWrite(ctx, target, old, next, { ...tracking, subresource });
  if (isDeepStrictEqual(next, old)) return { status: 200, object: present(old, target.apiVersion) };
  hooks?.allocate?.(next, old);
  if (dryRun) {
    hooks?.release?.(old, next);
    return { status: 200, object: present(next, target.apiVersion) };
  }
  if (
    next.metadata.deletionTimestamp &&
    pendingFinalizers(target, next).length === 0 &&
    !next.metadata.deletionGracePeriodSeconds
  ) {
    const removed = finishDeletion(ctx, target, next);
    return { status: 200, object: present(removed, target.apiVersion) };
  }
  const stored = ctx.store.update(target.table, next);
  hooks?.release?.(stored, old);
  hooks?.committed?.(stored, old);
  return { status: 200, object: present(stored, target.apiVersion) };
}

/** True when anything outside metadata and status changed (what bumps `metadata.generation`). */
function specChanged(old: KubeObject, next: KubeObject): boolean {
  const strip = ({ metadata: _m, status: _s, ...rest }: KubeObject) => rest;
  return !isDeepStrictEqual(strip(old), strip(next));
}

/**
 * `POST pods/<name>/binding` (what a scheduler calls): sets `spec.nodeName` and the PodScheduled condition, which a
 * plain update may not do. 409 when the pod is already bound or being deleted.
 */
export function bindPod(ctx: ApiContext, target: Target, name: string, body: unknown, dryRun: boolean): object {
  const binding = body as
    | { metadata?: { name?: string; annotations?: Record<string, string> }; target?: { kind?: string; name?: string } }
    | undefined;
  const node = binding?.target?.name;
  if (!isPlainObject(body) || !node || (binding.target?.kind && binding.target.kind !== 'Node')) {
    throw apiErrors.invalid({ ...target.def, kind: 'Binding' }, name, [
      { reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' },
    ]);
  }
  if (binding.metadata?.name && binding.metadata.name !== name) {
    throw apiErrors.badRequest(
      `the name of the object (${binding.metadata.name}) does not match the name on the URL (${name})`,
    );
  }
  const stored = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!stored) throw apiErrors.notFound(target.def, name);
  const old = storedAs('/pods', stored);
  const spec = old.spec;
  if (old.metadata.deletionTimestamp)
    throw apiErrors.conflict(target.def, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  if (spec?.nodeName)
    throw apiErrors.conflict(target.def, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
  const next = structuredClone(old);
  next.spec = { ...next.spec, nodeName: node };
  if (binding.metadata?.annotations)
    next.metadata.annotations = { ...next.metadata.annotations, ...binding.metadata.annotations };
  const status = (next.status ??= {});
  const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
  status.conditions = [
    ...conditions,
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: ctx.now() },
  ];
  if (!dryRun) ctx.store.update(target.table, next);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}
