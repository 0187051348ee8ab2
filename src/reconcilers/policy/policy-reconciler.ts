import { realClock, type Clock, type DeepReadonly, type Logger } from '../../core/index.ts';
import type { EventRecorder, ReconcileResult } from '../../controller/index.ts';
import { objectReference, type EventType, type NetworkPolicy } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import {
  groupConverged,
  PolicyError,
  type GroupStatus,
  type PolicyModel,
  type PolicyPod,
  type PortGroups,
  type SecurityGroupRecord,
} from './translation/index.ts';

export interface NetworkPolicyReconcilerOptions {
  policies: Lister<NetworkPolicy>;
  pods: Lister<PolicyPod>;
  model: PolicyModel;
  record: SecurityGroupRecord;
  status: GroupStatus;
  portGroups: PortGroups;
  /** The Neutron ids of the groups the pod's port carries (Raven's record of its ports); undefined: no port yet. */
  portGroupsOf: (pod: DeepReadonly<PolicyPod>) => readonly string[] | undefined;
  recorder?: EventRecorder | undefined;
  /** Once per policy generation, when Neutron first holds all of it: seconds since Raven saw that generation. */
  onTranslated?: ((seconds: number) => void) | undefined;
  clock?: Clock;
  logger: Logger;
}

/**
 * What a NetworkPolicy's translation has come to, on the policy itself (upstream's NetworkPolicy has no status): a
 * Warning `TranslationFailed` with the reason while it cannot be translated (a policy Raven cannot read, or a group it
 * needs that Neutron refuses), and a Normal `Translated` once Neutron holds all of it — its groups with exactly their
 * rules, and every pod port the policy concerns (pods it selects or names, or carrying one of its groups) with
 * exactly its groups. The security group and pod reconcilers do the work; this one reports it, keyed by policy, from
 * the caches, Raven's records and the group reconciler's last word.
 */
export class NetworkPolicyReconciler {
  readonly #o: NetworkPolicyReconcilerOptions;
  readonly #clock: Clock;
  /** When this process first saw each policy's generation, and whether its translation was reported. */
  readonly #seen = new Map<string, { generation: string; since: number; reported: boolean }>();

  constructor(options: NetworkPolicyReconcilerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /** The policies whose translation is not reported yet: a group or a port's groups changing may complete it. */
  pending(): string[] {
    return [...this.#seen].filter(([, s]) => !s.reported).map(([key]) => key);
  }

  readonly reconcile = (key: string): ReconcileResult | void => {
    const policy = this.#o.policies.get(key);
    if (!policy) return void this.#seen.delete(key);
    if (!this.#o.record.synced()) return;
    const generation = String(policy.metadata.generation ?? policy.metadata.resourceVersion ?? '');
    let seen = this.#seen.get(key);
    if (seen?.generation !== generation)
      this.#seen.set(key, (seen = { generation, since: this.#clock.now(), reported: false }));
    const compiled = this.#o.model.compiled(key);
    if (compiled instanceof PolicyError) {
      const message = `${compiled.message}: the pods it selects stay isolated, with none of its rules`;
      return this.#event(policy, 'Warning', 'TranslationFailed', message);
    }
    const groups = this.#o.model.groups();
    const ids = this.#o.model.policyGroups(key);
    const failed = ids.flatMap((id) => {
      const error = this.#o.status.error(id);
      return error ? [`security group ${groups.get(id)?.key ?? id}: ${error}`] : [];
    });
    if (failed.length > 0) return this.#event(policy, 'Warning', 'TranslationFailed', failed.join('; '));
    if (!ids.every((id) => groups.has(id) && groupConverged(groups.get(id)!, this.#o.record))) return;
    let carriers = 0;
    const neutronIds = new Set(ids.map((id) => this.#o.record.get(id)?.neutronId));
    // Only the pods the policy concerns — those it selects (isolated, maybe by no group at all), those its rules name,
    // those carrying one of its groups: a pod stuck elsewhere, in another tenant's namespace, holds nothing back.
    const affected = new Set(this.#o.model.affectedPods(policy));
    for (const pod of this.#o.pods.list()) {
      const have = this.#o.portGroupsOf(pod);
      if (!have) continue;
      const carries = have.some((id) => neutronIds.has(id));
      if (!carries && !affected.has(`${pod.metadata.namespace}/${pod.metadata.name}`)) continue;
      const want = this.#o.portGroups.of(pod);
      if (!('ids' in want) || want.ids.join(',') !== [...have].sort().join(',')) return;
      if (carries) carriers++;
    }
    const rules = ids.reduce((n, id) => n + (groups.get(id)?.rules.length ?? 0), 0);
    const message = `generation ${generation}: ${ids.length} security group(s) with ${rules} rule(s); ${carriers} pod port(s) carry them`;
    this.#event(policy, 'Normal', 'Translated', message);
    if (!seen.reported) {
      seen.reported = true;
      this.#o.onTranslated?.((this.#clock.now() - seen.since) / 1000);
      this.#o.logger.info({ policy: key, generation, groups: ids.length, rules }, 'network policy translated');
    }
  };

  #event(policy: DeepReadonly<NetworkPolicy>, type: EventType, reason: string, message: string): void {
    const ref = objectReference(policy, { kind: 'NetworkPolicy', apiVersion: 'networking.k8s.io/v1' });
    this.#o.recorder?.record(ref, type, reason, message, { once: true });
  }
}
