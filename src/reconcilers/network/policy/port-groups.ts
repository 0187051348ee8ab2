import type { DeepReadonly } from '../../../core/index.ts';
import { groupId } from './groups.ts';
import type { PolicyModel, PolicyPod } from './model.ts';
import type { SecurityGroupRecord } from './record.ts';

/** A pod's groups as Neutron ids, or the keys of those that do not exist yet (the pod waits for them). */
export type PodGroupIds = { ids: string[] } | { missing: string[] };

/**
 * What a pod's port must carry, in Neutron's ids: the groups the translation gives the pod ({@link PolicyModel}),
 * found in Raven's record of its groups (no request), plus the configured `securityGroups`. Sorted, so equal sets are
 * equal lists (the warm pools are keyed by them).
 */
export class PortGroups {
  readonly #model: PolicyModel;
  readonly #record: SecurityGroupRecord;
  readonly #extra: readonly string[];

  constructor(model: PolicyModel, record: SecurityGroupRecord, extra: readonly string[]) {
    this.#model = model;
    this.#record = record;
    this.#extra = extra;
  }

  /** Whether the groups can be known: Raven's record of them is loaded. */
  ready(): boolean {
    return this.#record.synced();
  }

  of(pod: DeepReadonly<PolicyPod>): PodGroupIds {
    const ids = new Set(this.#extra);
    const missing: string[] = [];
    for (const key of this.#model.podGroups(pod)) {
      const id = this.#record.get(groupId(key))?.neutronId;
      if (id) ids.add(id);
      else missing.push(key);
    }
    return missing.length > 0 ? { missing } : { ids: [...ids].sort() };
  }
}
