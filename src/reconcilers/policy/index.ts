/**
 * reconcilers/policy: NetworkPolicy → Neutron security groups, converged and reported.
 *
 * Contract:
 * - {@link SecurityGroupReconciler} is keyed by a group's id (the translation's, `policy/translation`): it makes, diffs and
 *   deletes one group and its rules, from the translation over the caches and Raven's record of its groups. Events
 *   in: the record's loader, policy, namespace, pod and node changes mapped to the groups they touch, and the groups'
 *   own changes (a rule that names a group waits for it). Out: {@link GroupStatus.changed}.
 * - {@link NetworkPolicyReconciler} is keyed by policy: Events `Translated` and `TranslationFailed` on the policy.
 * - {@link groupVerification} is a check around the garbage collector's sweep: it replaces the record with the sweep's
 *   list and announces each group changed behind Raven's back (out: {@link GroupDrifted}), which the group reconciler
 *   repairs.
 * - Which groups a pod's port carries is the pod reconciler's (one port update when the set changes).
 */
export { SecurityGroupReconciler, type SecurityGroupReconcilerOptions } from './group-reconciler.ts';
export { NetworkPolicyReconciler, type NetworkPolicyReconcilerOptions } from './policy-reconciler.ts';
export { groupVerification, type GroupDrifted, type GroupVerificationOptions } from './verify.ts';
export {
  policyModelOver,
  setupNetworkPolicies,
  type NetworkPolicyModule,
  type NetworkPolicyModuleInputs,
  type PolicyGroup,
  type AddressedPod,
  type PodPortsView,
  type PolicyMetrics,
  type PolicySources,
} from './module.ts';
export * from './translation/index.ts';
