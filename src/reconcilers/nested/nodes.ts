import { EventChannel } from '../../controller/index.ts';

/** A VM node's trunk, as Neutron last said: what its pods' subports are added to and their VIFs name. */
export interface NestedNode {
  node: string;
  serverId: string;
  trunkId: string;
  parentPortId: string;
  /** The parent port's MAC: the VM's NIC the VLAN sub-interfaces are made on (`nested.parentMac` of a VIF). */
  parentMac: string;
  /** Whether Raven made the trunk (and deletes it when the node goes). */
  made: boolean;
}

/** "A node's trunk is known, changed or forgotten": pods on it may be wired now. */
export interface NestedNodeChanged {
  node: string;
}

/**
 * The VM nodes whose trunk Raven has found or made, by node name: written by the node trunk reconciler only, read by
 * the pod side (a pod on a node listed here gets a subport) and `raven plan`. In memory: every node is reconciled
 * again when Raven starts leading, and Neutron (the trunk, its parent) is the record.
 */
export class NestedNodes {
  readonly changed = new EventChannel<NestedNodeChanged>('nested-node-changed');
  readonly #byNode = new Map<string, NestedNode>();
  readonly #byTrunk = new Map<string, string>();

  get(node: string): NestedNode | undefined {
    return this.#byNode.get(node);
  }

  /** The node whose trunk this is (a subport's pool is its trunk's node's). */
  nodeOfTrunk(trunkId: string): string | undefined {
    return this.#byTrunk.get(trunkId);
  }

  all(): NestedNode[] {
    return [...this.#byNode.values()];
  }

  set(entry: NestedNode): void {
    const before = this.#byNode.get(entry.node);
    if (before) this.#byTrunk.delete(before.trunkId);
    this.#byNode.set(entry.node, entry);
    this.#byTrunk.set(entry.trunkId, entry.node);
    if (JSON.stringify(before) !== JSON.stringify(entry)) this.changed.send({ node: entry.node });
  }

  delete(node: string): void {
    const before = this.#byNode.get(node);
    if (before) this.#byTrunk.delete(before.trunkId);
    if (this.#byNode.delete(node)) this.changed.send({ node });
  }
}
