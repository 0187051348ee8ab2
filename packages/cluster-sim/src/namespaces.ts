import type { DeepReadonly, Logger } from '../../../src/core/index.ts';
import type { ReconcileResult, Reconciler } from '../../../src/controller/index.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isNotFound, resources } from '../../../src/kube/client/index.ts';
import type { SubresourceWriter } from './subresource.ts';
import type { Namespace } from '../../../src/kube/api/index.ts';
import { byNamespace } from './indexes.ts';

/** The finalizer the namespace controller owns in `spec.finalizers`; every other one belongs to someone else. */
export const kubernetesFinalizer = 'kubernetes';

/** How often to look again when the server would not take the finalize (until the namespace goes). */
const finalizeRetryMs = 1000;

export interface NamespaceDeps {
  namespaces: Lister<Namespace>;
  /** Listers (indexed by {@link byNamespace}) of the kinds that must be gone before a namespace is. */
  contents: readonly Lister<KubeObject>[];
  subresources: SubresourceWriter | undefined;
  logger: Logger;
}

export function terminating(ns: DeepReadonly<Namespace> | undefined): boolean {
  return ns?.metadata.deletionTimestamp !== undefined && (ns.spec?.finalizers ?? []).includes(kubernetesFinalizer);
}

/**
 * The namespace controller's last step: once a terminating namespace holds nothing (of the kinds watched), take the
 * `kubernetes` finalizer out of `spec.finalizers` with `PUT namespaces/<name>/finalize`, leaving every other
 * finalizer (Raven's) in place. Deleting the content is left to the API server, which the embedded one does itself
 * on namespace deletion (as it also drops the finalizer once empty): this reconciler then finds nothing left to do,
 * or gets a 404 for the `/finalize` subresource it does not serve, and looks again until the namespace is gone.
 */
export function namespaceReconciler(deps: NamespaceDeps): Reconciler {
  return async (key, signal): Promise<ReconcileResult | void> => {
    const ns = deps.namespaces.get(key);
    if (!ns || !terminating(ns)) return;
    // Pods waiting out their grace period (the kubelet removes them), or objects held by finalizers: not yet.
    if (deps.contents.some((l) => l.byIndex(byNamespace, key).length > 0)) return;
    if (!deps.subresources) return { requeueAfterMs: finalizeRetryMs };
    const finalized = { ...(structuredClone(ns) as Namespace) };
    finalized.spec = {
      ...finalized.spec,
      finalizers: (ns.spec?.finalizers ?? []).filter((f) => f !== kubernetesFinalizer),
    };
    try {
      await deps.subresources.replace(resources.namespaces, key, undefined, 'finalize', finalized, signal);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      deps.logger.debug(
        { namespace: key },
        'namespaces/finalize not served (or the namespace went meanwhile); the server finalises it',
      );
      return { requeueAfterMs: finalizeRetryMs };
    }
  };
}
