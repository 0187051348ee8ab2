/**
 * `core/v1` kinds, the fields Raven, the cluster simulator and the embedded API server read and write. Every field is
 * optional as on the wire (the server defaults most of them); a reconciler narrows with a type guard where it needs
 * a field to be there.
 */
import type { ConditionStatus, Condition, KubeObject, ObjectReference } from './meta.ts';

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  hostPort?: number;
}

export interface Container {
  name: string;
  image?: string;
  ports?: ContainerPort[];
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  hostNetwork?: boolean;
  restartPolicy?: string;
  schedulerName?: string;
  terminationGracePeriodSeconds?: number;
  readinessGates?: { conditionType: string }[];
  containers?: Container[];
}

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export type ContainerState =
  | { running: { startedAt: string } }
  | { waiting: { reason: string; message?: string } }
  | { terminated: { exitCode: number; reason: string; startedAt?: string; finishedAt: string } };

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase;
  reason?: string;
  conditions?: PodCondition[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: PodStatus;
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

export interface ServiceSpec {
  type?: ServiceType;
  selector?: Record<string, string>;
  ports?: ServicePort[];
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  externalIPs?: string[];
  externalName?: string;
  loadBalancerIP?: string;
  loadBalancerClass?: string;
  loadBalancerSourceRanges?: string[];
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  externalTrafficPolicy?: string;
  internalTrafficPolicy?: string;
  publishNotReadyAddresses?: boolean;
  allocateLoadBalancerNodePorts?: boolean;
  healthCheckNodePort?: number;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] | null };
  conditions?: Condition[];
}

export interface Service extends KubeObject {
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointsPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointsPort[];
}

/** core/v1 Endpoints: the older form of a Service's endpoints (Raven's fallback where a Service has no slices). */
export interface Endpoints extends KubeObject {
  subsets?: EndpointSubset[];
}

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface NodeAddress {
  type: string;
  address: string;
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; podCIDR?: string; providerID?: string };
  status?: {
    conditions?: NodeCondition[];
    addresses?: NodeAddress[];
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    nodeInfo?: Record<string, string>;
    daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  };
}

export type EventType = 'Normal' | 'Warning';

/** core/v1 Event, as recorders write it (`count` and the timestamps aggregate repeats). */
export interface Event extends KubeObject {
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: EventType;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
}
