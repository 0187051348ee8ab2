import { allKeys, EventChannel, newControllerManagedBy } from '../../controller/index.ts';
import {
  keyOf,
  type EndpointSlice,
  type KubeObject,
  type Namespace,
  type NetworkPolicy,
  type Pod,
  type Service,
} from '../../kube/api/index.ts';
import type { Lister, SharedInformer } from '../../kube/cache/index.ts';
import { providerTraits } from '../../openstack/index.ts';
import type {
  ClusterNetwork,
  ClusterNetworkSource,
  LoadBalancerPeers,
  ModuleContext,
  NamespaceNetworkChanged,
  SubnetStrategy,
} from '../network/index.ts';
import { ConvergedLoadBalancers, type SeenLoadBalancer } from './converged.ts';
import { endpointsToService, serviceSliceIndexers, sliceToService } from './desired.ts';
import { podIpIndexers } from './members.ts';
import { ServiceReconciler } from './reconciler.ts';
import type { CachedEndpoints } from './trim.ts';
import { wantsLoadBalancer } from './types.ts';
import { loadBalancerVerification, type LoadBalancerGone } from './verify.ts';

export interface ServiceModuleInputs<P extends KubeObject = KubeObject> {
  /** Indexed `byNamespace`. */
  services: SharedInformer<Service>;
  endpointSlices: SharedInformer<EndpointSlice>;
  endpoints: SharedInformer<CachedEndpoints>;
  /** The module indexes them by address: an endpoint a pod holds is a member only of its own namespace's Services. */
  pods: { lister(): Lister<Pod>; addIndexers(indexers: typeof podIpIndexers): void };
  cluster: ClusterNetworkSource & { ready: EventChannel<ClusterNetwork> };
  namespaceNetworks: { changed: EventChannel<NamespaceNetworkChanged> };
  subnets: SubnetStrategy;
  workers: number;
  /**
   * With NetworkPolicy translated: who a member pod's policies admit on its port (listeners admit no more), and the
   * policies (indexed `byNamespace`) and namespaces whose changes can change that.
   */
  policies?:
    | {
        peers: LoadBalancerPeers;
        informer: SharedInformer<NetworkPolicy>;
        namespaces: SharedInformer<Namespace>;
        /** The same pods' informer (its events). */
        pods: SharedInformer<P>;
      }
    | undefined;
}

/** What the Service module gives the others. */
export interface ServiceModule {
  /** The check around each garbage-collection sweep that finds load balancers gone behind Raven's back. */
  verification: ReturnType<typeof loadBalancerVerification>;
  /** The controller's waiting keys (`raven_loadbalancers_pending`). */
  controller: { waiting(): Map<string, number> };
  /** Each Service's load balancer as the controller last saw it, by `namespace/name` (the topology view). */
  loadBalancer(key: string): SeenLoadBalancer | undefined;
}

/**
 * Services' module: the service controller (Service → Octavia load balancer, listeners, pools, members, floating
 * IPs), woken by the Service's EndpointSlices (or Endpoints), the cluster network, its namespace's network, and a
 * load balancer the sweep found gone.
 */
export function setupServices<P extends KubeObject>(ctx: ModuleContext, o: ServiceModuleInputs<P>): ServiceModule {
  o.endpointSlices.addIndexers(serviceSliceIndexers);
  o.pods.addIndexers(podIpIndexers);
  const loadBalancersGone = new EventChannel<LoadBalancerGone>('loadbalancers-gone');
  const converged = new ConvergedLoadBalancers();
  const reconciler = new ServiceReconciler({
    cloud: ctx.cloud,
    config: ctx.config,
    cluster: o.cluster,
    client: ctx.client,
    services: o.services.lister(),
    endpointSlices: o.endpointSlices.lister(),
    endpoints: o.endpoints.lister(),
    subnets: o.subnets,
    pods: o.pods.lister(),
    peers: o.policies?.peers,
    recorder: ctx.recorder,
    converged,
    clock: ctx.clock,
    logger: ctx.logger.child({ reconciler: 'service' }),
  });
  const services = o.services.lister();
  const controller = newControllerManagedBy(ctx.manager)
    .named('service')
    .for(o.services)
    .watches(o.endpointSlices, sliceToService)
    .watches(o.endpoints, endpointsToService(o.endpointSlices.lister()))
    .watchesChannel(o.cluster.ready, allKeys(o.services))
    .watchesChannel(o.namespaceNetworks.changed, (e) => services.byIndex('byNamespace', e.namespace).map(keyOf))
    .watchesChannel(loadBalancersGone, (gone) => [gone.key]);
  // Only where the provider hides the client's address do members' policies shape listeners (access.ts).
  if (o.policies && !providerTraits(ctx.config.loadBalancer.provider).keepsClientAddress) {
    const policies = o.policies.informer.lister();
    // Level-triggered and cheap: a pod or namespace change queues only the Services whose members' policies now admit
    // something else (computed from the caches, no OpenStack read); the last answer is kept per Service for that.
    const seen = new Map<string, string>();
    const changedAccess = (): string[] => {
      const changed: string[] = [];
      const live = new Set<string>();
      for (const svc of services.list()) {
        const key = keyOf(svc);
        if (
          !wantsLoadBalancer(svc, ctx.config) ||
          policies.byIndex('byNamespace', svc.metadata.namespace ?? '').length === 0
        )
          continue;
        live.add(key);
        const signature = reconciler.peersSignature(svc);
        if (seen.get(key) !== signature) changed.push(key);
        seen.set(key, signature);
      }
      for (const key of seen.keys()) if (!live.has(key)) seen.delete(key);
      return changed;
    };
    controller
      // A policy decides only for pods of its own namespace, whose Services (members come from there) are queued.
      .watches(o.policies.informer, (p) => services.byIndex('byNamespace', p.metadata.namespace ?? '').map(keyOf))
      .watches(o.policies.pods, changedAccess)
      .watches(o.policies.namespaces, changedAccess);
  }
  const handle = controller.withOptions(ctx.controllerOptions(o.workers)).complete(reconciler.reconcile);
  return {
    verification: loadBalancerVerification({
      services,
      config: ctx.config,
      loadBalancersGone,
      converged,
      logger: ctx.logger.child({ component: 'gc' }),
    }),
    controller: handle,
    loadBalancer: (key) => converged.seen(key),
  };
}
