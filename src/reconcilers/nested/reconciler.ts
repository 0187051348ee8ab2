import type { DeepReadonly, Logger } from '../../core/index.ts';
import { RetryableError, TerminalError, type EventRecorder, type ReconcileResult } from '../../controller/index.ts';
import { objectReference } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { OpenStackError, type Trunk } from '../../openstack/index.ts';
import {
  clusterTag,
  deleteTrunkAndPodSubports,
  isOwned,
  ownerTags,
  resourceName,
  untagged,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
} from '../network/index.ts';
import type { CachedNode } from '../pod/index.ts';
import type { NestedNodes } from './nodes.ts';
import type { TrunkSubports } from './subports.ts';
import { providerIdentity } from './provider-id.ts';
import { decideTrunk, type NestedRefusal, type NodeTrunk, type ServerPort } from './trunk-decision.ts';

export interface NodeTrunkReconcilerOptions {
  cloud: Cloud;
  clusterId: string;
  mode: 'auto' | 'existing';
  parentNetworks: readonly string[];
  nodes: Lister<CachedNode>;
  record: NestedNodes;
  /** The trunks' subports: each trunk read here refreshes it. */
  subports: TrunkSubports;
  /** Whether a pod of this uid exists: a gone node's trunk takes its subports along, deleting those of gone pods. */
  podExists: (uid: string) => boolean;
  recorder?: EventRecorder | undefined;
  logger: Logger;
}

/** The `description` of the trunks Raven makes, set in the create itself: it marks one whose tagging a crash cut short. */
export function trunkMark(clusterId: string): string {
  return `raven trunk of cluster ${clusterId}`;
}

/**
 * Node → its trunk, when the node is a Nova VM (docs/nested.md). Keyed by node name, level-triggered: the Node's
 * `providerID` names the server; Neutron's ports of that server (`device_id`) and their trunks decide
 * ({@link decideTrunk}); the outcome is written to {@link NestedNodes}.
 *
 * - A trunk on the parent is used whoever made it; with `nested.mode: auto` a missing one is made
 *   (`raven/<cluster>/<node>`, owner tags `raven.kind=node`, `raven.uid=<node uid>`), found again by its parent after
 *   a crash (Neutron allows one trunk per parent), and adopted when its tags were lost (its name and description).
 * - What stops a VM node from having a trunk is a Warning Event on the Node, with a stable reason
 *   ({@link NestedRefusal}), retried at most every 30 s (an operator's fix announces itself to no one). A malformed
 *   `providerID` is terminal until the Node changes.
 * - A Node that is gone: the trunks Raven made for it are deleted, as the garbage collector deletes one whose Node
 *   went while no Raven ran: first Raven's pod subports are taken off, and those whose pod is gone deleted.
 */
export class NodeTrunkReconciler {
  readonly #o: NodeTrunkReconcilerOptions;

