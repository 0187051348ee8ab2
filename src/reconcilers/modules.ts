import type { DeepReadonly } from '../core/index.ts';
import type { Service } from '../kube/api/index.ts';
import { trimMetadata, indexByNamespace, type SharedInformerFactory } from '../kube/cache/index.ts';
import { resources } from '../kube/client/index.ts';
import { clusterNetworkVerification, setupClusterNetwork } from './cluster/index.ts';
import {
  setupGarbageCollection,
  trunkNodesIn,
  uidIndexers,
  type GarbageCollectionLoop,
  type GarbageCollector,
  type GcMetrics,
} from './gc/index.ts';
import { setupNamespaces } from './namespace/index.ts';
import { setupNested } from './nested/index.ts';
import type { ClusterNetworkSource, ModuleContext } from './network/index.ts';
import {
  indexByNode,
  setupPodPorts,
  setupPods,
  trimNode,
  trimPod,
  wantsPort,
  type CachedPod,
  type PodMetrics,
} from './pod/index.ts';
import { setupNetworkPolicies, type NetworkPolicyModule, type PolicyMetrics } from './policy/index.ts';
import { setupServices, trimEndpoints, wantsLoadBalancer } from './service/index.ts';
import { topologySource } from './topology/index.ts';

/** Which translations run, and their controllers' sizes (from the daemon's configuration). */
export interface ModuleSettings {
  translations: { namespaces: boolean; pods: boolean; networkPolicies: boolean };
  /** Whether Services become load balancers (the translation is on and a service subnet is configured). */
  servicesTranslated: boolean;
  /** Whether the sweep looks for load balancers (`translations.services`). */
  collectLoadBalancers: boolean;
  workers: { namespaces: number; pods: number; services: number };
  resyncEveryMs: number;
  gcIntervalSeconds: number;
  /** The VIF key (`vif.keyFile`, read): VIFs are signed with it. */
  vifKey?: Uint8Array | undefined;
}

export type ModuleMetrics = PodMetrics & PolicyMetrics & GcMetrics;

/** What the composed modules give the daemon: its banner's and tests' handles, and what its metrics read. */
export interface RavenModules {
  cluster: ClusterNetworkSource;
  collector: GarbageCollector;
  gc: GarbageCollectionLoop;
  /** The live topology view's data: the caches and each module's records, read-only (docs/topology.md). */
  topology: ReturnType<typeof topologySource>;
  /** The pod and service controllers' waiting keys, and whether each record of Neutron objects is still loading. */
  waiting: {
    pods?: () => Map<string, number>;
    services?: () => Map<string, number>;
    records: () => Map<string, number>;
  };
}

/**
 * Raven's translations, each set up by its own module in the order their contracts flow: the cluster network, then
 * namespaces (the subnet strategy), Services, the record of Raven's pod ports, NetworkPolicy (a pod's groups), pods
 * (with the warm pools), and garbage collection (with every module's check around its sweep). The caches are shared:
 * each kind's informer with its owner's trim, and the indexes more than one module reads.
 */
