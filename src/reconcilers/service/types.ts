import type { DeepReadonly } from '../../core/index.ts';
import type { Service, ServiceSpec } from '../../kube/api/index.ts';
import type { ReconcilerConfig } from '../network/index.ts';

/** The finalizer that guards a Service's load balancer, floating IPs and VIP port until they are confirmed gone. */
export const LB_FINALIZER = 'raven.openstack.org/loadbalancer';

export const specOf = (svc: DeepReadonly<Service>): DeepReadonly<ServiceSpec> => svc.spec ?? {};

/**
 * `type: LoadBalancer` that is Raven's to serve: no `loadBalancerClass` (the default class), or one of the classes
 * Raven is configured to own (`loadBalancer.classes`); any other class names another implementation, as upstream.
 */
export function isLoadBalancerType(svc: DeepReadonly<Service>, classes: readonly string[] = []): boolean {
  const spec = specOf(svc);
  return spec.type === 'LoadBalancer' && (!spec.loadBalancerClass || classes.includes(spec.loadBalancerClass));
}

/** The VIP address: the Service's clusterIP, when it has one (not headless, not ExternalName). */
export function vipAddressOf(svc: DeepReadonly<Service>): string | undefined {
  const spec = specOf(svc);
  if (spec.type === 'ExternalName') return undefined;
  const ip = spec.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}

/** A Service that gets a load balancer, with the identity and VIP address it needs filled in. */
export type BalancedService = DeepReadonly<Service> & {
  metadata: { name: string; namespace: string; uid: string };
  spec: { clusterIP: string };
};

/**
 * Whether a Service gets an Octavia load balancer: `type: LoadBalancer` (of no other class), non-empty
 * `externalIPs`, or — with `emulateKubeProxy` — any Service with a clusterIP (ClusterIP, NodePort, LoadBalancer).
 * Headless and ExternalName Services never do (they have no clusterIP to be the VIP).
 */
export function wantsLoadBalancer(
  svc: DeepReadonly<Service> | undefined,
  config: Pick<ReconcilerConfig, 'emulateKubeProxy'> & {
    loadBalancer?: Pick<ReconcilerConfig['loadBalancer'], 'classes'>;
  },
): svc is BalancedService {
  if (!svc?.metadata.name || !svc.metadata.namespace || !svc.metadata.uid || !vipAddressOf(svc)) return false;
  return (
    isLoadBalancerType(svc, config.loadBalancer?.classes) ||
    (specOf(svc).externalIPs?.length ?? 0) > 0 ||
    config.emulateKubeProxy
  );
}
