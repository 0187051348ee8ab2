/**
 * reconcilers/network/policy: the NetworkPolicy translation every reconciler shares — the policies compiled with
 * Kubernetes' semantics, the security groups they become and each pod's part in them ({@link PolicyModel}), the
 * rules' Neutron form, and Raven's record of its groups. The security group and policy reconcilers
 * (`reconcilers/policy`) converge Neutron to it; the pod reconciler gives each port its groups.
 */
export {
  compilePolicy,
  isolationOf,
  podSetKey,
  PolicyError,
  type AddressBlock,
  type CompiledPolicy,
  type CompiledRule,
  type Direction,
  type Peer,
  type PodSet,
  type PortMatch,
  type Protocol,
} from './compile.ts';
export {
  describeGroup,
  groupId,
  groupKey,
  groupNameParts,
  podWaitsFor,
  namespaceOfGroup,
  type GroupSpec,
  type NamedPort,
} from './groups.ts';
export { neutronRuleText, ruleCreate, ruleText, type DesiredRule } from './rules.ts';
export { PolicyModel, type DesiredGroup, type PolicyModelSources, type PolicyNode, type PolicyPod } from './model.ts';
export {
  groupSetNamespace,
  groupSetWanted,
  groupWanted,
  listSecurityGroups,
  recordedGroup,
  recordedGroups,
  SecurityGroupRecord,
  SecurityGroupRecordLoader,
  securityGroupTags,
  type RecordedGroup,
  type SecurityGroupRecordLoaderOptions,
} from './record.ts';
export { desiredRuleTexts, groupConverged, GroupStatus, type GroupChanged } from './status.ts';
export { PortGroups, type PodGroupIds } from './port-groups.ts';
