/**
 * reconcilers/nested: nested pods, the node side — Kubernetes nodes that are Nova VMs and their Neutron trunks
 * (docs/nested.md).
 *
 * Contract:
 * - A node is a VM when its `spec.providerID` is `openstack:///<server id>` or `openstack://<region>/<server id>`
 *   ({@link providerIdentity}, strict and bounded). Its trunk's parent is the server's Nova port
 *   ({@link decideTrunk}); its trunk is the one on that port, made by Raven with `nested.mode: auto`.
 * - {@link NodeTrunkReconciler} reconciles Node names; what it finds is in {@link NestedNodes} (in memory: Neutron is
 *   the record). What stops a VM node from having a trunk is a Warning Event on the Node with a stable reason
 *   ({@link NestedRefusal}). A gone Node's Raven-made trunk is deleted.
 */
export { providerIdentity, type ProviderIdentity } from './provider-id.ts';
export {
  decideTrunk,
  type NestedRefusal,
  type NodeTrunk,
  type ServerPort,
  type TrunkDecision,
  type TrunkInputs,
} from './trunk-decision.ts';
export { NestedNodes, type NestedNode, type NestedNodeChanged } from './nodes.ts';
export { NodeTrunkReconciler, trunkMark, type NodeTrunkReconcilerOptions } from './reconciler.ts';
export { setupNested, type NestedModule } from './module.ts';
export { TrunkSubports } from './subports.ts';
export { pickVlan, VLAN_MIN, VLAN_MAX } from './vlan.ts';
