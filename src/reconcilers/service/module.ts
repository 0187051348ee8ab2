import type { DeepReadonly } from '../../core/index.ts';
import { allKeys, EventChannel, newControllerManagedBy } from '../../controller/index.ts';
import { keyOf, type EndpointSlice, type Pod, type Service } from '../../kube/api/index.ts';
import type { Lister, SharedInformer } from '../../kube/cache/index.ts';
import type {
  ClusterNetwork,
  ClusterNetworkSource,
  ModuleContext,
  NamespaceNetworkChanged,
  SubnetStrategy,
} from '../network/index.ts';
import { ConvergedLoadBalancers } from './converged.ts';
import { endpointsToService, serviceSliceIndexers, sliceToService } from './desired.ts';
import { podIpIndexers } from './members.ts';
import { ServiceReconciler } from './reconciler.ts';
import type { CachedEndpoints } from './trim.ts';
import { wantsLoadBalancer } from './types.ts';
import { loadBalancerVerification, type LoadBalancerGone } from './verify.ts';

export interface ServiceModuleInputs {
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
}

/** What the Service module gives the others. */
export interface ServiceModule {
  /** Whether Raven gives this Service a load balancer (the NetworkPolicy translation allows egress to its VIPs). */
  balanced: (svc: DeepReadonly<Service>) => boolean;
  /** The check around each garbage-collection sweep that finds load balancers gone behind Raven's back. */
  verification: ReturnType<typeof loadBalancerVerification>;
  /** The controller's waiting keys (`raven_loadbalancers_pending`). */
  controller: { waiting(): Map<string, number> };
}

/**
 * Services' module: the service controller (Service → Octavia load balancer, listeners, pools, members, floating
 * IPs), woken by the Service's EndpointSlices (or Endpoints), the cluster network, its namespace's network, and a
 * load balancer the sweep found gone.
 */
export function setupServices(ctx: ModuleContext, o: ServiceModuleInputs): ServiceModule {
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
    .watchesChannel(loadBalancersGone, (gone) => [gone.key])
    .withOptions(ctx.controllerOptions(o.workers))
    .complete(reconciler.reconcile);
  return {
    balanced: (svc) => wantsLoadBalancer(svc, ctx.config),
    verification: loadBalancerVerification({
      services,
      config: ctx.config,
      loadBalancersGone,
      converged,
      logger: ctx.logger.child({ component: 'gc' }),
    }),
    controller,
  };
}
