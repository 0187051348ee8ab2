import { RetryableError, TerminalError } from '../../controller/index.ts';
import { OpenStackError, type NeutronClient, type Port } from '../../openstack/index.ts';
import { ownerTags, subnetHolding, type SubnetInfo, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';

/**
 * The VIP port: Raven creates it itself — named `<lb name>/vip`, tagged for the Service, fixed IP = clusterIP on the
 * service subnet — and hands it to Octavia as `vip_port_id`. Octavia never deletes a port it did not create
 * (`allowed_address_pairs` driver, `deallocate_vip`), so Raven owns it and deletes it once the load balancer is gone.
 * Why not `vip_subnet_id` + `vip_address`: then Octavia creates `octavia-lb-<id>`, which real Octavia leaves behind
 * on delete (docs/openstack.md, "Octavia"), and once the load balancer is gone nothing tells which leaked port was
 * ours. A port
 * of our own is found by name after any crash, even before it is tagged, and the clusterIP is held in Neutron from
 * the first step. Not for a provider that makes its own VIP port (`ProviderTraits.makesVipPort`: the OVN provider).
 */
export const vipPortName = (lbName: string): string => `${lbName}/vip`;

/** Every VIP port of this Service name (any uid, tagged or not: a crash may fall between create and tag). */
export function listVipPorts(neutron: NeutronClient, lbName: string, signal: AbortSignal): Promise<Port[]> {
  return neutron.ports.list({ name: vipPortName(lbName) }, { signal });
}

/** Whether a port holds `address` (the clusterIP) on `subnetId`. */
export function holds(port: Pick<Port, 'fixed_ips'>, subnetId: string, address: string): boolean {
  return port.fixed_ips.some((ip) => ip.subnet_id === subnetId && ip.ip_address === address);
}

/** One VIP: a clusterIP on the service subnet of its family. */
export interface Vip {
  subnetId: string;
  address: string;
}

/**
 * A Service's VIPs on the service network: one per clusterIP (dual-stack: two), each on the service subnet of its
 * family, the primary (first clusterIP) first. A secondary clusterIP of a family the service network has no subnet
 * for is `unserved`; the primary always gets a VIP (on the primary subnet when none holds it: Neutron's refusal says
 * the configuration does not match the cluster's service CIDR).
 */
export function vipsOf(clusterIPs: readonly string[], subnet: SubnetInfo): { vips: Vip[]; unserved: string[] } {
  const [primary, ...rest] = clusterIPs;
  const vips: Vip[] = [{ subnetId: subnetHolding(subnet, primary!)?.subnetId ?? subnet.subnetId, address: primary! }];
  const unserved: string[] = [];
  for (const address of rest) {
    const holder = subnetHolding(subnet, address);
    if (holder && holder.subnetId !== vips[0]!.subnetId) vips.push({ subnetId: holder.subnetId, address });
    else unserved.push(address);
  }
  return { vips, unserved };
}

export interface VipPortSpec {
  clusterId: string;
  lbName: string;
  uid: string;
  subnet: SubnetInfo;
  /** The primary VIP's address; the port holds it and each `additional` one. */
  address: string;
  vips: readonly Vip[];
  service: string;
}

/**
 * Creates the VIP port. No `device_id`/`device_owner`: Octavia refuses a port that has a `device_id` ("already used by
 * device"), and pod-port sweeps (`compute:raven`) must never see it. A taken address is retryable (an earlier load
 * balancer may still be going); an address outside the service subnet is a configuration mismatch, terminal.
 */
export async function createVipPort(neutron: NeutronClient, spec: VipPortSpec, signal: AbortSignal): Promise<Port> {
  try {
    return await neutron.ports.create(
      {
        network_id: spec.subnet.networkId,
        name: vipPortName(spec.lbName),
        description: `Raven: VIP of service ${spec.service}`,
        fixed_ips: spec.vips.map((v) => ({ subnet_id: v.subnetId, ip_address: v.address })),
        tags: ownerTags(spec.clusterId, 'service', spec.uid),
      },
      { signal },
    );
  } catch (err) {
    if (!(err instanceof OpenStackError)) throw err;
    if (err.type === 'OverQuota')
      throw new RetryableError(
        'QuotaExceeded',
        `Neutron port quota exceeded creating the VIP port of service ${spec.service}: ${err.message}`,
        { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
      );
    if (err.type === 'IpAddressAlreadyAllocated' || err.type === 'IpAddressInUse') {
      throw new RetryableError(
        'VipAddressInUse',
        `clusterIP ${addresses(spec)} of service ${spec.service} is taken on the service subnet ${spec.subnet.cidr} by another port`,
        { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
      );
    }
    if (err.type === 'InvalidIpForNetwork' || err.type === 'InvalidIpForSubnet' || err.type === 'InvalidInput') {
      throw new TerminalError(
        `clusterIP ${addresses(spec)} of service ${spec.service} is not in Raven's service subnet ${spec.subnet.cidr}: serviceSubnet must match the cluster's service CIDR`,
        { reason: 'InvalidClusterIP', cause: err },
      );
    }
    throw err;
  }
}

/** `10.96.0.5`, or `10.96.0.5 or fd00::5` for a dual-stack VIP port (Neutron does not say which one failed). */
function addresses(spec: VipPortSpec): string {
  return spec.vips.map((v) => v.address).join(' or ');
}
