/**
 * reconcilers/policy/translation: the NetworkPolicy translation — the policies compiled with Kubernetes' semantics,
 * the security groups they become and each pod's part in them ({@link PolicyModel}), the rules' Neutron form, and
 * Raven's record of its groups. The security group and policy reconcilers beside it converge Neutron to it; the pod
 * module takes each port's groups through the contract `policy/module.ts` gives it (`PodGroupIds`, in `network/`).
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
export { PolicyModel, type PolicyModelSources } from './model.ts';
export { admittedPeers, type AdmittedPeers, type AdmittedPeersInput } from './load-balancer-peers.ts';
export type { DesiredGroup, PolicyNode, PolicyPod } from './objects.ts';
export {
  groupSetNamespace,
  groupSetWanted,
  groupWanted,
  listSecurityGroups,
  recordedGroup,
  recordedGroups,
  SecurityGroupRecord,
  securityGroupRecordLoader,
  securityGroupTags,
  type RecordedGroup,
  type SecurityGroupRecordLoaderOptions,
} from './record.ts';
export { desiredRuleTexts, groupConverged, GroupStatus } from './status.ts';
export { PortGroups } from './port-groups.ts';
