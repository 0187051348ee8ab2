import {
  formatLabelSelector,
  isPlainObject,
  selectorFromLabelSelector,
  type KubeObject,
  type LabelSelector,
} from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  PatchError,
  type PatchType,
} from '../patch/index.ts';
import type { Target } from './context.ts';
import type { ApiContext } from './context.ts';
import { updateObject, type WriteOptions, type WriteResult } from './write.ts';

/** The `autoscaling/v1` Scale of a Deployment, as `deployments/<name>/scale` shows it. */
export function scaleOf(obj: KubeObject): KubeObject {
  const spec = obj.spec as { replicas?: number; selector?: LabelSelector } | undefined;
  const status = obj.status as { replicas?: number } | undefined;
  const m = obj.metadata;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: spec?.replicas ?? 0 },
    status: {
      replicas: status?.replicas ?? 0,
      selector: formatLabelSelector(selectorFromLabelSelector(spec?.selector)),
    },
  };
}

function current(ctx: ApiContext, target: Target, name: string): KubeObject {
  const obj = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!obj) throw apiErrors.notFound(target.def, name);
  return obj;
}

/**
 * PUT of `…/scale`: the Scale's `spec.replicas` becomes the Deployment's, through the Deployment's own update path
 * (validation, generation, managedFields); a stale `metadata.resourceVersion` is a 409 as on any update.
 */
export function updateScale(
  ctx: ApiContext,
  target: Target,
  name: string,
  body: unknown,
  options: WriteOptions,
): WriteResult {
  const obj = current(ctx, target, name);
  const scale = isPlainObject(body) ? (body as Partial<KubeObject>) : {};
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw apiErrors.badRequest(
      `the kind of the object (${String(scale.kind)}) does not match the expected kind (Scale)`,
    );
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw apiErrors.invalid({ group: 'autoscaling', kind: 'Scale' }, name, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
      },
    ]);
  }
  const rv = scale.metadata?.resourceVersion;
  const next = structuredClone(obj);
  next.spec = { ...(next.spec as object), replicas };
  next.metadata.resourceVersion = rv || obj.metadata.resourceVersion;
  const result = updateObject(ctx, target, name, next, undefined, options);
  return { status: result.status, object: scaleOf(result.object) };
}

/** PATCH of `…/scale` (merge, JSON or strategic: a Scale has no lists) applied to the Scale, then as a PUT. */
export function patchScale(
  ctx: ApiContext,
  target: Target,
  name: string,
  type: PatchType,
  patch: unknown,
  options: WriteOptions,
): WriteResult {
  const base = scaleOf(current(ctx, target, name));
  let patched: unknown;
  try {
    if (type === 'json') patched = applyJsonPatch(base, patch);
    else if (type === 'merge' && isPlainObject(patch)) patched = applyMergePatch(base, patch);
    else if (type === 'strategic' && isPlainObject(patch))
      patched = applyStrategicMergePatch(base, patch, { lists: {} });
    else throw apiErrors.unsupportedMediaType(`the patch type ${type} is not supported on the scale subresource`);
  } catch (err) {
    if (err instanceof PatchError)
      throw err.status === 400 ? apiErrors.badRequest(err.message) : apiErrors.unprocessable(err.message);
    throw err;
  }
  return updateScale(ctx, target, name, patched, options);
}
