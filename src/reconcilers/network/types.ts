import type { DeepReadonly, IpCidr } from '../../core/index.ts';
import type { RavenSettings } from '../../core/settings.ts';
import type { NeutronClient, OctaviaClient } from '../../openstack/index.ts';

/** The OpenStack clients a reconciler works with. */
export interface Cloud {
  neutron: NeutronClient;
  octavia: OctaviaClient;
}

/** One subnet of a network: the one of a family on a dual-stack network. */
export interface FamilySubnet {
  subnetId: string;
  cidr: string;
  gatewayIp: string | null;
}

/**
 * What a pod port (or a VIP port) needs to know about its subnet, for the VIF annotation: the network and its
 * primary-family subnet, and on a dual-stack network the subnet of the other family (`secondary`): a port gets an
 * address on each.
 */
export interface SubnetInfo extends FamilySubnet {
  networkId: string;
  mtu: number;
  /** Dual-stack: the network's subnet of the other IP family. */
  secondary?: FamilySubnet | undefined;
}

/**
 * Raven's settings as the reconcilers see them: read-only, derived from their one declaration (core/settings.ts), so
 * a setting added there reaches `ReconcilerConfig` without being declared again.
 */
type Settings = DeepReadonly<RavenSettings>;
/** `T` with the keys `K` optional: settings a reconciler defaults when absent (tests and benches leave them out). */
type Optional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** A configured choice of subnet: an existing one, or the range(s) Raven makes them with (one per IP family). */
export type SubnetRanges = Settings['serviceSubnet'];

/** The `namespace` strategy's subnets: from a Neutron subnet pool, or carved from a range (one per IP family). */
export type NamespaceSubnetConfig = Optional<Settings['subnets']['namespace'], 'ipv6PrefixLength'>;

/**
 * The subset of Raven's configuration the reconcilers read (the daemon maps its config onto it): the settings, with
 * the pod subnets narrowed to the strategy's, the router's `create` and `floatingIpNetworkId` resolved, and
 * `networkPolicies` (`translations.pods` and `translations.networkPolicies`: members are then routed, no subnet).
 */
export type ReconcilerConfig = Pick<Settings, 'clusterId' | 'serviceSubnet' | 'securityGroups' | 'emulateKubeProxy'> & {
  subnets: { strategy: 'shared'; shared: SubnetRanges } | { strategy: 'namespace'; namespace: NamespaceSubnetConfig };
  /** `create`: make `raven/<cluster>/router` when no `id` is given (false: no router, no interfaces). */
  router: Settings['router'] & { create: boolean };
  floatingIpNetworkId?: string | undefined;
  floatingIps: Optional<Settings['floatingIps'], 'networks' | 'allowFreeAddresses' | 'grants' | 'quarantineSeconds'>;
  networkPolicies?: boolean | undefined;
  loadBalancer: Optional<Settings['loadBalancer'], 'classes' | 'healthMonitor'>;
  gc: Pick<Settings['gc'], 'graceSeconds'>;
  /** Absent: no per-namespace limits. */
  quotas?: Settings['quotas'] | undefined;
  /** Make before break for NetworkPolicy changes; absent: the defaults (2 s to settle, 60 s longest hold). */
  policyTransitions?: Settings['policyTransitions'] | undefined;
  /** Warm port pools (see `reconcilers/pod/pools.ts`). */
  portPools: PortPoolConfig;
  /** Nested pods (nodes that are VMs, their trunks); absent: off. */
  nested?: Settings['nested'] | undefined;
};

/** Pool sizes: free ports kept ready (`min`), kept at most (`max`), made per bulk request (`batch`). */
export interface PoolSizes {
  min: number;
  max: number;
  batch: number;
}

/** Warm port pools; `namespaces`: sizes for one namespace's pools (unset fields take the global ones). */
export type PortPoolConfig = Settings['portPools'];

/** The cluster-level network Raven ensures at start: the router, the shared pod subnet, the service subnet. */
export interface ClusterNetwork {
  routerId: string | undefined;
  /** With the `shared` strategy. */
  podSubnet: SubnetInfo | undefined;
  serviceSubnet: SubnetInfo | undefined;
}

/**
 * The cluster network as the bootstrap last ensured it: undefined until then (a reconciler that needs it waits for
 * the bootstrap's `ready` event instead of polling).
 */
export interface ClusterNetworkSource {
  current(): ClusterNetwork | undefined;
  /** Resolves once the cluster network is known, or with undefined when `signal` aborts first. */
  whenReady(signal: AbortSignal): Promise<ClusterNetwork | undefined>;
  /** A caller found part of it gone (`RouterNotFound`, `NetworkNotFound` …): verify it in Neutron now, and rebuild. */
  recheck(): void;
}

/* Contracts between the NetworkPolicy translation (policy/) and the Services' load balancers (service/). */

/** Who a pod's ingress policies admit on one of its ports: everyone, or exactly these addresses (the fewest CIDRs). */
export type AdmittedPeers = { everyone: true } | { everyone: false; cidrs: IpCidr[] };

/**
 * What the NetworkPolicy translation tells the Service module: who may reach a pod (by `namespace/name`) on one of its
 * ports through a load balancer (its listener's `allowed_cidrs`, docs/policy.md "Load balancers (Octavia)").
 */
export type LoadBalancerPeers = (podKey: string, port: number, protocol: 'TCP' | 'UDP' | 'SCTP') => AdmittedPeers;

/* Contracts between the NetworkPolicy translation (policy/) and the pods and their warm pools (pod/). */

/**
 * A pod's groups as Neutron ids, or the keys of those that do not exist yet and that it waits for (see
 * {@link podWaitsFor}; the others are left out until they are made), with why for those whose making failed.
 */
export type PodGroupIds = { ids: string[] } | { missing: string[]; failed: string[] };

/**
 * "A security group was made, its rules changed, it was deleted, its reconcile failed or recovered, or its delete waits
 * for ports that still carry it" (`in-use`: the warm pools drain the free ports of sets nobody wants).
 */
export interface GroupChanged {
  id: string;
  change: 'created' | 'rules' | 'deleted' | 'status' | 'in-use';
}
