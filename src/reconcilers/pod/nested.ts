import type { EventChannel } from '../../controller/index.ts';
import { signVif, type Vif, type VifNested } from '../../kube/api/index.ts';
import type { NeutronClient } from '../../openstack/index.ts';
import type { SubnetInfo } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';
import { vifFor, type VifSigning } from './vif-check.ts';

/** A VM node's trunk, as the pod side needs it (reconcilers/nested's `NestedNode`). */
export interface PodTrunk {
  node: string;
  trunkId: string;
  parentMac: string;
}

/**
 * What the pod controller takes from nested mode (reconcilers/nested, docs/nested.md): which nodes are VMs with a
 * trunk, and the trunks' subports. Declared here, where it is used, so that the pod module does not depend on the
 * nested one.
 */
export interface NestedPods {
  /** The node's trunk; `pending` for a VM whose trunk is not known (yet); undefined for a bare host. */
  nodeOf(nodeName: string | undefined): PodTrunk | 'pending' | undefined;
  subports: {
    vlanOf(trunkId: string, portId: string): number | undefined;
    trunkOf(portId: string): string | undefined;
    read(neutron: NeutronClient, trunkId: string, signal: AbortSignal): Promise<void>;
    attach(neutron: NeutronClient, trunkId: string, portId: string, signal: AbortSignal): Promise<number>;
    attachAll(
      neutron: NeutronClient,
      trunkId: string,
      portIds: readonly string[],
      signal: AbortSignal,
    ): Promise<Map<string, number>>;
    detach(neutron: NeutronClient, portId: string, signal: AbortSignal): Promise<void>;
  };
  /**
   * A node's trunk became known, changed or was forgotten: its pods (and its subport pools) are looked at again. And
   * which node a trunk is of: a free subport's pool is its trunk's node's.
   */
  nodes: { changed: EventChannel<{ node: string }>; nodeOfTrunk(trunkId: string): string | undefined };
}

/**
 * The node a port waits on: its `binding:host_id`, or — a subport, which has none — its trunk's node (as last read);
 * `''` when neither is known, or it is bound to a VM. What keys a port's pool (docs/pools.md, "Subport pools").
 */
export function nodeOfPort(port: Pick<RecordedPort, 'id' | 'hostId'>, nested: NestedPods | undefined): string {
  if (!nested) return port.hostId;
  // A port bound to a VM (from before nested mode was on) is no pool's: its pods get subports.
  if (port.hostId) return nested.nodeOf(port.hostId) === undefined ? port.hostId : '';
  const trunkId = nested.subports.trunkOf(port.id);
  return (trunkId && nested.nodes.nodeOfTrunk(trunkId)) ?? '';
}

/**
 * The VIF of a subport: the port's, with where the VM reaches it (`nested`), signed — when Raven holds a VIF key — for
 * the pod's Kubernetes node (the VM) and `plug: 'vlan'` (docs/vif-cni.md).
 */
export function nestedVifFor(
  podUid: string,
  port: RecordedPort,
  subnet: SubnetInfo,
  nested: VifNested,
  node: string,
  signing?: VifSigning,
): Vif {
  const vif: Vif = { ...vifFor(podUid, { ...port, plug: '', hostId: '' }, subnet), nested };
  return signing ? signVif(vif, signing.key, { node, plug: 'vlan', epoch: signing.epoch() }) : vif;
}
