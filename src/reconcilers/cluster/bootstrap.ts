import { cidrLast, formatIp, parseCidr, RavenError, type Logger } from '../../core/index.ts';
import { isNotFound, type NeutronClient, type Network, type Subnet } from '../../openstack/index.ts';
import { ownerTags, resourceName, TAG_CLUSTER, TAG_KIND } from '../common/identity.ts';
import type { ClusterNetwork, Cloud, ReconcilerConfig, SubnetInfo } from '../common/types.ts';

export interface BootstrapOptions {
  signal?: AbortSignal | undefined;
  logger: Logger;
}

/** Subnet + network as a {@link SubnetInfo}. */
export function subnetInfo(
  subnet: Pick<Subnet, 'id' | 'network_id' | 'cidr' | 'gateway_ip'>,
  network: Pick<Network, 'mtu'>,
): SubnetInfo {
  return {
    networkId: subnet.network_id,
    subnetId: subnet.id,
    cidr: subnet.cidr,
    gatewayIp: subnet.gateway_ip,
    mtu: network.mtu,
  };
}

/** The cluster's own resource of a kind, by its tags (cluster + kind=cluster) and name. */
function clusterTags(config: ReconcilerConfig): string[] {
  return ownerTags(config.clusterId, 'cluster', config.clusterId);
}

/**
 * Ensures the router exists and `subnetId` is one of its interfaces (idempotent: an existing interface is found by
 * the router's ports on that subnet; a concurrent attach's "already has a port" is success).
 */
export async function ensureRouterInterface(
  neutron: NeutronClient,
  routerId: string,
  subnetId: string,
  signal?: AbortSignal,
): Promise<void> {
  const ports = await neutron.ports.list(
    { device_id: routerId, device_owner: 'network:router_interface', fixed_ips: { subnet_id: subnetId } },
    { fields: ['id'], signal },
  );
  if (ports.length > 0) return;
  try {
    await neutron.routers.addInterface(routerId, { subnetId }, { signal });
  } catch (err) {
    if (!(err instanceof Error && /already has a port on subnet/.test(err.message))) throw err;
  }
}

/** A network + subnet Raven owns for the cluster (`raven/<cluster>/<role>`), found by name and tags, created when missing. */
async function ensureOwnSubnet(
  cloud: Cloud,
  config: ReconcilerConfig,
  role: 'pods' | 'services',
  cidr: string,
  signal?: AbortSignal,
): Promise<SubnetInfo> {
  const { neutron } = cloud;
  const name = resourceName(config.clusterId, role);
  const tags = clusterTags(config);
  let [network] = await neutron.networks.list({ name, tags: [`${TAG_CLUSTER}=${config.clusterId}`] }, { signal });
  if (!network) {
    network = await neutron.networks.create(
      { name, description: `Raven ${role} network of cluster ${config.clusterId}` },
      { signal },
    );
    await neutron.tags.replace('networks', network.id, tags, { signal });
  }
  let [subnet] = await neutron.subnets.list({ network_id: network.id, cidr }, { signal });
  if (!subnet) {
    // The service subnet's gateway goes to the last address, not the first: Kubernetes gives the first one to the
    // `kubernetes` Service, and every clusterIP must stay free for an Octavia VIP.
    const gateway = role === 'services' ? { gateway_ip: lastHost(cidr) } : {};
    subnet = await neutron.subnets.create(
      { network_id: network.id, ip_version: 4, cidr, name, ...gateway },
      { signal },
    );
    await neutron.tags.replace('subnets', subnet.id, tags, { signal });
  }
  return subnetInfo(subnet, network);
}

/**
 * The last usable address of an IPv4 CIDR (`10.96.0.0/12` → `10.111.255.254`).
 * @throws RavenError `CIDR_INVALID` when `cidr` is not an IPv4 CIDR (the configuration check keeps that out).
 */
export function lastHost(cidr: string): string {
  const parsed = parseCidr(cidr)?.cidr;
  if (parsed?.version !== 4) throw new RavenError('CIDR_INVALID', `${JSON.stringify(cidr)} is not an IPv4 CIDR`);
  return formatIp(4, cidrLast(parsed) - 1n);
}

/** A configured existing subnet (and its network's MTU); a missing one is a configuration error. */
async function existingSubnet(
  neutron: NeutronClient,
  subnetId: string,
  what: string,
  signal?: AbortSignal,
): Promise<SubnetInfo> {
  try {
    const subnet = await neutron.subnets.get(subnetId, { signal });
    const network = await neutron.networks.get(subnet.network_id, { signal });
    return subnetInfo(subnet, network);
  } catch (err) {
    if (isNotFound(err))
      throw new RavenError('CONFIG_INVALID', `${what} ${subnetId} does not exist in Neutron`, { cause: err });
    throw err;
  }
}

/**
 * Makes the cluster-level network exist, idempotently (run at start by the leader, and safe to run again): the
 * router (a configured one, or `raven/<cluster>/router` with the external gateway), the shared pod subnet with the
 * `shared` strategy, and the service subnet — both attached to the router.
 */
export async function ensureClusterNetwork(
  cloud: Cloud,
  config: ReconcilerConfig,
  options: BootstrapOptions,
): Promise<ClusterNetwork> {
  const { neutron } = cloud;
  const { signal, logger } = options;
  let routerId = config.router.id;
  if (routerId) {
    try {
      await neutron.routers.get(routerId, { fields: ['id'], signal });
    } catch (err) {
      if (isNotFound(err))
        throw new RavenError('CONFIG_INVALID', `router.id ${routerId} does not exist in Neutron`, { cause: err });
      throw err;
    }
  } else {
    const name = resourceName(config.clusterId, 'router');
    let [router] = await neutron.routers.list(
      { name, tags: [`${TAG_CLUSTER}=${config.clusterId}`, `${TAG_KIND}=cluster`] },
      { fields: ['id'], signal },
    );
    if (!router) {
      const created = await neutron.routers.create(
        {
          name,
          ...(config.router.externalNetworkId
            ? { external_gateway_info: { network_id: config.router.externalNetworkId } }
            : {}),
        },
        { signal },
      );
      await neutron.tags.replace('routers', created.id, clusterTags(config), { signal });
      router = created;
      logger.info({ routerId: created.id }, 'created the cluster router');
    }
    routerId = router.id;
  }

  let podSubnet: SubnetInfo | undefined;
  if (config.subnets.strategy === 'shared') {
    const { subnetId, cidr } = config.subnets.shared;
    podSubnet = subnetId
      ? await existingSubnet(neutron, subnetId, 'subnets.shared.subnetId', signal)
      : await ensureOwnSubnet(cloud, config, 'pods', cidr!, signal);
    await ensureRouterInterface(neutron, routerId, podSubnet.subnetId, signal);
  }
  let serviceSubnet: SubnetInfo | undefined;
  const svc = config.serviceSubnet;
  if (svc.subnetId || svc.cidr) {
    serviceSubnet = svc.subnetId
      ? await existingSubnet(neutron, svc.subnetId, 'serviceSubnet.subnetId', signal)
      : await ensureOwnSubnet(cloud, config, 'services', svc.cidr!, signal);
    if (serviceSubnet.subnetId !== podSubnet?.subnetId)
      await ensureRouterInterface(neutron, routerId, serviceSubnet.subnetId, signal);
  }
  logger.info({ routerId, podSubnet: podSubnet?.cidr, serviceSubnet: serviceSubnet?.cidr }, 'cluster network ready');
  return { routerId, podSubnet, serviceSubnet };
}
