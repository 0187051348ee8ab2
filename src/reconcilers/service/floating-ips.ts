import { RetryableError } from '../../controller/index.ts';
import { cidrContains, parseCidr, parseIp } from '../../core/index.ts';
import { OpenStackError, type FloatingIp, type NeutronClient, type Port } from '../../openstack/index.ts';
import { ownerOf, ownerTags, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';

/**
 * Floating IPs of a Service: for `type: LoadBalancer` one on the VIP port (the `loadBalancerIP` when it names one,
 * else a new one from `floatingIpNetworkId`), and one per `externalIPs` address.
 *
 * Ownership: a floating IP Raven creates carries the load balancer's name as its `description` in the create
 * request itself (so even one whose tagging was cut short by a crash is recognised), and the owner tags right after.
 * Raven deletes only those. An address a Service names is allocated for it when free; a floating IP someone else
 * allocated is associated only when it is granted to the Service — tagged `raven.grant=<namespace>/<name>` or
 * `raven.grant=<namespace>`, or in `floatingIps.adoptCidrs` / `adoptProjects` — else a Warning and nothing (any
 * namespace could otherwise take any address of the external range: CVE-2020-8554's class). A granted one is
 * disassociated, never deleted, when no longer wanted.
 */
export interface FloatingIpInput {
  neutron: NeutronClient;
  clusterId: string;
  lbName: string;
  uid: string;
  /** `namespace/name`, for messages and grants. */
  service: string;
  vipPort: Port;
  vipAddress: string;
  loadBalancerType: boolean;
  loadBalancerIP: string | undefined;
  externalIPs: readonly string[];
  networkId: string | undefined;
  /** `floatingIps` of the configuration. */
  policy: { allowExternalIPs: boolean; adoptCidrs: readonly string[]; adoptProjects: readonly string[] };
}

/** The tag that grants a floating IP someone else allocated to a Service (`<namespace>/<name>`) or a namespace. */
export const TAG_GRANT = 'raven.grant';

/** Whether a floating IP someone else allocated may be claimed by the Service `namespace/name`. */
export function granted(fip: FloatingIp, service: string, policy: FloatingIpInput['policy']): boolean {
  const namespace = service.split('/')[0];
  if (fip.tags?.some((t) => t === `${TAG_GRANT}=${service}` || t === `${TAG_GRANT}=${namespace}`)) return true;
  if (policy.adoptProjects.includes(fip.project_id)) return true;
  const ip = parseIp(fip.floating_ip_address);
  return Boolean(
    ip &&
    policy.adoptCidrs.some((c) => {
      const cidr = parseCidr(c)?.cidr;
      return cidr !== undefined && cidrContains(cidr, ip);
    }),
  );
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
  if (input.externalIPs.length > 0 && !input.policy.allowExternalIPs) {
    result.warnings.push({
      reason: 'ExternalIPsDisabled',
      message: `externalIPs of service ${input.service} are ignored: floatingIps.allowExternalIPs is off`,
    });
  }
  const requested = [
    ...new Set([
      ...(input.loadBalancerType && input.loadBalancerIP ? [input.loadBalancerIP] : []),
      ...(input.policy.allowExternalIPs ? input.externalIPs : []),
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
    let fip = ours.find((f) => f.floating_ip_address === address);
    if (!fip) {
      const [existing] = await neutron.floatingIps.list({ floating_ip_address: address }, { signal });
      if (existing && !granted(existing, input.service, input.policy)) {
        result.warnings.push({
          reason: 'FloatingIpNotGranted',
          message: `floating IP ${address} wanted by service ${input.service} was allocated by someone else (project ${existing.project_id}): Raven associates it only when it is tagged ${TAG_GRANT}=${input.service} (or ${TAG_GRANT}=<namespace>) or is in floatingIps.adoptCidrs/adoptProjects`,
        });
        continue;
      }
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
