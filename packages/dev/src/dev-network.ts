import type { NeutronClient } from '../../../src/openstack/index.ts';
import type { RavenConfig } from '../../../src/daemon/config/index.ts';

/** The service CIDR of the embedded API server, and so of the Services `raven dev` balances. */
export const DEV_SERVICE_CIDR = '10.96.0.0/12';

/**
 * The external network `raven dev` makes in the OpenStack simulator, so that the cluster router gets a gateway and
 * `type: LoadBalancer` Services get floating IPs. 203.0.113.0/24 is TEST-NET-3 (RFC 5737): documentation addresses
 * that route nowhere, so a simulated floating IP is never mistaken for, or sent to, a real host.
 */
export const DEV_EXTERNAL_NETWORK = {
  name: 'public',
  cidr: '203.0.113.0/24',
  gatewayIp: '203.0.113.1',
  pool: { start: '203.0.113.10', end: '203.0.113.250' },
} as const;

/**
 * Finds the simulator's `public` external network, or creates it with its subnet; returns its id. Idempotent: the
 * simulator is fresh each run, but a second call (or a user who made it first) finds the one that exists.
 */
export async function ensureDevExternalNetwork(neutron: NeutronClient, signal?: AbortSignal): Promise<string> {
  const { name, cidr, gatewayIp, pool } = DEV_EXTERNAL_NETWORK;
  const [existing] = await neutron.networks.list({ name, 'router:external': true }, { signal });
  const network =
    existing ??
    (await neutron.networks.create(
      { name, 'router:external': true, description: 'raven dev: floating IPs (TEST-NET-3, simulated)' },
      { signal },
    ));
  const subnets = await neutron.subnets.list({ network_id: network.id }, { signal });
  if (subnets.length === 0) {
    await neutron.subnets.create(
      {
        network_id: network.id,
        name: `${name}-subnet`,
        cidr,
        ip_version: 4,
        gateway_ip: gatewayIp,
        enable_dhcp: false,
        allocation_pools: [pool],
      },
      { signal },
    );
  }
  return network.id;
}

/**
 * `config` with the router's gateway and floating IPs on `networkId` — unless the configuration already names an
 * external or floating IP network (then it is left as it is), or names an existing router (its gateway is not Raven's).
 */
export function withExternalNetwork(config: RavenConfig, networkId: string): RavenConfig {
  if (config.router.externalNetworkId !== undefined || config.floatingIpNetworkId !== undefined) return config;
  return {
    ...config,
    router: config.router.id !== undefined ? config.router : { ...config.router, externalNetworkId: networkId },
    floatingIpNetworkId: networkId,
  };
}
