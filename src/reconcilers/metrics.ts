import type { DeepReadonly } from '../core/index.ts';
import type { KubeObject } from '../kube/api/index.ts';
import type { GcReport, Orphan } from './gc/collector.ts';

/**
 * Raven's own metrics as plain callbacks, every one optional: the daemon wires them to Prometheus
 * (`raven_pod_network_ready_seconds`, `raven_gc_*`), so this layer never depends on a metrics library.
 */
export interface RavenMetrics {
  /** A pod's VIF annotation was written `seconds` after the pod was scheduled (see {@link networkReadySeconds}). */
  podNetworkReady?(seconds: number): void;
  /** The garbage collector deleted an orphan (its OpenStack resource type and owner kind). */
  gcDeleted?(orphan: Pick<Orphan, 'type' | 'ownerKind'>): void;
  /** A garbage-collection round ended: with its report, or failed (`report` absent). */
  gcRun?(report: GcReport | undefined): void;
}

interface PodCondition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
}

/**
 * When the pod became Raven's to wire: the `PodScheduled=True` condition's `lastTransitionTime` (the binding), else
 * the pod's creation (a pod created with `nodeName` set is never bound). Both have one-second resolution.
 */
export function scheduledAt(pod: DeepReadonly<KubeObject>): number | undefined {
  const conditions = (pod.status as { conditions?: readonly PodCondition[] } | undefined)?.conditions;
  const scheduled = conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True')?.lastTransitionTime;
  const at = Date.parse(scheduled ?? pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Seconds from {@link scheduledAt} to `nowMs` (when the VIF annotation was written), never negative (clock skew
 * between the API server and Raven); undefined when the pod carries neither time.
 */
export function networkReadySeconds(pod: DeepReadonly<KubeObject>, nowMs: number): number | undefined {
  const at = scheduledAt(pod);
  return at === undefined ? undefined : Math.max(0, nowMs - at) / 1000;
}
