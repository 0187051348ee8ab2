import type { Port, Trunk } from '../../openstack/index.ts';
import { POD_DEVICE_OWNER } from '../network/index.ts';

/** Why a VM node has no trunk Raven can use: the stable reason of the Warning Event on the Node. */
export type NestedRefusal =
  | 'NestedProviderIdInvalid'
  | 'NestedNoPort'
  | 'NestedParentAmbiguous'
  | 'NestedTrunkMissing'
  | 'NestedTrunkDisabled'
  | 'NestedTrunkRefused';

export type ServerPort = Pick<Port, 'id' | 'network_id' | 'device_owner' | 'mac_address'>;
export type NodeTrunk = Pick<
  Trunk,
  'id' | 'port_id' | 'name' | 'description' | 'tags' | 'admin_state_up' | 'sub_ports'
>;

export interface TrunkInputs {
  /** `auto`: a missing trunk is made; `existing`: it must be there. */
  mode: 'auto' | 'existing';
  /** Networks the parent must be on when the VM has several ports (empty: it must have one). */
  parentNetworks: readonly string[];
  serverId: string;
  /** Neutron's ports whose `device_id` is the server's id. */
  serverPorts: readonly ServerPort[];
  /** The trunks whose parent is one of those ports. */
  trunks: readonly NodeTrunk[];
}

export type TrunkDecision =
  | { action: 'use'; parent: ServerPort; trunk: NodeTrunk }
  | { action: 'create'; parent: ServerPort }
  | { action: 'refuse'; reason: NestedRefusal; message: string };

/**
 * Which of a VM's ports is its trunk's parent, and whether its trunk is there to use or to make — or why there is none.
 * Pure: the reconciler lists, this decides, the reconciler acts.
 *
 * The parent is the VM's one Nova port (`device_owner` `compute:*`); with several, the one on a configured parent
 * network, else the one that is a trunk's parent already; otherwise the choice is refused, never guessed.
 */
export function decideTrunk(i: TrunkInputs): TrunkDecision {
  const nova = i.serverPorts.filter(
    (p) => p.device_owner.startsWith('compute:') && p.device_owner !== POD_DEVICE_OWNER,
  );
  const onNetworks = i.parentNetworks.length > 0 ? nova.filter((p) => i.parentNetworks.includes(p.network_id)) : nova;
  if (onNetworks.length === 0) {
    const where =
      i.parentNetworks.length > 0 ? ` on network(s) ${i.parentNetworks.join(', ')} (nested.parentNetworks)` : '';
    return refuse(
      'NestedNoPort',
      `server ${i.serverId} has no Nova port${where}: no trunk parent for its pods' subports`,
    );
  }
  const trunkOf = (p: ServerPort) => i.trunks.find((t) => t.port_id === p.id);
  let parent = onNetworks.length === 1 ? onNetworks[0] : undefined;
  if (!parent) {
    const trunked = onNetworks.filter(trunkOf);
    if (trunked.length === 1) parent = trunked[0];
  }
  if (!parent) {
    const ids = onNetworks.map((p) => `${p.id} (network ${p.network_id})`).join(', ');
    return refuse(
      'NestedParentAmbiguous',
      `server ${i.serverId} has ${onNetworks.length} ports (${ids}) and none is the one: set nested.parentNetworks to the network of the port its pods' VLANs ride on`,
    );
  }
  const trunk = trunkOf(parent);
  if (trunk) {
    if (!trunk.admin_state_up)
      return refuse(
        'NestedTrunkDisabled',
        `trunk ${trunk.id} on port ${parent.id} is disabled: Neutron adds no subports to it`,
      );
    return { action: 'use', parent, trunk };
  }
  if (i.mode === 'existing')
    return refuse(
      'NestedTrunkMissing',
      `port ${parent.id} of server ${i.serverId} is no trunk's parent, and nested.mode is existing: create a trunk on it`,
    );
  return { action: 'create', parent };
}

function refuse(reason: NestedRefusal, message: string): TrunkDecision {
  return { action: 'refuse', reason, message };
}
