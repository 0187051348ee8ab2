import type { Logger } from '../../core/index.ts';
import { isNotFound } from '../../openstack/index.ts';
import { clusterTag, TAG_KIND, teardownNamespaceNetwork, type Cloud } from '../network/index.ts';

/** A cluster-level resource (`raven.kind=cluster`): `router` or `network`. */
export interface ClusterResource {
  type: 'router' | 'network';
  id: string;
  name: string;
}

/** The cluster-level resources Raven created for `clusterId` (its router, its pod and service networks), by tag. */
export async function clusterResources(
  cloud: Cloud,
  clusterId: string,
  signal?: AbortSignal,
): Promise<ClusterResource[]> {
  const tags = [clusterTag(clusterId), `${TAG_KIND}=cluster`];
  const networks = await cloud.neutron.networks.list({ tags }, { fields: ['id', 'name'], signal });
  const routers = await cloud.neutron.routers.list({ tags }, { fields: ['id', 'name'], signal });
  return [
    ...networks.map((n) => ({ type: 'network' as const, id: n.id, name: n.name })),
    ...routers.map((r) => ({ type: 'router' as const, id: r.id, name: r.name })),
  ];
}

/**
 * Deletes the cluster-level resources Raven created for `clusterId` — the pod and service networks (with their
 * router interfaces and subnets), then its router (gateway cleared, any interface left removed) — once everything
 * the garbage collector sweeps is gone. A configured router (`router.id`) carries no tag and is never touched. A
 * network that still has ports is left (false; a port Raven does not own is logged, as it blocks the teardown until
 * someone deletes it); run again once they are gone. Every step tolerates "already gone".
 */
export async function teardownClusterNetwork(
  cloud: Cloud,
  clusterId: string,
  routerId: string | undefined,
  logger: Logger,
  signal?: AbortSignal,
): Promise<boolean> {
  const { neutron } = cloud;
  const resources = await clusterResources(cloud, clusterId, signal);
  let complete = true;
  for (const network of resources.filter((r) => r.type === 'network')) {
    const result = await teardownNamespaceNetwork(cloud, clusterId, routerId, network, logger, signal);
    if (result.state === 'blocked')
      logger.warn(
        { network: network.name, blockingPort: result.port },
        'a port Raven does not own blocks the teardown',
      );
    if (result.state !== 'deleted') complete = false;
  }
  if (!complete) return false;
  for (const router of resources.filter((r) => r.type === 'router')) {
    await neutron.routers.clearGateway(router.id, { signal }).catch(ignoreNotFound);
    const interfaces = await neutron.ports.list(
      { device_id: router.id, device_owner: 'network:router_interface' },
      { fields: ['id'], signal },
    );
    for (const port of interfaces)
      await neutron.routers.removeInterface(router.id, { portId: port.id }, { signal }).catch(ignoreNotFound);
    await neutron.routers.delete(router.id, { signal });
    logger.info({ routerId: router.id, name: router.name }, 'cluster router deleted');
  }
  return true;
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}
