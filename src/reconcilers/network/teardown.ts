import type { Logger } from '../../core/index.ts';
import { isNotFound, type Network } from '../../openstack/index.ts';
import { POD_DEVICE_OWNER } from './identity.ts';
import type { Cloud } from './types.ts';

/**
 * Deletes a namespace's network — router interface, subnets, network, in that order — once no pod ports remain on
 * it; resolves false (nothing touched) while some do. Every step tolerates "already gone", so a crash half way is
 * finished by the next call. Shared by the namespace reconciler and the garbage collector.
 */
export async function teardownNamespaceNetwork(
  cloud: Cloud,
  routerId: string | undefined,
  network: Pick<Network, 'id' | 'name'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<boolean> {
  const { neutron } = cloud;
  // One page of one port is enough to know (`list` would walk every page).
  const first = await neutron.ports
    .pages({ network_id: network.id, device_owner: POD_DEVICE_OWNER }, { fields: ['id'], limit: 1, signal })
    .next();
  if (!first.done && first.value.length > 0) return false;
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
  return true;
}
