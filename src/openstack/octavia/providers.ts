/**
 * What an Octavia provider driver does with the options Raven sets. Octavia passes each request to its provider,
 * which refuses what it cannot do (`501 Provider '<name>' does not support a requested option: …`) or stores and
 * ignores it. Raven reads these traits before it builds anything, so that a Service asks only for what its provider
 * does, and says so (a Warning) where an option cannot take effect. docs/translation.md, "Providers".
 */
import type { HealthMonitorType, LbAlgorithm } from './types.ts';

export interface ProviderTraits {
  /** The provider's name as Octavia knows it; undefined: the cloud's default provider (assumed amphora-like). */
  name: string | undefined;
  /** The pool algorithms it takes; the first is what a Service gets unless it names one. */
  algorithms: readonly LbAlgorithm[];
  /** Listener `allowed_cidrs` (the VIP ACL). */
  allowedCidrs: boolean;
  /** Pool protocols PROXY and PROXYV2. */
  proxyProtocol: boolean;
  /** HTTP listeners (Raven's `x-forwarded-for`). */
  http: boolean;
  /** Listener connection limits and timeouts take effect (the OVN provider stores and ignores them). */
  listenerLimits: boolean;
  /** Pool `session_persistence` takes effect (`sessionAffinity: ClientIP`). */
  sessionPersistence: boolean;
  /** Health monitor types it takes. */
  monitorTypes: readonly HealthMonitorType[];
  /**
   * The client's own address reaches the member (no proxy in between): the members' security groups decide who
   * reaches them through the VIP, so a listener needs no `allowed_cidrs` to carry NetworkPolicy.
   */
  keepsClientAddress: boolean;
  /** Members need `subnet_id` when they are not on the VIP's subnet (the OVN provider refuses them without). */
  memberSubnetRequired: boolean;
  /**
   * The provider makes the VIP port itself and cannot take one: ovn-octavia-provider 3.0.0 ignores `vip_port_id` and
   * creates `ovn-lb-vip-<id>` with the port's address, which Neutron refuses as already allocated (a 500). The load
   * balancer is then created with `vip_subnet_id` and `vip_address`, and the provider deletes its port with it.
   */
  makesVipPort: boolean;
  /** `additional_vips` (a dual-stack VIP). */
  additionalVips: boolean;
}

/** What Octavia's API itself takes: the answer for a provider Raven does not know (its 501 then says what it lacks). */
const ANY: Omit<ProviderTraits, 'name'> = {
  algorithms: ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'],
  allowedCidrs: true,
  proxyProtocol: true,
  http: true,
  listenerLimits: true,
  sessionPersistence: true,
  monitorTypes: ['HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'],
  keepsClientAddress: false,
  memberSubnetRequired: false,
  makesVipPort: false,
  additionalVips: true,
};

/** The amphora: all of it but SOURCE_IP_PORT (a 501). */
const AMPHORA: Omit<ProviderTraits, 'name'> = {
  ...ANY,
  algorithms: ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP'],
};

/**
 * ovn-octavia-provider (Zed, 3.0.0; unchanged in what Raven uses since): TCP, UDP and SCTP listeners and pools, one
 * algorithm (SOURCE_IP_PORT), no `allowed_cidrs`, TCP and UDP-CONNECT monitors only; OVN load-balances in the
 * client's own logical switch or router, so the member sees the client's address.
 */
const OVN: Omit<ProviderTraits, 'name'> = {
  algorithms: ['SOURCE_IP_PORT'],
  allowedCidrs: false,
  proxyProtocol: false,
  http: false,
  listenerLimits: false,
  sessionPersistence: false,
  monitorTypes: ['TCP', 'UDP-CONNECT'],
  keepsClientAddress: true,
  memberSubnetRequired: true,
  makesVipPort: true,
  additionalVips: false,
};

/**
 * The traits of a provider by name: `ovn` and `amphora` (and `octavia`, its old alias) as above; the cloud's default
 * (undefined) and any other provider: whatever Octavia's API takes, the provider's own refusal being the answer.
 */
export function providerTraits(name: string | undefined): ProviderTraits {
  const traits = name === 'ovn' ? OVN : name === 'amphora' || name === 'octavia' ? AMPHORA : ANY;
  return { name, ...traits };
}
