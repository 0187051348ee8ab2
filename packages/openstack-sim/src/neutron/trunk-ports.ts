import { neutronError } from '../http.ts';
import type { Item } from './query.ts';
import type { NeutronStore, PortRecord, SubPortRecord, TrunkRecord } from './store.ts';

/** What ports need to know of trunks (trunk-details, the deletion rules), apart from the trunk API (trunks.ts). */

/** Subports in the order real Neutron lists them (by VLAN). */
export function subPorts(t: TrunkRecord): SubPortRecord[] {
  return [...t.sub_ports]
    .sort((a, b) => a.segmentation_id - b.segmentation_id)
    .map((s) => ({ port_id: s.port_id, segmentation_type: s.segmentation_type, segmentation_id: s.segmentation_id }));
}

/** The trunk whose parent this port is. */
export function trunkOfParent(store: NeutronStore, portId: string): TrunkRecord | undefined {
  for (const t of store.trunks.values()) if (t.port_id === portId) return t;
  return undefined;
}

/** The trunk this port is a subport of. */
export function trunkOfSubport(store: NeutronStore, portId: string): TrunkRecord | undefined {
  for (const t of store.trunks.values()) if (t.sub_ports.some((s) => s.port_id === portId)) return t;
  return undefined;
}

/**
 * `trunk-details` on a port that is a trunk parent. A list answer has no MACs: Zed's bulk extender looks for the key
 * `subports`, which is never there.
 */
export function trunkDetails(store: NeutronStore, portId: string, withMacs: boolean): Item | undefined {
  const t = trunkOfParent(store, portId);
  if (!t) return undefined;
  return {
    trunk_id: t.id,
    sub_ports: subPorts(t).map((s) => {
      const mac = withMacs ? store.ports.get(s.port_id)?.mac_address : undefined;
      return {
        segmentation_id: s.segmentation_id,
        segmentation_type: s.segmentation_type,
        port_id: s.port_id,
        ...(mac ? { mac_address: mac } : {}),
      };
    }),
  };
}

/** OVN: a trunk's subports take their parent's status when it changes (measured: 1.2 s after the VM's port). */
export function followParent(store: NeutronStore, parent: PortRecord): void {
  const t = trunkOfParent(store, parent.id);
  for (const s of t?.sub_ports ?? []) {
    const port = store.ports.get(s.port_id);
    if (port && port.status !== parent.status) {
      port.status = parent.status;
      store.touch(port);
    }
  }
}

/** `enforce_port_deletion_rules`: a parent or subport cannot be deleted. */
export function checkPortDeletion(store: NeutronStore, portId: string): void {
  const sub = trunkOfSubport(store, portId);
  if (sub) throw neutronError(409, 'PortInUseAsSubPort', `Port ${portId} is currently a subport for trunk ${sub.id}.`);
  const parent = trunkOfParent(store, portId);
  if (parent)
    throw neutronError(
      409,
      'PortInUseAsTrunkParent',
      `Port ${portId} is currently a parent port for trunk ${parent.id}.`,
    );
}
