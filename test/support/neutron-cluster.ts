/**
 * A cluster's resources in a real (or simulated) Neutron, found by Raven's names and tags: what is left, and a purge
 * that removes it whatever state a failed test left it in. Tests against long-lived clouds use one cluster id each.
 */
import { clusterTag } from '../../src/reconcilers/index.ts';
import { isNotFound, type NeutronClient } from '../../src/openstack/index.ts';

const namePrefix = (clusterId: string): string => `raven/${clusterId}/`;

/** Whether a Neutron resource is the cluster's: named `raven/<cluster>/…` or tagged `raven.cluster=<cluster>`. */
export const isMine =
  (clusterId: string) =>
  (r: { name: string; tags?: readonly string[] | undefined }): boolean =>
    r.name.startsWith(namePrefix(clusterId)) || (r.tags ?? []).includes(clusterTag(clusterId));

/** Everything in Neutron named or tagged for the cluster, described (empty: nothing left). */
export async function leftovers(neutron: NeutronClient, clusterId: string): Promise<string[]> {
  const mine = isMine(clusterId);
  const [ports, networks, subnets, routers, groups] = await Promise.all([
    neutron.ports.list({}),
    neutron.networks.list({}),
    neutron.subnets.list({}),
    neutron.routers.list({}),
    neutron.securityGroups.list({}),
  ]);
  return [
    ...ports.filter(mine).map((p) => `port ${p.name}`),
    ...networks.filter(mine).map((n) => `network ${n.name}`),
    ...subnets.filter(mine).map((s) => `subnet ${s.name}`),
    ...routers.filter(mine).map((r) => `router ${r.name}`),
    ...groups.filter(mine).map((g) => `security group ${g.name}`),
  ];
}

/**
 * Removes everything of the cluster from Neutron, whatever state a failed test left it in: ports, the router (its
 * gateway and interfaces), subnets, networks, security groups. Idempotent; used for the final tear-down and in `after`.
 */
export async function purgeCluster(neutron: NeutronClient, clusterId: string): Promise<void> {
  const mine = isMine(clusterId);
  for (const port of (await neutron.ports.list({})).filter(mine)) await neutron.ports.delete(port.id);
  for (const router of (await neutron.routers.list({})).filter(mine)) {
    if (router.external_gateway_info) await neutron.routers.clearGateway(router.id);
    for (const port of await neutron.ports.list({ device_id: router.id, device_owner: 'network:router_interface' })) {
      await neutron.routers.removeInterface(router.id, { portId: port.id }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await neutron.routers.delete(router.id);
  }
  const networks = (await neutron.networks.list({})).filter(mine);
  for (const network of networks) {
    // Anything still on the network (a port Raven made untagged and unnamed cannot exist; this is belt and braces).
    for (const port of await neutron.ports.list({ network_id: network.id })) await neutron.ports.delete(port.id);
  }
  for (const subnet of (await neutron.subnets.list({})).filter(mine)) await neutron.subnets.delete(subnet.id);
  for (const network of networks) await neutron.networks.delete(network.id);
  // Once no port carries them (Neutron refuses to delete a group in use).
  for (const group of (await neutron.securityGroups.list({})).filter(mine))
    await neutron.securityGroups.delete(group.id);
}
