import { isPlainObject, type KubeList, type KubeObject } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import { storageKeyOf } from '../resources/index.ts';
import { present, rfc3339, targetOf, type ApiContext, type Target } from './context.ts';
import { selectionOf } from './selection.ts';
import { storedAs } from '../store/index.ts';

/** `meta/v1 DeleteOptions`, from the body or the query string. */
export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

export function deleteOptionsOf(body: unknown, query: URLSearchParams): DeleteOptions {
  if (body !== undefined && !isPlainObject(body)) throw apiErrors.badRequest('DeleteOptions must be a JSON object');
  const options: DeleteOptions = { ...(body as DeleteOptions | undefined) };
  const policy = query.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy;
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) options.gracePeriodSeconds = Number(grace);
  if (options.propagationPolicy && !['Orphan', 'Background', 'Foreground'].includes(options.propagationPolicy)) {
    throw apiErrors.badRequest(
      `propagationPolicy: Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  return options;
}

/** Finalizers that still hold an object being deleted (a namespace is also held by `spec.finalizers`). */
export function pendingFinalizers(target: Target, obj: KubeObject): string[] {
  const pending = [...(obj.metadata.finalizers ?? [])];
  if (target.table === '/namespaces') pending.push(...(storedAs('/namespaces', obj).spec?.finalizers ?? []));
  return pending;
}

/** Removes an object for good, giving back its allocations and running its kind's clean-up. */
export function finishDeletion(ctx: ApiContext, target: Target, obj: KubeObject): KubeObject {
  const removed = ctx.store.remove(target.table, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
  if (!removed) return obj;
  const hooks = ctx.hooks.get(target.table);
  hooks?.release?.(undefined, removed);
  hooks?.removed?.(removed);
  return removed;
}

/** Namespaces the real NamespaceLifecycle admission plugin refuses to delete (403). */
export const immortalNamespaces: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/**
 * DELETE semantics shared by every path that deletes (DELETE, deletecollection, namespace termination, CRD clean-up):
 * an object with finalizers gets `deletionTimestamp` and stays until they are gone; one without is removed at once;
 * a namespace turns `Terminating` and is emptied. Returns the object as the response shows it.
 */
export function deleteOne(
  ctx: ApiContext,
  target: Target,
  obj: KubeObject,
  options: DeleteOptions,
  dryRun: boolean,
): { object: KubeObject; deleted: boolean } {
  const { preconditions } = options;
  const name = obj.metadata.name ?? '';
  if (target.table === '/namespaces' && immortalNamespaces.has(name)) {
    throw apiErrors.forbidden(target.def, name, 'this namespace may not be deleted');
  }
  if (preconditions?.uid && preconditions.uid !== obj.metadata.uid) {
    throw apiErrors.conflict(
      target.def,
      name,
      `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`,
    );
  }
  if (preconditions?.resourceVersion && preconditions.resourceVersion !== obj.metadata.resourceVersion) {
    throw apiErrors.conflict(
      target.def,
      name,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`,
    );
  }
  const grace = gracePeriodOf(ctx, target, obj, options);
  if (obj.metadata.deletionTimestamp && target.table === '/namespaces') {
    throw apiErrors.conflict(
      target.def,
      name,
      'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.',
    );
  }
  if (obj.metadata.deletionTimestamp) {
    // Only a pod waiting out its grace period moves on, when deleted again with none (the kubelet's last word).
    if (grace > 0 || (obj.metadata.deletionGracePeriodSeconds ?? 0) === 0) return { object: obj, deleted: false };
  }
  if (pendingFinalizers(target, obj).length === 0 && grace === 0) {
    if (dryRun) return { object: obj, deleted: true };
    return { object: finishDeletion(ctx, target, obj), deleted: true };
  }
  const next = structuredClone(obj);
  next.metadata.deletionTimestamp ??= rfc3339(new Date(Date.now() + grace * 1000));
  next.metadata.deletionGracePeriodSeconds = grace;
  if (target.table === '/namespaces') {
    const ns = storedAs('/namespaces', next);
    ns.status = { ...ns.status, phase: 'Terminating' };
  }
  if (dryRun) return { object: next, deleted: false };
  const stored = ctx.store.update(target.table, next);
  if (target.table === '/namespaces') setImmediate(() => terminateNamespace(ctx, name));
  return { object: stored, deleted: false };
}

