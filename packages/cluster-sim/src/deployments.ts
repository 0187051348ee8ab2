import { createHash } from 'node:crypto';
import type { DeepReadonly } from '../../../src/core/index.ts';
import type { Reconciler } from '../../../src/controller/index.ts';
import {
  matchesLabels,
  selectorFromLabelSelector,
  splitKey,
  type Deployment,
  type KubeObject,
  type LabelSelector,
  type Pod,
} from '../../../src/kube/api/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isNotFound, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { byNamespace } from './indexes.ts';

export interface DeploymentDeps {
  client: KubeClient;
  deployments: Lister<Deployment>;
  /** Indexed by {@link byNamespace}. */
  pods: Lister<Pod>;
}

/** The label that ties a pod to the template it was made from (kube-controller-manager's `pod-template-hash`). */
export const podTemplateHashLabel = 'pod-template-hash';

/** A short stable hash of a pod template, so pods of an old template are told from the current one's. */
export function templateHash(template: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest('hex')
    .slice(0, 10);
}

const ready = (pod: DeepReadonly<Pod>): boolean =>
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The key of the Deployment that controls a pod, if one does. */
export function deploymentOf(pod: DeepReadonly<KubeObject>): string[] {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller && o.kind === 'Deployment');
  return owner ? [`${pod.metadata.namespace ?? ''}/${owner.name}`] : [];
}

/**
 * A Deployment controller without ReplicaSets: the Deployment's own pods (controller owner reference) are kept at
 * `spec.replicas`, all from the current template (`pod-template-hash`); pods of an older template are deleted and
 * replaced at once (no surge or unavailability budget), and the status counts replicas, updated, ready and available
 * pods with an `Available` condition.
 */
export function deploymentReconciler(deps: DeploymentDeps): Reconciler {
  return async (key, signal) => {
    const d = deps.deployments.get(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const { namespace = '', name } = splitKey(key);
    const hash = templateHash(d.spec?.template);
    const mine = deps.pods
      .byIndex(byNamespace, namespace)
      .filter((p) => p.metadata.ownerReferences?.some((o) => o.controller && o.uid === d.metadata.uid));
    const live = mine.filter((p) => !p.metadata.deletionTimestamp);
    const current = live.filter((p) => p.metadata.labels?.[podTemplateHashLabel] === hash);
    const stale = live.filter((p) => p.metadata.labels?.[podTemplateHashLabel] !== hash);
    const wanted = d.spec?.replicas ?? 1;
    const excess = current.slice(wanted);
    for (const pod of [...stale, ...excess]) {
      await deps.client.delete(resources.pods, pod.metadata.name!, namespace, { signal }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    const selector = selectorFromLabelSelector(structuredClone(d.spec?.selector) as LabelSelector | undefined);
    for (let i = current.length; i < wanted; i++) {
      const labels = { ...d.spec?.template?.metadata?.labels, [podTemplateHashLabel]: hash };
      // A template whose labels the selector does not select would make pods forever; the server refuses those.
      if (!matchesLabels(selector, labels)) break;
      await deps.client.create(
        resources.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            generateName: `${name}-${hash.slice(0, 8)}-`,
            namespace,
            labels,
            ...(d.spec?.template?.metadata?.annotations
              ? { annotations: { ...d.spec.template.metadata.annotations } }
              : {}),
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name,
                uid: d.metadata.uid!,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          spec: structuredClone(d.spec?.template?.spec ?? {}) as Pod['spec'],
        },
        { namespace, signal },
      );
    }
    const kept = current.slice(0, wanted);
    const readyCount = kept.filter(ready).length;
    const replicas = Math.min(current.length, wanted) + stale.length;
    const status: NonNullable<Deployment['status']> = {
      observedGeneration: d.metadata.generation ?? 0,
      replicas,
      updatedReplicas: kept.length,
      readyReplicas: readyCount,
      availableReplicas: readyCount,
      unavailableReplicas: Math.max(0, wanted - readyCount),
      conditions: [
        {
          type: 'Available',
          status: readyCount >= wanted ? 'True' : 'False',
          reason: readyCount >= wanted ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          message:
            readyCount >= wanted
              ? 'Deployment has minimum availability.'
              : 'Deployment does not have minimum availability.',
          lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        },
      ],
    };
    const before = d.status?.conditions?.find((c) => c.type === 'Available');
    const same =
      JSON.stringify({ ...d.status, conditions: undefined }) === JSON.stringify({ ...status, conditions: undefined }) &&
      before?.status === status.conditions![0]!.status;
    if (same) return;
    if (before?.status === status.conditions![0]!.status)
      status.conditions![0]!.lastTransitionTime = before.lastTransitionTime;
    await deps.client.updateStatus(
      resources.deployments,
      { ...(structuredClone(d) as Deployment), status },
      { signal },
    );
  };
}
