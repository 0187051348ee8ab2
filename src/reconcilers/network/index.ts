/**
 * reconcilers/network: the network concepts every reconciler stands on — how Raven marks what it owns (tags, names,
 * `device_owner`), the cluster network's shape, subnet strategies, router and subnet helpers, and the namespace
 * network teardown. It imports no other reconciler folder; they all import it.
 */
export {
  TAG_CLUSTER,
  TAG_KIND,
  TAG_UID,
  TAG_UNTIL,
  POD_DEVICE_OWNER,
  SUBPORT_DEVICE_OWNER,
  serviceNameUid,
  holdKindOf,
  heldUntil,
  type HoldKind,
  clusterTag,
  ownerTags,
  ownerOf,
  isOwned,
  podPortTags,
  podPortMark,
  securityGroupMark,
  securityGroupIdOfMark,
  untagged,
  resourceName,
  MAX_RESOURCE_NAME,
  namePrefix,
  type OwnerKind,
  type OwnerRef,
} from './identity.ts';
export type {
  Cloud,
  SubnetInfo,
  FamilySubnet,
  SubnetRanges,
  ReconcilerConfig,
  NamespaceSubnetConfig,
  ClusterNetwork,
  ClusterNetworkSource,
  PoolSizes,
  PortPoolConfig,
  GroupChanged,
  PodGroupIds,
  AdmittedPeers,
  LoadBalancerPeers,
} from './types.ts';
export { WAIT_FOR_OUTSIDE_FIX_MS, retryUntilDone } from './retry.ts';
export {
  rangesOf,
  familyOf,
  familiesOf,
  familySubnets,
  canonicalCidr,
  subnetFamilyAttrs,
  subnetHolding,
  type IpFamily,
} from './families.ts';
export { subnetInfo, ensureRouterInterface, lastHost } from './router.ts';
export {
  NETWORK_ANNOTATION,
  SharedSubnetStrategy,
  NamespaceSubnetStrategy,
  parseNetworkAnnotation,
  type SubnetStrategy,
  type SubnetStrategyName,
} from './subnets.ts';
export { teardownNamespaceNetwork, type TeardownResult } from './teardown.ts';
export { NamespaceNetworks, type NamespaceNetworkChanged } from './namespace-networks.ts';
export {
  adoptPodPorts,
  deleteTrunkAndPodSubports,
  detachSubport,
  isDetachedSubport,
  listPodPorts,
  listUntaggedPodPorts,
} from './ports.ts';
export type { ModuleContext } from './module.ts';
export { RecordLoader, type ListedInto, type RecordLoaderOptions } from './record-loader.ts';