  constructor(options: NodeTrunkReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const node = this.#o.nodes.get(key);
    if (!node) {
      this.#o.record.delete(key);
      return this.#deleteMade(key, signal);
    }
    const identity = providerIdentity(node.spec?.providerID);
    if (identity.kind === 'other') return this.#o.record.delete(key);
    if (identity.kind === 'invalid') {
      this.#o.record.delete(key);
      throw new TerminalError(`spec.providerID is not a Nova server's: ${identity.reason}`, {
        reason: 'NestedProviderIdInvalid' satisfies NestedRefusal,
      });
    }
    const { serverId } = identity;
    const { neutron } = this.#o.cloud;
    const serverPorts: ServerPort[] = await neutron.ports.list(
      { device_id: serverId },
      { signal, fields: ['id', 'network_id', 'device_owner', 'mac_address'] },
    );
    const mark = this.#o.subports.mark();
    const trunks =
      serverPorts.length > 0 ? await neutron.trunks.list({ port_id: serverPorts.map((p) => p.id) }, { signal }) : [];
    const decision = decideTrunk({
      mode: this.#o.mode,
      parentNetworks: this.#o.parentNetworks,
      serverId,
      serverPorts,
      trunks,
    });
    if (decision.action === 'refuse') {
      this.#o.record.delete(key);
      throw new RetryableError(decision.reason, decision.message, { maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS });
    }
    const { parent } = decision;
    let trunk: NodeTrunk = decision.action === 'use' ? decision.trunk : await this.#create(node, parent.id, signal);
    this.#o.subports.observed(trunk.id, trunk.sub_ports, mark);
    const made = isOwned(trunk.tags, this.#o.clusterId, 'node') || this.#lostTags(trunk, key);
    if (made && untagged(trunk.tags)) {
      const tags = ownerTags(this.#o.clusterId, 'node', node.metadata.uid ?? '');
      await neutron.tags.replace('trunks', trunk.id, tags, { signal });
      trunk = { ...trunk, tags };
    }
    this.#o.record.set({
      node: key,
      serverId,
      trunkId: trunk.id,
      parentPortId: parent.id,
      parentMac: parent.mac_address,
      made,
    });
  };

  /** A trunk Raven made whose tagging a crash cut short: untagged, with Raven's name for this node and its mark. */
  #lostTags(trunk: NodeTrunk, node: string): boolean {
    return (
      untagged(trunk.tags) &&
      trunk.name === resourceName(this.#o.clusterId, node) &&
      trunk.description === trunkMark(this.#o.clusterId)
    );
  }

  async #create(node: DeepReadonly<CachedNode>, parentId: string, signal: AbortSignal): Promise<Trunk> {
    const name = node.metadata.name ?? '';
    try {
      const trunk = await this.#o.cloud.neutron.trunks.create(
        { port_id: parentId, name: resourceName(this.#o.clusterId, name), description: trunkMark(this.#o.clusterId) },
        { signal },
      );
      this.#o.logger.info({ node: name, trunkId: trunk.id, portId: parentId }, 'trunk created');
      this.#event(
        node,
        'TrunkCreated',
        `Neutron trunk ${trunk.id} on the VM's port ${parentId}: its pods get subports`,
      );
      return trunk;
    } catch (err) {
      // The driver refuses (the OVS agent's with a bound parent), the service has no trunk plugin, or policy forbids.
      if (err instanceof OpenStackError && [403, 404, 409].includes(err.status))
        throw new RetryableError(
          'NestedTrunkRefused' satisfies NestedRefusal,
          `Neutron refused a trunk on the VM's port ${parentId} (${err.type ?? err.status}: ${err.message}): create one on it, or set nested.mode to off`,
          { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
        );
      throw err;
    }
  }

  /** The trunks Raven made for a node that is gone (found by their name and this cluster's tag), with their pod ports. */
  async #deleteMade(node: string, signal: AbortSignal): Promise<void> {
    const { neutron } = this.#o.cloud;
    const { clusterId } = this.#o;
    const trunks = await neutron.trunks.list(
      { name: resourceName(clusterId, node), tags: [clusterTag(clusterId)] },
      { signal },
    );
    for (const trunk of trunks.filter((t) => isOwned(t.tags, clusterId, 'node'))) {
      this.#o.subports.forget(trunk.id);
      const gonePod = (p: { device_id: string }) => !(p.device_id && this.#o.podExists(p.device_id));
      const ports = await deleteTrunkAndPodSubports(neutron, clusterId, trunk, gonePod, signal);
      this.#o.logger.info({ node, trunkId: trunk.id, podPorts: ports.length }, 'trunk of a gone node deleted');
    }
  }

  #event(node: DeepReadonly<CachedNode>, reason: string, message: string): void {
    this.#o.recorder?.record(objectReference(node, { kind: 'Node', apiVersion: 'v1' }), 'Normal', reason, message);
  }
}
