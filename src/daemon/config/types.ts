import type { DeepReadonly } from '../../core/index.ts';
import type { LogLevel, SubnetStrategyName } from './schema.ts';

/** Where an alternative is "exactly one of": which one is set is the choice (validated by `loadRavenConfig`). */
export interface SubnetChoice {
  /** An existing subnet; with `subnetIds` (resolved), its first. */
  subnetId?: string;
  /** Dual-stack: existing subnets, one per IP family on one network, the primary first; resolved from `subnetId`. */
  subnetIds?: readonly string[];
  /** Raven creates a network and a subnet with this range; with `cidrs` (resolved), its first range. */
  cidr?: string;
  /** Dual-stack: one range per IP family, the primary first; resolved from `cidr` when only that is set. */
  cidrs?: readonly string[];
}

/**
 * Raven's validated configuration, every default filled in and every environment-dependent field resolved. Field by
 * field documentation: `src/daemon/config/README.md` (generated from fields.ts).
 */
export type RavenConfig = DeepReadonly<{
  /** Goes into every cloud resource: tag `raven.cluster=<id>`, names `raven/<id>/…`. */
  clusterId: string;
  kubernetes: {
    kubeconfig?: string;
    context?: string;
    /** Resolved: true → `inClusterConfig()`; false → `loadConnection({ kubeconfig, context })`. */
    inCluster: boolean;
    qps: number;
    burst: number;
  };
  openstack: {
    /** Unset: the OpenStack loader's own choice (`OS_CLOUD`, the `OS_*` variables, the only cloud). */
    cloud?: string;
    concurrency: { network: number; loadBalancer: number };
    timeoutMs: number;
  };
  subnets: {
    strategy: SubnetStrategyName;
    /** Strategy `shared`: exactly one of `subnetId` and `cidr`. */
    shared: SubnetChoice;
    /**
     * Strategy `namespace`: exactly one of `subnetPoolId` and `cidr`/`cidrs` (carved into `/prefixLength` IPv4 and
     * `/ipv6PrefixLength` IPv6 subnets).
     */
    namespace: {
      subnetPoolId?: string;
      /** Dual-stack: one subnet pool per IP family, the primary first; resolved from `subnetPoolId`. */
      subnetPoolIds?: readonly string[];
      cidr?: string;
      cidrs?: string[];
      prefixLength: number;
      ipv6PrefixLength: number;
    };
  };
  /** Where Octavia VIPs live (VIP address = the Service's clusterIP). Set when `translations.services` is on. */
  serviceSubnet: SubnetChoice;
  /**
   * Unset `id`: Raven creates the cluster's router when `create` (resolved: true unless the pod subnet is an existing
   * one), with a gateway on `externalNetworkId` when set.
   */
  router: { id?: string; externalNetworkId?: string; create: boolean };
  /** Resolved: defaults to `router.externalNetworkId`; unset means no floating IPs can be made. */
  floatingIpNetworkId?: string;
  /** Which floating IPs a Service may claim (`loadBalancerIP`, `externalIPs`), and whether `externalIPs` count. */
  floatingIps: {
    allowExternalIPs: boolean;
    adoptCidrs: string[];
    adoptProjects: string[];
    networks: string[];
    allowFreeAddresses: boolean;
    grants: { namespace: string; cidrs: string[] }[];
    quarantineSeconds: number;
  };
  /** Empty: the project's `default` group. */
  securityGroups: string[];
  emulateKubeProxy: boolean;
  translations: { namespaces: boolean; pods: boolean; services: boolean; networkPolicies: boolean };
  /** 0: no periodic resync. */
  resyncPeriodSeconds: number;
  workers: { namespaces: number; pods: number; services: number };
  gc: { intervalSeconds: number; graceSeconds: number };
  /** Per-namespace shares of the project's Neutron quotas; 0: no limit. */
  quotas: { securityGroupsPerNamespace: number; poolPortsPerNamespace: number };
  loadBalancer: { pendingRequeueMs: number; stuckAfterSeconds: number; classes: string[]; healthMonitor: boolean };
  portPools: {
    enabled: boolean;
    min: number;
    max: number;
    batch: number;
    idleSeconds: number;
    namespaces: { namespace: string; min?: number; max?: number; batch?: number }[];
  };
  leaderElection: {
    enabled: boolean;
    namespace: string;
    name: string;
    /** Resolved: the setting, else `POD_NAME`, else `<hostname>_<uuid>`. */
    identity: string;
    leaseDurationSeconds: number;
    renewDeadlineSeconds: number;
    retryPeriodSeconds: number;
  };
  /** `unreadyAfterSeconds`: how long informers or OpenStack may fail before `/readyz` does. */
  ops: { host: string; port: number; unreadyAfterSeconds: number };
  logLevel: LogLevel;
}>;
