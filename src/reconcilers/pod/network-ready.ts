import type { DeepReadonly } from '../../core/index.ts';
import type { Pod } from '../../kube/api/index.ts';

/**
 * When the pod became Raven's to wire: the `PodScheduled=True` condition's `lastTransitionTime` (the binding), else
 * the pod's creation (a pod created with `nodeName` set is never bound). Both have one-second resolution.
 */
export function scheduledAt(pod: DeepReadonly<Pod>): number | undefined {
  const conditions = pod.status?.conditions;
  const scheduled = conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True')?.lastTransitionTime;
  const at = Date.parse(scheduled ?? pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Seconds from {@link scheduledAt} to `nowMs` (when the VIF annotation was written), never negative (clock skew
 * between the API server and Raven); undefined when the pod carries neither time.
 */
export function networkReadySeconds(pod: DeepReadonly<Pod>, nowMs: number): number | undefined {
  const at = scheduledAt(pod);
  return at === undefined ? undefined : Math.max(0, nowMs - at) / 1000;
}
