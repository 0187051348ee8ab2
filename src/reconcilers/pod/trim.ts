import { StringPool } from '../../core/index.ts';
import {
  VIF_ANNOTATION,
  type ConditionStatus,
  type ContainerPort,
  type Node,
  type ObjectMeta,
  type Pod,
  type PodPhase,
} from '../../kube/api/index.ts';

/**
 * What Raven keeps of a pod in its cache: identity, labels (selectors), its VIF annotation (no other annotation),
 * deletion state, the node, hostNetwork, named container ports, phase, readiness and IPs. Typed as such, so nothing
 * reads a field the trim dropped.
 */
export interface CachedPod extends Pod {
  metadata: Pick<
    ObjectMeta,
    | 'name'
    | 'namespace'
    | 'uid'
    | 'resourceVersion'
    | 'labels'
    | 'annotations'
    | 'deletionTimestamp'
    | 'creationTimestamp'
    | 'ownerReferences'
  >;
  spec: { nodeName?: string; hostNetwork?: boolean; containers?: { name: string; ports: ContainerPort[] }[] };
  status: {
    phase?: PodPhase;
    podIP?: string;
    podIPs?: { ip: string }[];
    hostIP?: string;
    conditions?: { type: 'Ready'; status: ConditionStatus }[];
  };
}

/** Labels and named ports, one copy for every pod of a template (they repeat them: `npm run bench -- memory`). */
const templates = new StringPool();

/**
 * Trims a pod to a {@link CachedPod}: not managedFields, containers, volumes or status details. About 10× less
 * memory per pod (`npm run bench -- client`). Equal labels and equal named ports are shared, frozen.
 */
export function trimPod(pod: Pod): CachedPod {
  const m = pod.metadata;
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  // Named container ports resolve a Service's named targetPort.
  const ports = spec.containers?.flatMap((c) =>
    (c.ports ?? [])
      .filter((p) => p.name)
      .map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: p.protocol })),
  );
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      labels: m.labels && templates.value(m.labels),
      // Only Raven's own: a pod's other annotations (often kilobytes: last-applied configurations) are never read.
      annotations: m.annotations?.[VIF_ANNOTATION] ? { [VIF_ANNOTATION]: m.annotations[VIF_ANNOTATION] } : undefined,
      deletionTimestamp: m.deletionTimestamp,
      creationTimestamp: m.creationTimestamp,
      ownerReferences: m.ownerReferences,
    },
    spec: {
      nodeName: spec.nodeName,
      hostNetwork: spec.hostNetwork,
      ...(ports && ports.length > 0 ? { containers: templates.value([{ name: 'ports', ports }]) } : {}),
    },
    status: {
      phase: status.phase,
      podIP: status.podIP,
      podIPs: status.podIPs,
      hostIP: status.hostIP,
      ...(ready ? { conditions: [{ type: 'Ready', status: ready.status }] } : {}),
    },
  };
}

/**
 * What Raven keeps of a Node: that it exists (its pools live while it does), its internal addresses (what a pod
 * NetworkPolicy isolates still accepts from its own node: kubelet probes) and its `providerID` (a Nova VM's names its
 * server: docs/nested.md).
 */
export type CachedNode = Node & {
  metadata: Pick<ObjectMeta, 'name' | 'uid' | 'resourceVersion'>;
  spec?: { providerID?: string };
  status?: { addresses?: { type: string; address: string }[] };
};

export function trimNode(node: Node): CachedNode {
  const { name, uid, resourceVersion } = node.metadata;
  const addresses = node.status?.addresses?.filter((a) => a.type === 'InternalIP');
  const providerID = node.spec?.providerID;
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: { name, uid, resourceVersion },
    ...(providerID ? { spec: { providerID } } : {}),
    ...(addresses?.length ? { status: { addresses: addresses.map(({ type, address }) => ({ type, address })) } } : {}),
  };
}
