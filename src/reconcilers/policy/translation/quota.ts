import type { DeepReadonly } from '../../../core/index.ts';
import type { NetworkPolicy } from '../../../kube/api/index.ts';
import { keyOf } from '../../../kube/api/index.ts';
import { PolicyError, type CompiledPolicy } from './compile.ts';
import { addPolicyRules, emptyIndex } from './templates.ts';

/** A policy refused because its namespace's policies would need more groups than `quotas.securityGroupsPerNamespace`. */
export class NamespaceQuotaError extends PolicyError {
  constructor(namespace: string, limit: number) {
    super(
      `namespace ${namespace}'s NetworkPolicies would need more than ${limit} security group(s) ` +
        '(quotas.securityGroupsPerNamespace)',
    );
  }
}

/**
 * The per-namespace share of the project's security group quota, applied while the policies are indexed: each
 * namespace's policies are admitted oldest first (creation time, then name), and one whose groups (its target, its
 * peers, its named-port families) would take the namespace's distinct groups past the limit is refused. Oldest first,
 * so a new policy can never take the groups of one already translated. A refused policy fails closed like a policy
 * Raven cannot read, so no pod of any namespace waits for a group that would not fit. A named-port family counts as
 * one group, whatever the numbers its pods resolve it to.
 */
export class NamespaceGroupQuota {
  readonly #limit: number;
  readonly #used = new Map<string, Set<string>>();

  /** `limit` 0: no limit. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  admissionOrder<P extends DeepReadonly<NetworkPolicy>>(policies: readonly P[]): readonly P[] {
    if (this.#limit === 0) return policies;
    const created = (p: P) => p.metadata.creationTimestamp ?? '';
    return [...policies].sort((a, b) => created(a).localeCompare(created(b)) || keyOf(a).localeCompare(keyOf(b)));
  }

  /** The policy, or why it does not fit its namespace's share (then it counts for nothing). */
  admit(policy: CompiledPolicy): CompiledPolicy | PolicyError {
    if (this.#limit === 0) return policy;
    const used = this.#used.get(policy.namespace) ?? new Set<string>();
    const after = new Set([...used, ...groupsOf(policy)]);
    if (after.size > this.#limit) return new NamespaceQuotaError(policy.namespace, this.#limit);
    this.#used.set(policy.namespace, after);
    return policy;
  }
}

/** The keys of the pod sets and named-port families a policy's rules make groups for (indexed on their own). */
function groupsOf(policy: CompiledPolicy): string[] {
  const index = emptyIndex('', 0);
  addPolicyRules(index, policy);
  return [...[...index.sets.keys()].map((k) => `set ${k}`), ...index.families.keys()];
}
