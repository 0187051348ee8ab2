/** `discovery.k8s.io/v1` EndpointSlice: a Service's endpoints, the source of its load balancer's members. */
import type { KubeObject, ObjectReference } from './meta.ts';

/** The label an EndpointSlice names its Service with. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface EndpointConditions {
  ready?: boolean | null;
  serving?: boolean | null;
  terminating?: boolean | null;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string | null;
  protocol?: string | null;
  port?: number | null;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: Endpoint[] | null;
  ports?: EndpointPort[] | null;
}
