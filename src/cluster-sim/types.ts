/**
 * The narrow slices of the core/v1 and discovery/v1 wire types the simulator reads and writes. Unknown fields are
 * kept (the index signatures), so writing an object back never drops what another client set.
 */
import type { KubeObject } from '../kube/api/index.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  [field: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  ports?: ContainerPort[];
  [field: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  [field: string]: unknown;
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
  [field: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    hostNetwork?: boolean;
    restartPolicy?: string;
    schedulerName?: string;
    containers?: Container[];
    [field: string]: unknown;
  };
  status?: PodStatus;
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  [field: string]: unknown;
}

export interface Service extends KubeObject {
  spec?: {
    selector?: Record<string, string>;
    ports?: ServicePort[];
    publishNotReadyAddresses?: boolean;
    [field: string]: unknown;
  };
}

export interface EndpointPort {
  name: string;
  protocol: string;
  port: number;
  appProtocol?: string;
}

export interface Endpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  nodeName?: string;
  targetRef: { kind: 'Pod'; namespace: string; name: string; uid: string };
}

export interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: Endpoint[];
  ports?: EndpointPort[];
}

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  [field: string]: unknown;
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; [field: string]: unknown };
  status?: {
    conditions?: NodeCondition[];
    addresses?: { type: string; address: string }[];
    [field: string]: unknown;
  };
}

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[]; [field: string]: unknown };
  status?: { phase?: string; [field: string]: unknown };
}

/** The index of objects by namespace the simulator adds to its informers (names prefixed: informers may be shared). */
export const byNamespace = 'cluster-sim/byNamespace';

/** `metav1.Time`: RFC 3339 in whole seconds. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
