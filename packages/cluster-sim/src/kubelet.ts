import { isDeepStrictEqual } from 'node:util';
import { errorMessage, type Clock, type DeepReadonly } from '../../../src/core/index.ts';
import type { ReconcileResult, Reconciler } from '../../../src/controller/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isConflict, isNotFound, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { desiredPodStatus } from './pod-status.ts';
import type { SimNode } from './nodes.ts';
import { objectReference, type Pod } from '../../../src/kube/api/index.ts';
import type { EventRecorder } from '../../../src/controller/index.ts';
import type { DataplaneRuntime } from './runtime/sandboxes.ts';

export interface KubeletDeps {
  client: KubeClient;
  pods: Lister<Pod>;
  /** The simulated nodes by name: pods bound elsewhere are not ours to run. */
  byName: ReadonlyMap<string, SimNode>;
  vifAnnotation: string;
  requireVif: boolean;
  /** The most a terminating pod waits before the kubelet removes it (its grace period, capped by this). */
  deleteGraceMs: number;
  clock: Clock;
  /** Runs the pods of real-dataplane nodes: network namespaces plugged through CNI. */
  runtime?: DataplaneRuntime | undefined;
  recorder?: EventRecorder | undefined;
}

/**
 * The kubelets of every simulated node in one reconciler: a bound pod's status follows {@link desiredPodStatus}
 * (written only when it changes), and a pod deleted with a grace period is removed (`gracePeriodSeconds: 0`, the
 * kubelet's last word) once that grace — capped by `deleteGraceMs` — has passed. On a node the `runtime` runs, a pod
 * is first plugged for real (a network namespace, CNI ADD) and reports the IP of its CNI result.
 */
export function kubeletReconciler(deps: KubeletDeps): Reconciler {
  return async (key, signal) => {
    const pod = deps.pods.get(key);
    const node = pod?.spec?.nodeName ? deps.byName.get(pod.spec.nodeName) : undefined;
    const { runtime } = deps;
    // The sandbox goes with the pod: deleted, terminating, finished, or replaced by another of the same name (ensure
    // sees that one).
    const finished = pod?.status?.phase === 'Succeeded' || pod?.status?.phase === 'Failed';
    if (runtime && (!pod || pod.metadata.deletionTimestamp || finished)) await runtime.remove(key, signal);
    if (!pod || !node) return;
    if (pod.metadata.deletionTimestamp) return removeWhenDue(deps, pod, signal);
    const plugged =
      runtime?.runs(node.name) && !pod.spec?.hostNetwork && !finished
        ? await sandbox(deps, runtime, key, pod, signal)
        : undefined;
    const desired = desiredPodStatus(pod, {
      nodeIp: node.ip,
      now: deps.clock.now(),
      vifAnnotation: deps.vifAnnotation,
      requireVif: deps.requireVif,
      ...(plugged ? { podIps: plugged.podIps } : {}),
    });
    if (!desired) return;
    if (!isDeepStrictEqual(desired.status, pod.status)) {
      // A merge patch of /status, without a resourceVersion: the kubelet alone writes a bound pod's status, and
      // Raven's annotation write must not turn into a conflict and a retry here.
      try {
        await deps.client.patch(
          resources.pods,
          pod.metadata.name ?? '',
          pod.metadata.namespace,
          { status: desired.status },
          'merge',
          { subresource: 'status', signal },
        );
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    }
    return desired.recheckAfterMs === undefined ? undefined : { requeueAfterMs: desired.recheckAfterMs };
  };
}

/** The pod's sandbox from the runtime; a failure is a Warning Event on the pod (as the kubelet's) and a retry. */
async function sandbox(
  deps: KubeletDeps,
  runtime: DataplaneRuntime,
  key: string,
  pod: DeepReadonly<Pod>,
  signal: AbortSignal,
) {
  try {
    return await runtime.ensure(key, pod, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    deps.recorder?.record(
      objectReference(pod, { kind: 'Pod', apiVersion: 'v1' }),
      'Warning',
      'FailedCreatePodSandBox',
      `Failed to create pod sandbox: ${errorMessage(err)}`,
    );
    throw err;
  }
}

/** Deletes a terminating pod for good once its grace (capped) has passed; until then, looks again when it will have. */
async function removeWhenDue(
  deps: KubeletDeps,
  pod: DeepReadonly<Pod>,
  signal: AbortSignal,
): Promise<ReconcileResult | void> {
  const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
  // No grace: the server removes the pod itself (at once, or when its finalizers go); nothing for a kubelet to do.
  if (graceMs <= 0) return;
  // deletionTimestamp = when the delete was asked for + the grace period.
  const requested = Date.parse(pod.metadata.deletionTimestamp ?? '') - graceMs;
  const due = (Number.isFinite(requested) ? requested : deps.clock.now()) + Math.min(graceMs, deps.deleteGraceMs);
  const wait = due - deps.clock.now();
  if (wait > 0) return { requeueAfterMs: wait };
  try {
    await deps.client.delete(resources.pods, pod.metadata.name ?? '', pod.metadata.namespace, {
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid ?? '' },
      signal,
    });
  } catch (err) {
    // Gone already, or another pod of the same name now (uid precondition): either way not ours to delete.
    if (isNotFound(err) || isConflict(err)) return;
    throw err;
  }
}
