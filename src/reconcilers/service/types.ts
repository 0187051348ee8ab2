import type { DeepReadonly } from '../../core/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import type { ReconcilerConfig } from '../common/types.ts';

/** The finalizer that guards a Service's load balancer, floating IPs and VIP port until they are confirmed gone. */
export const LB_FINALIZER = 'raven.openstack.org/loadbalancer';

/** The label an EndpointSlice names its Service with. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** The parts of a core/v1 ServicePort Raven reads. */
export interface ServicePort {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
}

/** The parts of a core/v1 ServiceSpec Raven reads. */
export interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  ports?: ServicePort[];
  externalIPs?: string[];
  loadBalancerIP?: string;
  loadBalancerClass?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
}

/** discovery.k8s.io/v1 EndpointSlice, the parts Raven reads. */
export interface EndpointSliceFields {
  addressType?: string;
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean | null } }[] | null;
  ports?: { name?: string | null; port?: number | null; protocol?: string | null }[] | null;
}

/** core/v1 Endpoints, the parts Raven reads (the fallback where a Service has no EndpointSlices). */
export interface EndpointsFields {
  subsets?: { addresses?: { ip: string }[]; ports?: { name?: string; port: number; protocol?: string }[] }[];
}

export const specOf = (svc: DeepReadonly<KubeObject>): DeepReadonly<ServiceSpec> => svc.spec ?? {};

/** `type: LoadBalancer` that is Raven's to serve: a `loadBalancerClass` names another implementation. */
export function isLoadBalancerType(svc: DeepReadonly<KubeObject>): boolean {
  const spec = specOf(svc);
  return spec.type === 'LoadBalancer' && !spec.loadBalancerClass;
}

/** The VIP address: the Service's clusterIP, when it has one (not headless, not ExternalName). */
export function vipAddressOf(svc: DeepReadonly<KubeObject>): string | undefined {
  const spec = specOf(svc);
  if (spec.type === 'ExternalName') return undefined;
  const ip = spec.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}

/**
 * Whether a Service gets an Octavia load balancer: `type: LoadBalancer` (of no other class), non-empty
 * `externalIPs`, or — with `emulateKubeProxy` — any Service with a clusterIP (ClusterIP, NodePort, LoadBalancer).
 * Headless and ExternalName Services never do (they have no clusterIP to be the VIP).
 */
export function wantsLoadBalancer(
  svc: DeepReadonly<KubeObject> | undefined,
  config: Pick<ReconcilerConfig, 'emulateKubeProxy'>,
): boolean {
  if (!svc || !vipAddressOf(svc)) return false;
  return isLoadBalancerType(svc) || (specOf(svc).externalIPs?.length ?? 0) > 0 || config.emulateKubeProxy;
}
