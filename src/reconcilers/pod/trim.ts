import type { KubeObject } from '../../kube/api/index.ts';

/**
 * What Raven keeps of a pod in its cache: identity, labels (selectors), annotations (the VIF), deletion state, the
 * node, hostNetwork, readiness and IPs — not managedFields, containers, volumes or status details. About 10× less
 * memory per pod (bench: `npm run bench -- client`); brief.md's target is under 1 KB per pod.
 */
export function trimPod(pod: KubeObject): KubeObject {
  const m = pod.metadata;
  const spec = (pod.spec ?? {}) as {
    nodeName?: string;
    hostNetwork?: boolean;
    containers?: { name: string; ports?: { name?: string; containerPort: number; protocol?: string }[] }[];
  };
  const status = (pod.status ?? {}) as {
    phase?: string;
    podIP?: string;
    podIPs?: unknown;
    hostIP?: string;
    conditions?: { type: string; status: string }[];
  };
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
      labels: m.labels,
      annotations: m.annotations,
      deletionTimestamp: m.deletionTimestamp,
      creationTimestamp: m.creationTimestamp,
      ownerReferences: m.ownerReferences,
    },
    spec: {
      nodeName: spec.nodeName,
      hostNetwork: spec.hostNetwork,
      ...(ports && ports.length > 0 ? { containers: [{ name: 'ports', ports }] } : {}),
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
