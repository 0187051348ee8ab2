import type { DeepReadonly } from '../../../core/index.ts';
import type { PodGroupIds } from '../../network/index.ts';
import { groupId, podWaitsFor } from './groups.ts';
import type { PolicyModel } from './model.ts';
import type { PolicyPod } from './objects.ts';
import type { SecurityGroupRecord } from './record.ts';
import type { GroupStatus } from './status.ts';

/**
 * What a pod's port must carry, in Neutron's ids: the groups the translation gives the pod ({@link PolicyModel}),
 * found in Raven's record of its groups (no request), plus the configured `securityGroups`. Sorted, so equal sets are
 * equal lists (the warm pools are keyed by them).
 */
export class PortGroups {
  readonly #model: PolicyModel;
  readonly #record: SecurityGroupRecord;
  readonly #extra: readonly string[];
  readonly #status: GroupStatus | undefined;

  /** `status`: the group reconciler's, so that a pod can say why a group it waits for is not made. */
  constructor(model: PolicyModel, record: SecurityGroupRecord, extra: readonly string[], status?: GroupStatus) {
    this.#model = model;
    this.#record = record;
    this.#extra = extra;
    this.#status = status;
  }

  /** Whether the groups can be known: Raven's record of them is loaded. */
  ready(): boolean {
    return this.#record.synced();
  }

  of(pod: DeepReadonly<PolicyPod>): PodGroupIds {
    const ids = new Set(this.#extra);
    const missing: string[] = [];
    const failed: string[] = [];
    const namespace = pod.metadata.namespace ?? '';
    for (const key of this.#model.podGroups(pod)) {
      const id = this.#record.get(groupId(key))?.neutronId;
      if (id) ids.add(id);
      else if (podWaitsFor(key, namespace)) {
        missing.push(key);
        const error = this.#status?.error(groupId(key));
        if (error) failed.push(`${key}: ${error}`);
      }
    }
    return missing.length > 0 ? { missing, failed } : { ids: [...ids].sort() };
  }
}
