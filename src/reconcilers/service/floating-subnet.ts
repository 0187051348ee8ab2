import { globMatch } from '../../core/index.ts';
import type { NeutronClient } from '../../openstack/index.ts';

/**
 * OCCM's `floating-subnet-id`, `floating-subnet` (a name; `*` and `?` match as in a glob) and `floating-subnet-tags`
 * (any of the comma-separated tags): the subnet of the floating network a Service's floating IP comes from. Only
 * subnets of that network count — the network is one the Service may use (`floatingIps.networks`) — so a Service
 * cannot reach into any other network by naming one of its subnets. Nothing found: no subnet and a Warning, and no
 * floating IP is allocated (rather than one from a subnet the user did not ask for). The name is matched by
 * {@link globMatch}, never a RegExp: a namespace user writes it, and a backtracking pattern froze the controller.
 */
export async function resolveFloatingSubnet(
  neutron: NeutronClient,
  networkId: string,
  spec: { id?: string; name?: string; tags?: readonly string[] },
  service: string,
  signal: AbortSignal,
): Promise<{ subnetId: string | undefined; warnings: { reason: string; message: string }[] }> {
  const subnets = await neutron.subnets.list({ network_id: networkId }, { signal });
  const match = subnets.find(
    (s) =>
      (!spec.id || s.id === spec.id) &&
      (!spec.name || globMatch(spec.name, s.name ?? '')) &&
      (!spec.tags || spec.tags.some((t) => s.tags?.includes(t))),
  );
  if (match) return { subnetId: match.id, warnings: [] };
  const wanted = [
    spec.id && `id ${spec.id}`,
    spec.name && `name ${spec.name}`,
    spec.tags && `tags ${spec.tags.join(',')}`,
  ]
    .filter(Boolean)
    .join(', ');
  return {
    subnetId: undefined,
    warnings: [
      {
        reason: 'FloatingSubnetNotFound',
        message: `service ${service} asks for a floating subnet (${wanted}) that floating network ${networkId} does not have: no floating IP is allocated`,
      },
    ],
  };
}