export function setupRavenModules(
  ctx: ModuleContext,
  informers: SharedInformerFactory,
  s: ModuleSettings,
  metrics: ModuleMetrics,
): RavenModules {
  const { config } = ctx;
  // The caches: pods, nodes and Endpoints trimmed to what the reconcilers read; the others without what only the API
  // server and kubectl read (managedFields, last-applied-configuration).
  const namespaces = informers.informerFor(resources.namespaces, { transform: trimMetadata });
  const pods = informers.informerFor(resources.pods, { transform: trimPod });
  const services = informers.informerFor(resources.services, { transform: trimMetadata });
  namespaces.addIndexers(uidIndexers);
  pods.addIndexers({ ...uidIndexers, byNamespace: indexByNamespace, byNode: indexByNode });
  services.addIndexers({ ...uidIndexers, byNamespace: indexByNamespace });
  const policiesOn = s.translations.pods && s.translations.networkPolicies;
  const poolsOn = s.translations.pods && config.portPools.enabled;
  const nestedOn = s.translations.pods && config.nested !== undefined && config.nested.mode !== 'off';
  const nodes =
    poolsOn || policiesOn || nestedOn ? informers.informerFor(resources.nodes, { transform: trimNode }) : undefined;
  nodes?.addIndexers(uidIndexers);

  const cluster = setupClusterNetwork(ctx, { recheckEveryMs: s.resyncEveryMs });
  const namespaceModule = setupNamespaces(ctx, {
    namespaces,
    cluster,
    translate: s.translations.namespaces,
    workers: s.workers.namespaces,
  });
  const ports = s.translations.pods ? setupPodPorts(ctx) : undefined;
  // VM nodes' trunks (nested pods): a controller keyed by Node, before the pods that will ride them.
  const nested =
    nodes && nestedOn
      ? setupNested(ctx, {
          nodes,
          workers: s.workers.namespaces,
          podExists: (uid) => pods.lister().byIndex('uid', uid).length > 0,
        })
      : undefined;
  let policyModule: NetworkPolicyModule<CachedPod> | undefined;
  const policies =
    ports && nodes && policiesOn
      ? informers.informerFor(resources.networkpolicies, { transform: trimMetadata })
      : undefined;
  if (ports && nodes && policies) {
    policies.addIndexers({ byNamespace: indexByNamespace });
    policyModule = setupNetworkPolicies(ctx, {
      policies,
      namespaces,
      pods,
      nodes,
      services: s.servicesTranslated
        ? { informer: services, balanced: (svc: DeepReadonly<Service>) => wantsLoadBalancer(svc, config) }
        : undefined,
      wired: (pod: DeepReadonly<CachedPod>) => wantsPort(pod),
      podPorts: ports.ports.record,
      cluster,
      metrics,
    });
  }
  // After the policies: under NetworkPolicy each listener admits only what its members' policies admit.
  const serviceModule = s.servicesTranslated
    ? setupServices(ctx, {
        services,
        endpointSlices: informers.informerFor(resources.endpointslices, { transform: trimMetadata }),
        endpoints: informers.informerFor(resources.endpoints, { transform: trimEndpoints }),
        pods,
        cluster,
        namespaceNetworks: namespaceModule.networks,
        subnets: namespaceModule.subnets,
        workers: s.workers.services,
        policies: policyModule &&
          policies && { peers: policyModule.loadBalancerPeers, informer: policies, namespaces, pods },
      })
    : undefined;
  const podModule = ports
    ? setupPods(ctx, {
        pods,
        namespaces,
        nodes,
        ports,
        cluster,
        namespaceNetworks: namespaceModule.networks,
        subnets: namespaceModule.subnets,
        policies: policyModule,
        workers: s.workers.pods,
        metrics,
        vifKey: s.vifKey,
        nested,
      })
    : undefined;
  const { collector, loop } = setupGarbageCollection(ctx, {
    owners: { pod: pods.lister(), namespace: namespaces.lister(), service: services.lister() },
    cluster,
    intervalSeconds: s.gcIntervalSeconds,
    loadBalancers: s.collectLoadBalancers,
    // The router's interfaces are listed when it has any to check: the cluster's own, or the namespaces'.
    networks: namespaceModule.verification !== undefined || Boolean(config.router.id) || config.router.create,
    checks: [
      clusterNetworkVerification({ cluster, logger: ctx.logger.child({ component: 'gc' }) }),
      namespaceModule.verification,
      podModule?.verification,
      policyModule?.verification,
      serviceModule?.verification,
    ].filter((check) => check !== undefined),
    pools: podModule?.pools,
    // Nested mode: the trunks Raven made are collected with their Node.
    trunks: nested && nodes && trunkNodesIn(nodes.lister()),
    securityGroups: policyModule && { wanted: policyModule.groupWanted },
    podPortDeleted: podModule?.portDeleted,
    metrics,
  });
  const topology = topologySource({
    clusterId: config.clusterId,
    subnetStrategy: config.subnets.strategy,
    externalNetworkId: config.router.externalNetworkId ?? config.floatingIpNetworkId,
    cluster,
    namespaces: namespaces.lister(),
    pods: pods.lister(),
    services: services.lister(),
    policies: policies?.lister(),
    networks: namespaceModule.networks,
    podModule: podModule?.view,
    serviceModule,
    policyModule,
    events: ctx.recorder,
    clock: ctx.clock,
  });
  return {
    cluster,
    collector,
    gc: loop,
    topology,
    waiting: {
      ...(podModule ? { pods: () => podModule.controller.waiting() } : {}),
      ...(serviceModule ? { services: () => serviceModule.controller.waiting() } : {}),
      records: () =>
        new Map([
          ...(ports ? [['pod-ports', ports.ports.record.synced() ? 0 : 1] as const] : []),
          ...(policyModule ? [['security-groups', policyModule.synced() ? 0 : 1] as const] : []),
        ]),
    },
  };
}
