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

/** A configured choice of subnet: an existing one, or the range(s) Raven makes them with (one per IP family). */
export interface SubnetRanges {
  subnetId?: string | undefined;
  /** Dual-stack: existing subnets, one per family on one network, the primary first (wins over `subnetId`). */
  subnetIds?: readonly string[] | undefined;
  cidr?: string | undefined;
  /** Dual-stack: one range per family, the primary first (wins over `cidr`). */
  cidrs?: readonly string[] | undefined;
}

/** The `namespace` strategy's subnets: from a Neutron subnet pool, or carved from a range (one per IP family). */
export interface NamespaceSubnetConfig {
  subnetPoolId?: string | undefined;
  /** Dual-stack: one subnet pool per IP family, the primary first (wins over `subnetPoolId`). */
  subnetPoolIds?: readonly string[] | undefined;
  cidr?: string | undefined;
  cidrs?: readonly string[] | undefined;
  /** Of IPv4 subnets. */
  prefixLength: number;
  /** Of IPv6 subnets (default 64). */
  ipv6PrefixLength?: number | undefined;
}

/** The subset of Raven's configuration the reconcilers read (the daemon maps its config onto it). */
export interface ReconcilerConfig {
  clusterId: string;
  subnets: { strategy: 'shared'; shared: SubnetRanges } | { strategy: 'namespace'; namespace: NamespaceSubnetConfig };
  serviceSubnet: SubnetRanges;
  /** `create`: make `raven/<cluster>/router` when no `id` is given (false: no router, no interfaces). */
  router: { id?: string | undefined; externalNetworkId?: string | undefined; create: boolean };
  floatingIpNetworkId?: string | undefined;
  /**
   * Which floating IPs someone else allocated a Service may claim (besides those tagged `raven.grant=<ns>/<name>` or
   * `raven.grant=<ns>`), and whether `externalIPs` get floating IPs at all.
   */
  floatingIps: {
    allowExternalIPs: boolean;
    adoptCidrs: readonly string[];
    adoptProjects: readonly string[];
    /** Floating networks a Service may name with `loadbalancer.openstack.org/floating-network-id`. */
    networks?: readonly string[] | undefined;
    /** A Service may name a free address no grant gives it, when it lies in an allocation pool. Default false. */
    allowFreeAddresses?: boolean | undefined;
    /** Free addresses the operator gives a namespace: `{ namespace, cidrs }`. */
    grants?: readonly { namespace: string; cidrs: readonly string[] }[] | undefined;
    /** How long a floating IP Raven released is held for its Service's name (default 3600; 0: deleted at once). */
    quarantineSeconds?: number | undefined;
  };
  /**
   * Groups every pod port also carries. With the NetworkPolicy translation on they are added to the groups the
   * policies give a pod (they can only allow more); off, they are all a port gets (none: the project's default group).
   */
  securityGroups: readonly string[];
  /** NetworkPolicies become security groups (`translations.networkPolicies`); members are then routed (no subnet). */
  networkPolicies?: boolean | undefined;
  emulateKubeProxy: boolean;
  loadBalancer: {
    pendingRequeueMs: number;
    stuckAfterSeconds: number;
    /** `loadBalancerClass` values Raven serves besides none (the default class). */
    classes?: readonly string[] | undefined;
    /** Health monitors by default (`loadbalancer.openstack.org/enable-health-monitor` overrides). */
    healthMonitor?: boolean | undefined;
  };
  gc: { graceSeconds: number };
  /** Per-namespace limits (0: none); absent: none. */
  quotas?: { securityGroupsPerNamespace: number; poolPortsPerNamespace: number } | undefined;
  /** Warm port pools (see `reconcilers/pod/pools.ts`). */
  portPools: PortPoolConfig;
}

/** Pool sizes: free ports kept ready (`min`), kept at most (`max`), made per bulk request (`batch`). */
export interface PoolSizes {
  min: number;
  max: number;
  batch: number;
}

export interface PortPoolConfig extends PoolSizes {
  enabled: boolean;
  idleSeconds: number;
  /** Sizes for one namespace's pools (the `namespace` strategy); unset fields take the global ones. */
  namespaces: readonly ({ namespace: string } & Partial<PoolSizes>)[];
}

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
