import type { Clock, DeepReadonly, Logger } from '../../../src/core/index.ts';
import { TerminalError, type EventRecorder, type ReconcileResult } from '../../../src/controller/index.ts';
import {
  keyOf,
  objectReference,
  matchesLabels,
  rfc3339,
  selectorFromMap,
  type EventType,
  type Node,
  type Pod,
  type PodCondition,
} from '../../../src/kube/api/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isConflict, isNotFound, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import type { SubresourceWriter } from './subresource.ts';

/** The pod index the scheduler counts with: pods by `spec.nodeName` (`''` = not scheduled yet). */
export const podsByNode = 'cluster-sim/byNode';

export const podsByNodeIndex = (pod: DeepReadonly<Pod>): string[] => [pod.spec?.nodeName ?? ''];

const finished = (pod: DeepReadonly<Pod>): boolean =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Ready and not cordoned: where new pods may go. */
export function schedulable(node: DeepReadonly<Node>): boolean {
  return (
    !node.spec?.unschedulable &&
    node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

export interface SchedulerDeps {
  client: KubeClient;
  /** Without it pods cannot be bound (see subresource.ts). */
  binder: SubresourceWriter | undefined;
  pods: Lister<Pod>;
  nodes: Lister<Node>;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
}

/**
 * kube-scheduler in miniature: binds each unscheduled pod (of the default scheduler) to the schedulable node whose
 * labels match its `nodeSelector` and that runs the fewest pods, through a `pods/binding` POST as the real one does.
 * A pod no node fits gets `PodScheduled=False/Unschedulable` and a `FailedScheduling` Warning Event, and is looked
 * at again when a node changes (see {@link unscheduledPods}).
 */
export class Scheduler {
  readonly #deps: SchedulerDeps;
  /**
   * Pods bound but not yet seen bound in the cache (key → uid and node): counted, so a burst spreads (the scheduler's
   * "assume").
   */
  readonly #assumed = new Map<string, { uid: string | undefined; node: string }>();

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
  }

  /** The node-change map: every pod still waiting for a node. */
  unscheduledPods(): string[] {
    return this.#deps.pods.byIndex(podsByNode, '').map(keyOf);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const { pods, nodes } = this.#deps;
    const pod = pods.get(key);
    if (!pod || pod.spec?.nodeName) {
      this.#assumed.delete(key);
      return;
    }
    if (this.#assumed.get(key)?.uid === pod.metadata.uid || pod.metadata.deletionTimestamp || finished(pod)) return;
    const schedulerName = pod.spec?.schedulerName;
    if (schedulerName && schedulerName !== 'default-scheduler') return;

    const all = nodes.list();
    const ready = all.filter(schedulable);
    const selector = selectorFromMap(pod.spec?.nodeSelector);
    const feasible = ready.filter((n) => matchesLabels(selector, n.metadata.labels));
    if (feasible.length === 0) {
      const reasons = [
        ...(all.length > ready.length ? [`${all.length - ready.length} node(s) were unschedulable or not ready`] : []),
        ...(ready.length > 0 ? [`${ready.length} node(s) didn't match Pod's node affinity/selector`] : []),
      ];
      const message = `0/${all.length} nodes are available: ${reasons.join(', ') || 'no nodes registered'}.`;
      await this.#unschedulable(pod, message, signal);
      return;
    }
    const node = this.#leastLoaded(feasible);
    const binder = this.#deps.binder;
    if (!binder)
      throw new TerminalError(
        'the cluster simulator was built without a `connection`, so it cannot POST pods/binding',
        { reason: 'FailedScheduling' },
      );
    const { name = '', namespace = '' } = pod.metadata;
    // Assumed before the POST, so that other workers placing pods meanwhile count it.
    this.#assumed.set(key, { uid: pod.metadata.uid, node });
    try {
      await binder.create(
        resources.pods,
        name,
        namespace,
        'binding',
        {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid: pod.metadata.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        },
        signal,
      );
    } catch (err) {
      this.#assumed.delete(key);
      // Already bound, being deleted, or gone: the cache will say which; nothing to retry.
      if (isConflict(err) || isNotFound(err)) return;
      throw err;
    }
    this.#deps.logger.debug({ pod: key, node }, 'pod bound');
    this.#event(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${node}`);
  }

  /** The feasible node running the fewest pods (finished ones do not count), by name on a tie. */
  #leastLoaded(feasible: readonly DeepReadonly<Node>[]): string {
    const { pods } = this.#deps;
    const load = new Map<string, number>();
    for (const [key, { uid, node }] of this.#assumed) {
      const pod = pods.get(key);
      if (pod && pod.metadata.uid === uid && !pod.spec?.nodeName) load.set(node, (load.get(node) ?? 0) + 1);
    }
    let best: { name: string; count: number } | undefined;
    for (const node of [...feasible].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
      const name = node.metadata.name ?? '';
      const count = (load.get(name) ?? 0) + pods.byIndex(podsByNode, name).filter((p) => !finished(p)).length;
      if (!best || count < best.count) best = { name, count };
    }
    return best!.name;
  }

  /** `PodScheduled=False/Unschedulable` and one Event per new message (not per reconcile, so a retry is not spam). */
  async #unschedulable(pod: DeepReadonly<Pod>, message: string, signal: AbortSignal): Promise<void> {
    const old = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (old?.status === 'False' && old.message === message) return;
    const condition: PodCondition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastProbeTime: null,
      lastTransitionTime: rfc3339(this.#deps.clock.now()),
    };
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'), condition];
    await this.#deps.client.patch(
      resources.pods,
      pod.metadata.name ?? '',
      pod.metadata.namespace,
      { status: { conditions } },
      'merge',
      { subresource: 'status', signal },
    );
    this.#event(pod, 'Warning', 'FailedScheduling', message);
  }

  #event(pod: DeepReadonly<Pod>, type: EventType, reason: string, message: string): void {
    this.#deps.recorder.record(objectReference(pod, { kind: 'Pod', apiVersion: 'v1' }), type, reason, message);
  }
}
