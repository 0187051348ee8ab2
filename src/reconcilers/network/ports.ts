import {
  isNotFound,
  isOpenStackError,
  type NeutronClient,
  type Port,
  type RequestPriority,
  type Trunk,
} from '../../openstack/index.ts';
import { clusterTag, POD_DEVICE_OWNER, podPortMark, podPortTags, SUBPORT_DEVICE_OWNER } from './identity.ts';

/**
 * This cluster's pod ports: `device_owner` `compute:raven` — or, for a nested pod's subport, the trunk driver's
 * `trunk:subport` — with the cluster's and the pod kind's tags, every page. The one list the pod port record, the port
 * verification and the garbage collector read.
 */
export function listPodPorts(
  neutron: NeutronClient,
  clusterId: string,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<Port[]> {
  return neutron.ports.list(
    { device_owner: [POD_DEVICE_OWNER, SUBPORT_DEVICE_OWNER], tags: podPortTags(clusterId) },
    { signal, priority },
  );
}

/**
 * Takes a port off the trunk it is a subport of (Neutron refuses to delete a subport: 409 `PortInUseAsSubPort`), found
 * by listing the trunks: for the garbage collector, which meets such a port rarely (a nested pod deleted while no Raven
 * ran). Whether it was on one.
 */
export async function detachSubport(
  neutron: NeutronClient,
  portId: string,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<boolean> {
  const trunks = await neutron.trunks.list({}, { signal, priority });
  const trunk = trunks.find((t) => t.sub_ports.some((s) => s.port_id === portId));
  if (!trunk) return false;
  await neutron.trunks.removeSubports(trunk.id, [portId], { signal, priority });
  return true;
}

/**
 * Pod ports without this cluster's tag (`compute:raven`): a crash's leftovers between a create and its tagging (those
 * carry the cluster's mark in `description`), or look-alikes that are not Raven's.
 */
export function listUntaggedPodPorts(
  neutron: NeutronClient,
  clusterId: string,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<Port[]> {
  return neutron.ports.list(
    { device_owner: POD_DEVICE_OWNER, 'not-tags-any': clusterTag(clusterId) },
    { signal, priority },
  );
}

/**
 * Tags a crash's leftover pod ports (untagged, with the cluster's mark) as the cluster's, as their create would have:
 * they are then pods' ports, pool ports or orphans like any other. Returns them as now tagged; one gone meanwhile is
 * left out.
 */
export async function adoptPodPorts(
  neutron: NeutronClient,
  clusterId: string,
  ports: readonly Port[],
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<Port[]> {
  const tags = podPortTags(clusterId);
  const mark = podPortMark(clusterId);
  const adopted: Port[] = [];
  for (const port of ports) {
    if (port.description !== mark) continue;
    try {
      await neutron.tags.replace('ports', port.id, tags, { signal, priority });
    } catch (err) {
      if (isNotFound(err)) continue;
      throw err;
    }
    adopted.push({ ...port, tags, revision_number: port.revision_number + 1 });
  }
  return adopted;
}

/**
 * Whether a port of this cluster's pod port tags is a subport a trunk let go of: ML2/OVN's trunk driver clears a
 * subport's `device_owner` when it leaves its trunk (removed, or the trunk deleted), so such a port is in no list
 * that filters by Raven's owners. A crash between a removal and the delete leaves one behind.
 */
export function isDetachedSubport(port: Pick<Port, 'device_owner'>): boolean {
  return port.device_owner === '';
}

/** How many port ids one list by id names: a trunk may carry 4094 subports, a URL not as many ids. */
const IDS_PER_LIST = 100;

/**
 * Deletes a trunk Raven made (its node is gone): first its subports that are this cluster's pod ports are taken off
 * (one remove) and those `deletable` says may go are deleted, then the trunk. Neutron would delete the trunk with its
 * subports on it, but ML2/OVN then clears their `device_owner` and nothing would delete them with the trunk. Other
 * subports (an operator's) go off with the trunk, as Neutron does. The pod ports it deleted; a trunk already gone is
 * not an error.
 */
export async function deleteTrunkAndPodSubports(
  neutron: NeutronClient,
  clusterId: string,
  trunk: Pick<Trunk, 'id' | 'sub_ports'>,
  deletable: (port: Port) => boolean,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<Port[]> {
  const ids = trunk.sub_ports.map((s) => s.port_id);
  const ours: Port[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_LIST)
    ours.push(
      ...(await neutron.ports.list(
        { id: ids.slice(i, i + IDS_PER_LIST), tags: podPortTags(clusterId) },
        { signal, priority },
      )),
    );
  if (ours.length > 0)
    try {
      await neutron.trunks.removeSubports(
        trunk.id,
        ours.map((p) => p.id),
        { signal, priority },
      );
    } catch (err) {
      // The trunk went meanwhile (its subports with it); a subport that left meanwhile fails the whole remove: retried.
      if (!isNotFound(err) || isOpenStackError(err, 'SubPortNotFound')) throw err;
    }
  const deleted: Port[] = [];
  for (const port of ours.filter(deletable))
    if (await neutron.ports.delete(port.id, { signal, priority })) deleted.push(port);
  await neutron.trunks.delete(trunk.id, { signal, priority });
  return deleted;
}
