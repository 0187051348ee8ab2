import { isDeepStrictEqual } from 'node:util';
import type { Clock, DeepReadonly } from '../../../src/core/index.ts';
import type { Reconciler } from '../../../src/controller/index.ts';
import type { Lister } from '../../../src/kube/cache/index.ts';
import { isAlreadyExists, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { rfc3339, type Node, type NodeCondition } from '../../../src/kube/api/index.ts';

/** One simulated node: its name, extra labels (for `nodeSelector` tests) and its InternalIP. */
export interface SimNode {
  name: string;
  labels: Record<string, string>;
  ip: string;
}

/** A node as the options may give it: a name, or a name with labels. */
export type SimNodeInput = string | { name: string; labels?: Record<string, string> };

/** Names and InternalIPs (`127.0.1.1`, `127.0.1.2`…: the simulator runs everything on loopback). */
export function simNodes(inputs: readonly SimNodeInput[]): SimNode[] {
  return inputs.map((input, i) => {
    const { name, labels = {} } = typeof input === 'string' ? { name: input } : input;
    return { name, labels, ip: `127.0.${1 + Math.floor(i / 254)}.${(i % 254) + 1}` };
  });
}

/** The labels a kubelet registers its node with, plus the node's own. */
export function nodeLabels(node: SimNode): Record<string, string> {
  return {
    'kubernetes.io/hostname': node.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
    'node.kubernetes.io/instance-type': 'raven-sim',
    ...node.labels,
  };
}

const capacity = { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' };

const conditionTemplates: ReadonlyArray<Pick<NodeCondition, 'type' | 'status' | 'reason' | 'message'>> = [
  {
    type: 'MemoryPressure',
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  {
    type: 'DiskPressure',
    status: 'False',
    reason: 'KubeletHasNoDiskPressure',
    message: 'kubelet has no disk pressure',
  },
  {
    type: 'PIDPressure',
    status: 'False',
    reason: 'KubeletHasSufficientPID',
    message: 'kubelet has sufficient PID available',
  },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
];

/**
 * The status a kubelet posts for its node. Condition times are kept while a condition's status holds (no heartbeat:
 * nothing in the simulated cluster marks nodes NotReady, so refreshing them would only be write traffic).
 */
export function desiredNodeStatus(
  node: SimNode,
  current: DeepReadonly<Node['status']> | undefined,
  now: string,
): NonNullable<Node['status']> {
  const conditions = conditionTemplates.map((c): NodeCondition => {
    const old = current?.conditions?.find((o) => o.type === c.type);
    const since = old && old.status === c.status ? old.lastTransitionTime : undefined;
    return { ...c, lastHeartbeatTime: since ?? now, lastTransitionTime: since ?? now };
  });
  return {
    ...structuredClone(current as Node['status']),
    capacity,
    allocatable: capacity,
    conditions,
    addresses: [
      { type: 'InternalIP', address: node.ip },
      { type: 'Hostname', address: node.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: 'raven-sim',
      osImage: 'Raven simulated node',
      containerRuntimeVersion: 'raven-sim://1.0',
      kubeletVersion: 'v1.30.0-raven-sim',
      kubeProxyVersion: 'v1.30.0-raven-sim',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

export interface NodeReconcilerDeps {
  client: KubeClient;
  nodes: Lister<Node>;
  byName: ReadonlyMap<string, SimNode>;
  clock: Clock;
}

/** Keeps each simulated Node registered, labelled and Ready; other nodes are left alone. */
export function nodeReconciler({ client, nodes, byName, clock }: NodeReconcilerDeps): Reconciler {
  return async (key, signal) => {
    const sim = byName.get(key);
    if (!sim) return;
    const now = rfc3339(clock.now());
    const current = nodes.get(key);
    if (!current) {
      const node: Node = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: sim.name, labels: nodeLabels(sim) },
        spec: {},
        status: desiredNodeStatus(sim, undefined, now),
      };
      try {
        await client.create(resources.nodes, node, { signal });
      } catch (err) {
        // Created meanwhile (cache lag): look again once the informer has it.
        if (!isAlreadyExists(err)) throw err;
        return { requeue: true };
      }
      // The status is checked again when the informer delivers the new node (a server may drop status on create).
      return;
    }
    const labels = nodeLabels(sim);
    const missing = Object.fromEntries(Object.entries(labels).filter(([k, v]) => current.metadata.labels?.[k] !== v));
    if (Object.keys(missing).length > 0) {
      // The informer's update queues the key again; the status is checked then, at the new resourceVersion.
      await client.patch(resources.nodes, key, undefined, { metadata: { labels: missing } }, 'merge', { signal });
      return;
    }
    const status = desiredNodeStatus(sim, current.status, now);
    if (!isDeepStrictEqual(status, current.status)) {
      // With the cached resourceVersion: a conflict throws and the key is retried from the fresh cache.
      await client.updateStatus(resources.nodes, { ...(structuredClone(current) as Node), status }, { signal });
    }
  };
}
