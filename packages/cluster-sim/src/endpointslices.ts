import type { DeepReadonly } from '../../../src/core/index.ts';
import type { Reconciler } from '../../../src/controller/index.ts';
import { keyOf, splitKey, type EndpointSlice, type Pod, type Service } from '../../../src/kube/api/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isAlreadyExists, isConflict, isNotFound, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import {
  desiredSlices,
  managedBy,
  managedByLabel,
  selectorOf,
  selects,
  serviceNameLabel,
  sliceUpToDate,
} from './slices.ts';
import { byNamespace } from './indexes.ts';

/** The slice index of this controller's slices by their service's key. */
export const slicesByService = 'cluster-sim/byService';

/** This controller's slices by their service's key (`namespace/name`); others' slices are not indexed. */
export function slicesByServiceIndex(slice: DeepReadonly<EndpointSlice>): string[] {
  const labels = slice.metadata.labels ?? {};
  const svc = labels[serviceNameLabel];
  return svc && labels[managedByLabel] === managedBy ? [`${slice.metadata.namespace ?? ''}/${svc}`] : [];
}

export interface EndpointSliceDeps {
  client: KubeClient;
  services: Lister<Service>;
  pods: Lister<Pod>;
  slices: Lister<EndpointSlice>;
  maxEndpointsPerSlice: number;
}

/** Pod change → the services (same namespace) whose selector picks it. */
export function servicesSelecting(services: Lister<Service>, pod: DeepReadonly<Pod>): string[] {
  return services
    .byIndex(byNamespace, pod.metadata.namespace ?? '')
    .filter((svc) => selects(svc, pod))
    .map(keyOf);
}

/**
 * The EndpointSlice controller's reconcile of one Service key: a service with a selector gets the slices
 * {@link desiredSlices} names (created, or updated at the cached resourceVersion); slices of ours the service no
 * longer wants — all of them when it is gone or lost its selector — are deleted (the embedded server collects no
 * garbage by ownerReference). Slices of other managers are never touched.
 */
export function endpointSliceReconciler(deps: EndpointSliceDeps): Reconciler {
  return async (key, signal) => {
    const { client, slices } = deps;
    const { namespace = '' } = splitKey(key);
    const svc = deps.services.get(key);
    const desired =
      svc && selectorOf(svc)
        ? desiredSlices(svc, deps.pods.byIndex(byNamespace, namespace), deps.maxEndpointsPerSlice)
        : [];
    let requeue = false;
    for (const slice of desired) {
      const name = slice.metadata.name ?? '';
      const current = slices.get(`${namespace}/${name}`);
      try {
        if (!current) await client.create(resources.endpointslices, slice, { signal });
        else if (!sliceUpToDate(current, slice)) {
          const metadata = {
            ...structuredClone(current.metadata),
            labels: { ...current.metadata.labels, ...slice.metadata.labels },
            ownerReferences: slice.metadata.ownerReferences,
          };
          await client.update(resources.endpointslices, { ...slice, metadata } as EndpointSlice, { signal });
        }
      } catch (err) {
        // Our cache is behind (made meanwhile, or changed): look again once the informer catches up.
        if (!isAlreadyExists(err) && !isConflict(err)) throw err;
        requeue = true;
      }
    }
    const wanted = new Set(desired.map((s) => s.metadata.name));
    for (const slice of slices.byIndex(slicesByService, key)) {
      if (wanted.has(slice.metadata.name)) continue;
      try {
        await client.delete(resources.endpointslices, slice.metadata.name ?? '', namespace, {
          preconditions: { uid: slice.metadata.uid ?? '' },
          signal,
        });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    }
    return requeue ? { requeue: true } : undefined;
  };
}
