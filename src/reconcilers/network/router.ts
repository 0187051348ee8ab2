import { cidrLast, formatIp, parseCidr, RavenError } from '../../core/index.ts';
import type { Network, NeutronClient, Subnet } from '../../openstack/index.ts';
import type { SubnetInfo } from './types.ts';

type SubnetFields = Pick<Subnet, 'id' | 'network_id' | 'cidr' | 'gateway_ip'>;

/** Subnet + network as a {@link SubnetInfo}; with `secondary`, the network's subnet of the other family. */
export function subnetInfo(subnet: SubnetFields, network: Pick<Network, 'mtu'>, secondary?: SubnetFields): SubnetInfo {
  return {
    networkId: subnet.network_id,
    subnetId: subnet.id,
    cidr: subnet.cidr,
    gatewayIp: subnet.gateway_ip,
    mtu: network.mtu,
    ...(secondary
      ? { secondary: { subnetId: secondary.id, cidr: secondary.cidr, gatewayIp: secondary.gateway_ip } }
      : {}),
  };
}

/**
 * Ensures `subnetId` is one of the router's interfaces (idempotent: an existing interface is found by the router's
 * ports on that subnet; a concurrent attach's "already has a port" is success).
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

/**
 * The last usable address of a CIDR: before the broadcast address for IPv4 (`10.96.0.0/12` → `10.111.255.254`), the
 * last one for IPv6, which has none (`fd00:96::/112` → `fd00:96::ffff`).
 * @throws RavenError `CIDR_INVALID` when `cidr` is not a CIDR (the configuration check keeps that out).
 */
export function lastHost(cidr: string): string {
  const parsed = parseCidr(cidr)?.cidr;
  if (!parsed) throw new RavenError('CIDR_INVALID', `${JSON.stringify(cidr)} is not a CIDR`);
  return formatIp(parsed.version, cidrLast(parsed) - (parsed.version === 4 ? 1n : 0n));
}
