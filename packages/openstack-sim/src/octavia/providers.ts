import { cidrContains, parseIp, type IpCidr } from '../../../../src/core/index.ts';
import { octaviaError, type SimHttpError } from '../http.ts';

/**
 * Octavia's provider drivers as this sim knows them (docs/openstack.md, "Octavia's OVN provider"): which are enabled,
 * and what the `ovn` driver (ovn-octavia-provider 3.0.0, Zed) refuses. A driver's refusal comes last, after every
 * check of the API itself, and rolls the whole request back: nothing is created or changed.
 */
export type ProviderName = 'amphora' | 'noop_driver' | 'ovn';

/**
 * `[api_settings] enabled_provider_drivers`, descriptions with the quotes scripts/openstack's config carries (the
 * `ovn` one is the sim's own: a deployment writes what it likes there).
 */
export const providers: { name: ProviderName; description: string }[] = [
  { name: 'amphora', description: "'The Octavia Amphora driver.'" },
  { name: 'noop_driver', description: "'The No-Op driver.'" },
  { name: 'ovn', description: "'Octavia OVN driver.'" },
];

export function isProvider(name: string): name is ProviderName {
  return providers.some((p) => p.name === name);
}

/** `ProviderUnsupportedOptionError`: the driver refused an option of the request. */
export function unsupportedOption(provider: string, detail: string): SimHttpError {
  return octaviaError(501, `Provider '${provider}' does not support a requested option: ${detail}`);
}

/** `ProviderNotImplementedError`: the driver has no such operation. */
export function notImplemented(provider: string, detail: string): SimHttpError {
  return octaviaError(501, `Provider '${provider}' does not support a requested action: ${detail}`);
}

/** `ProviderDriverError`: anything else the driver raised, with its text. */
export function driverError(provider: string, detail: string): SimHttpError {
  return octaviaError(500, `Provider '${provider}' reports error: ${detail}`);
}

/** What `GET /providers/{name}/flavor_capabilities` and `.../availability_zone_capabilities` answer for the OVN driver. */
export const ovnCapabilities: Record<string, string> = {
  flavor_capabilities: 'This provider does not support getting the supported flavor metadata.',
  availability_zone_capabilities: 'This provider does not support getting the supported availability zone metadata.',
};

/** OVN load balancers are L4 only, and hash on the 5-tuple. */
const ovnProtocols = ['TCP', 'UDP', 'SCTP'];
const ovnAlgorithms = ['SOURCE_IP_PORT'];
const ovnMonitorTypes = ['UDP-CONNECT', 'TCP'];

const ovnRefusal = (detail: string) => unsupportedOption('ovn', detail);

/** The OVN driver's checks (`ovn_octavia_provider/driver.py`), each in the order the driver makes them. */
export const ovnDriver = {
  listener(protocol: string, allowedCidrs: unknown): void {
    ovnDriver.protocol(protocol);
    ovnDriver.allowedCidrs(allowedCidrs);
  },

  /** Any source range at all (`[]` and null clear, and pass). */
  allowedCidrs(value: unknown): void {
    if (Array.isArray(value) && value.length > 0)
      throw ovnRefusal('OVN provider does not support allowed_cidrs option');
  },

  protocol(protocol: string): void {
    if (!ovnProtocols.includes(protocol)) throw ovnRefusal(`OVN provider does not support ${protocol} protocol`);
  },

  algorithm(algorithm: string): void {
    if (!ovnAlgorithms.includes(algorithm)) throw ovnRefusal(`OVN provider does not support ${algorithm} algorithm`);
  },

  /** A member or batch entry with its own monitor address or port (the OVN health check probes the member itself). */
  hasMonitorOptions(attrs: { monitor_address?: unknown; monitor_port?: unknown }): boolean {
    return Boolean(attrs.monitor_address) || Boolean(attrs.monitor_port);
  },

  monitorOptions(attrs: { monitor_address?: unknown; monitor_port?: unknown }): void {
    if (ovnDriver.hasMonitorOptions(attrs))
      throw ovnRefusal('OVN Load Balancer does not support different member monitor address or port.');
  },

  /**
   * A new member: no monitor address/port, the VIP's IP family, and — without `subnet_id` — an address inside the VIP
   * subnet (the driver then takes that subnet as the member's).
   */
  member(attrs: Record<string, unknown>, vipAddress: string, vipCidr: IpCidr | undefined): void {
    ovnDriver.monitorOptions(attrs);
    if (ovnDriver.mixesFamilies(attrs.address as string, vipAddress))
      throw ovnRefusal('OVN provider does not support mixing IPv4/IPv6 configuration within the same Load Balancer.');
    if (!attrs.subnet_id && !inCidr(attrs.address as string, vipCidr))
      throw ovnRefusal(
        'Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member creation with OVN ' +
          'Provider Driver if it is not the same as LB VIP subnet',
      );
  },

  /**
   * `member_batch_update`: a member with monitor options or of the other IP family is skipped; one outside the VIP
   * subnet without `subnet_id` fails the batch at once (thrown: nothing applied). With members skipped the driver
   * still applies the rest and only then refuses: the refusal is returned, for the caller to apply what the driver
   * did before it (the members left out of the batch are deleted) and throw it.
   */
  batch(
    members: {
      id: string;
      address?: unknown;
      subnet_id?: unknown;
      monitor_address?: unknown;
      monitor_port?: unknown;
    }[],
    vipAddress: string,
    vipCidr: IpCidr | undefined,
  ): SimHttpError | undefined {
    const skipped: string[] = [];
    for (const m of members) {
      const address = m.address as string;
      if (ovnDriver.hasMonitorOptions(m) || (address && ovnDriver.mixesFamilies(address, vipAddress))) {
        skipped.push(m.id);
        continue;
      }
      if (!m.subnet_id && !inCidr(address, vipCidr))
        throw ovnRefusal(
          'Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member batch update with ' +
            'OVN Provider Driver if it is not the same as LB VIP subnet',
        );
    }
    return skipped.length > 0
      ? ovnRefusal(
          `OVN provider does not support monitor options, so following members skipped: [${skipped.map((id) => `'${id}'`).join(', ')}]`,
        )
      : undefined;
  },

  mixesFamilies(address: string, vipAddress: string): boolean {
    const a = parseIp(address);
    const v = parseIp(vipAddress);
    return Boolean(a && v && a.version !== v.version);
  },

  /**
   * A member PUT: the driver re-derives a subnet for a member stored without one and tests the PUT's address (which a
   * PUT never has) against it, which fails in netaddr — a 500 for every update of such a member.
   */
  memberUpdate(memberSubnetId: string | null, attrs: Record<string, unknown>, vipCidr: IpCidr | undefined): void {
    if (!memberSubnetId && vipCidr) throw driverError('ovn', 'failed to detect a valid IP address from Unset');
    ovnDriver.monitorOptions(attrs);
  },

  monitorType(type: string): void {
    if (!ovnMonitorTypes.includes(type))
      throw ovnRefusal(
        `OVN provider does not support ${type} health monitor type. Supported types: ${ovnMonitorTypes.join(', ')}`,
      );
  },
};

function inCidr(address: string, cidr: IpCidr | undefined): boolean {
  const ip = parseIp(address);
  return Boolean(ip && cidr && cidrContains(cidr, ip));
}
