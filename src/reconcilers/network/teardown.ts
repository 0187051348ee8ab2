import type { Logger } from '../../core/index.ts';
import { isNotFound, type Network } from '../../openstack/index.ts';
import { clusterTag, podPortMark } from './identity.ts';
import type { Cloud } from './types.ts';

/** How far a namespace network's teardown got. */
export type TeardownResult =
  | { state: 'deleted' }
  /** This cluster's ports are still on it (the pod reconciler and the garbage collector delete those). */
  | { state: 'waiting'; ports: number }
  /** A port Raven does not own holds it: Raven never deletes that, so a person must. */
  | { state: 'blocked'; port: { id: string; name: string; deviceOwner: string; deviceId: string } };

/**
 * Deletes a namespace's network — router interface, subnets, network, in that order — once nothing but Neutron's own
 * ports remain on it. While ports tagged for this cluster remain it waits; a port of anyone else (another cluster's,
 * an untagged look-alike, a VM's) blocks it, and the result names that port. Every step tolerates "already gone", so a
 * crash half way is finished by the next call. A pod port with Raven's mark in its `description` and no tags yet counts
 * as this cluster's. Shared by the namespace reconciler and the garbage collector.
 */
export async function teardownNamespaceNetwork(
  cloud: Cloud,
  clusterId: string,
  routerId: string | undefined,
  network: Pick<Network, 'id' | 'name'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<TeardownResult> {
  const { neutron } = cloud;
  const ports = await neutron.ports.list(
    { network_id: network.id },
    { fields: ['id', 'name', 'description', 'device_owner', 'device_id', 'tags'], signal },
  );
  // A port with Raven's mark and no tags yet is Raven's too: a pool refill between its bulk create and its tagging
  // (Zed tags in a second request), or a crash's leftover the next leader adopts. It is waited for, not a blocker.
  const mark = podPortMark(clusterId);
  const own = ports.filter(
    (p) => p.tags?.includes(clusterTag(clusterId)) || (!p.tags?.length && p.description === mark),
  );
  // Neutron's DHCP port goes with its subnet, and the cluster router's interface is removed below.
  const foreign = ports.find(
    (p) =>
      !own.includes(p) &&
      p.device_owner !== 'network:dhcp' &&
      !(p.device_owner === 'network:router_interface' && p.device_id === routerId),
  );
  if (foreign) {
    const { id, name, device_owner: deviceOwner, device_id: deviceId } = foreign;
    return { state: 'blocked', port: { id, name, deviceOwner, deviceId } };
  }
  if (own.length > 0) return { state: 'waiting', ports: own.length };
  const subnets = await neutron.subnets.list({ network_id: network.id }, { fields: ['id'], signal });
  for (const subnet of subnets) {
    if (routerId) {
      await neutron.routers.removeInterface(routerId, { subnetId: subnet.id }, { signal }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await neutron.subnets.delete(subnet.id, { signal });
  }
  await neutron.networks.delete(network.id, { signal });
  logger.info({ networkId: network.id, name: network.name }, 'namespace network deleted');
  return { state: 'deleted' };
}