/**
 * Seconds a pod is given to stop before it may go, with graceful pod deletion on: the request's gracePeriodSeconds,
 * else the pod's terminationGracePeriodSeconds, and 0 for pods that never ran anywhere or have finished (as on the
 * real server). Everything else, and every pod with the simulation off, goes at once.
 */
function gracePeriodOf(ctx: ApiContext, target: Target, obj: KubeObject, options: DeleteOptions): number {
  if (!ctx.podGracefulDeletion || target.table !== '/pods') return 0;
  const pod = storedAs('/pods', obj);
  const spec = pod.spec;
  const phase = pod.status?.phase;
  if (!spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  return Math.max(0, options.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30);
}

/** DELETE of one object: 200 with the object (deleted, or marked for deletion). */
export function deleteObject(
  ctx: ApiContext,
  target: Target,
  name: string,
  options: DeleteOptions,
  dryRun: boolean,
): KubeObject {
  const obj = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!obj) throw apiErrors.notFound(target.def, name);
  return present(deleteOne(ctx, target, obj, options, dryRun).object, target.apiVersion);
}

/** DELETE of a collection (with selectors): the list of what was deleted or marked. */
export function deleteCollection(
  ctx: ApiContext,
  target: Target,
  query: URLSearchParams,
  options: DeleteOptions,
  dryRun: boolean,
): KubeList {
  const matches = selectionOf(target.def, query);
  const items = ctx.store
    .list(target.table, target.namespace)
    .filter(matches)
    .map((obj) => present(deleteOne(ctx, target, obj, options, dryRun).object, target.apiVersion));
  return {
    kind: target.def.listKind ?? `${target.def.kind}List`,
    apiVersion: target.apiVersion,
    metadata: { resourceVersion: String(ctx.store.currentRv) },
    items,
  };
}

/**
 * The namespace controller's job, done in-process: delete everything in a terminating namespace, and once nothing
 * is left, drop the `kubernetes` finalizer so the namespace goes. Objects held by finalizers keep it Terminating; it
 * is re-checked whenever something in it is removed (see `watchNamespaceTermination`).
 */
export function terminateNamespace(ctx: ApiContext, namespace: string): void {
  const nsDef = ctx.registry.lookup('', 'v1', 'namespaces')!;
  const nsTarget = targetOf(nsDef, 'v1', undefined);
  const ns = ctx.store.get(nsTarget.table, '', namespace);
  if (!ns?.metadata.deletionTimestamp) return;
  let remaining = 0;
  for (const def of ctx.registry.all()) {
    if (!def.namespaced) continue;
    const target = targetOf(def, def.versions[0]!, namespace);
    for (const obj of ctx.store.list(storageKeyOf(def), namespace)) {
      if (!deleteOne(ctx, target, obj, {}, false).deleted) remaining++;
    }
  }
  if (remaining > 0) return;
  const next = storedAs('/namespaces', structuredClone(ns));
  next.spec = { ...next.spec, finalizers: [] };
  if ((next.metadata.finalizers ?? []).length > 0) {
    ctx.store.update(nsTarget.table, next);
    return;
  }
  finishDeletion(ctx, nsTarget, next);
}

/** Re-runs namespace termination when an object inside a terminating namespace is removed. */
export function watchNamespaceTermination(ctx: ApiContext): () => void {
  const scheduled = new Set<string>();
  return ctx.store.subscribe((event) => {
    if (event.type !== 'DELETED' || event.namespace === '' || scheduled.has(event.namespace)) return;
    const ns = ctx.store.get('/namespaces', '', event.namespace);
    if (!ns?.metadata.deletionTimestamp) return;
    scheduled.add(event.namespace);
    setImmediate(() => {
      scheduled.delete(event.namespace);
      terminateNamespace(ctx, event.namespace);
    });
  });
}
