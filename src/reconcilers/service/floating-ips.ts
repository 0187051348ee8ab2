import { RetryableError } from '../../controller/index.ts';
import { OpenStackError, type FloatingIp, type NeutronClient, type Port } from '../../openstack/index.ts';
import { ownerOf, ownerTags, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';

/**
 * Floating IPs of a Service: for `type: LoadBalancer` one on the VIP port (the `loadBalancerIP` when it names one,
 * else a new one from `floatingIpNetworkId`), and one per `externalIPs` address.
 *
 * Ownership: a floating IP Raven creates carries the load balancer's name as its `description` in the create
 * request itself (so even one whose tagging was cut short by a crash is recognised), and the owner tags right after.
 * Raven deletes only those; a floating IP the user allocated (named by `loadBalancerIP` or an external IP) is
 * associated and, when no longer wanted, disassociated — never deleted.
 */
export interface FloatingIpInput {
  neutron: NeutronClient;
  clusterId: string;
  lbName: string;
  uid: string;
  /** `namespace/name`, for messages. */
  service: string;
  vipPort: Port;
  vipAddress: string;
  loadBalancerType: boolean;
  loadBalancerIP: string | undefined;
  externalIPs: readonly string[];
  networkId: string | undefined;
}

export interface FloatingIpResult {
  /** `status.loadBalancer.ingress` addresses. */
  ingress: string[];
  /** Problems the user must see (Warning Events), none fatal to the rest. */
  warnings: { reason: string; message: string }[];
  /** Whether anything was created, associated, tagged or deleted. */
  changed: boolean;
}

/** Floating IPs Raven created for this Service name (any uid; stale ones are torn down before this runs). */
export function listOwnFloatingIps(neutron: NeutronClient, lbName: string, signal: AbortSignal): Promise<FloatingIp[]> {
  return neutron.floatingIps.list({ description: lbName }, { signal });
}

/** Converges the Service's floating IPs; `ours` are the ones Raven created for this uid (or untagged). */
export async function ensureFloatingIps(
  input: FloatingIpInput,
  ours: readonly FloatingIp[],
  signal: AbortSignal,
): Promise<FloatingIpResult> {
  const { neutron, vipPort } = input;
  const tags = ownerTags(input.clusterId, 'service', input.uid);
  const result: FloatingIpResult = { ingress: [], warnings: [], changed: false };
  const attached = await neutron.floatingIps.list({ port_id: vipPort.id }, { signal });
  const keep = new Set<string>();
  const requested = [
    ...new Set([
      ...(input.loadBalancerType && input.loadBalancerIP ? [input.loadBalancerIP] : []),
      ...input.externalIPs,
    ]),
  ];

  const adopt = async (fip: FloatingIp): Promise<void> => {
    keep.add(fip.id);
    if (fip.port_id !== vipPort.id) {
      await neutron.floatingIps.associate(fip.id, vipPort.id, undefined, { signal });
      result.changed = true;
    }
    if (ours.some((f) => f.id === fip.id) && !ownerOf(fip.tags)) {
      await neutron.tags.replace('floatingips', fip.id, tags, { signal });
      result.changed = true;
    }
  };
  const create = async (address: string | undefined): Promise<FloatingIp | undefined> => {
    if (!input.networkId) {
      result.warnings.push({
        reason: 'NoFloatingIpNetwork',
        message: `no floatingIpNetworkId is configured: service ${input.service} gets no floating IP${address ? ` for ${address}` : ''}`,
      });
      return undefined;
    }
    let fip: FloatingIp;
    try {
      fip = await neutron.floatingIps.create(
        {
          floating_network_id: input.networkId,
          port_id: vipPort.id,
          description: input.lbName,
          ...(address ? { floating_ip_address: address } : {}),
        },
        { signal },
      );
    } catch (err) {
      if (!(err instanceof OpenStackError)) throw err;
      if (err.type === 'OverQuota')
        throw new RetryableError(
          'QuotaExceeded',
          `floating IP quota exceeded for service ${input.service}: ${err.message}`,
          { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
        );
      if (err.type === 'ExternalGatewayForFloatingIPNotFound') {
        throw new RetryableError(
          'FloatingIpUnreachable',
          `the service subnet has no router to the floating IP network ${input.networkId}: ${err.message}`,
          { cause: err },
        );
      }
      if (address && (err.status === 400 || err.status === 409)) {
        result.warnings.push({
          reason: 'FloatingIpUnavailable',
          message: `floating IP ${address} for service ${input.service} cannot be allocated: ${err.message}`,
        });
        return undefined;
      }
      throw err;
    }
    await neutron.tags.replace('floatingips', fip.id, tags, { signal });
    keep.add(fip.id);
    result.changed = true;
    return fip;
  };

  let lbAddress: string | undefined;
  for (const address of requested) {
    let fip =
      ours.find((f) => f.floating_ip_address === address) ?? attached.find((f) => f.floating_ip_address === address);
    if (!fip) {
      const [existing] = await neutron.floatingIps.list({ floating_ip_address: address }, { signal });
      if (existing?.port_id && existing.port_id !== vipPort.id) {
        result.warnings.push({
          reason: 'FloatingIpInUse',
          message: `floating IP ${address} wanted by service ${input.service} is associated with port ${existing.port_id}`,
        });
        continue;
      }
      fip = existing;
    }
    if (fip) await adopt(fip);
    else fip = await create(address);
    if (fip && address === input.loadBalancerIP && input.loadBalancerType) lbAddress = address;
  }
  if (input.loadBalancerType && !input.loadBalancerIP) {
    const own = ours.find((f) => !keep.has(f.id) && !requested.includes(f.floating_ip_address));
    if (own) await adopt(own);
    // Without a floating IP network the VIP itself is the load balancer's address (reachable inside the cloud).
    lbAddress = own
      ? own.floating_ip_address
      : input.networkId
        ? (await create(undefined))?.floating_ip_address
        : input.vipAddress;
  }

  for (const fip of ours) {
    if (keep.has(fip.id)) continue;
    await neutron.floatingIps.delete(fip.id, { signal });
    result.changed = true;
  }
  for (const fip of attached) {
    if (keep.has(fip.id) || ours.some((f) => f.id === fip.id)) continue;
    await neutron.floatingIps.disassociate(fip.id, { signal });
    result.changed = true;
  }
  result.ingress = input.loadBalancerType && lbAddress ? [lbAddress] : [];
  return result;
}
