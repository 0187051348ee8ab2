import type { NeutronClient, OctaviaClient } from '../../openstack/index.ts';

/** The OpenStack clients a reconciler works with. */
export interface Cloud {
  neutron: NeutronClient;
  octavia: OctaviaClient;
}

/** What a pod port needs to know about its subnet, for the VIF annotation. */
export interface SubnetInfo {
  networkId: string;
  subnetId: string;
  cidr: string;
  gatewayIp: string | null;
  mtu: number;
}

/** The `namespace` strategy's subnets: from a Neutron subnet pool, or carved from a range. */
export interface NamespaceSubnetConfig {
  subnetPoolId?: string | undefined;
  cidr?: string | undefined;
  prefixLength: number;
}

/** The subset of Raven's configuration the reconcilers read (the daemon maps its config onto it). */
export interface ReconcilerConfig {
  clusterId: string;
  subnets:
    | { strategy: 'shared'; shared: { subnetId?: string | undefined; cidr?: string | undefined } }
    | { strategy: 'namespace'; namespace: NamespaceSubnetConfig };
  serviceSubnet: { subnetId?: string | undefined; cidr?: string | undefined };
  router: { id?: string | undefined; externalNetworkId?: string | undefined };
  floatingIpNetworkId?: string | undefined;
  securityGroups: readonly string[];
  emulateKubeProxy: boolean;
  loadBalancer: { pendingRequeueMs: number; stuckAfterSeconds: number };
  gc: { graceSeconds: number };
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
}
