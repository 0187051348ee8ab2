/**
 * A truth-table world as the caches Raven's {@link PolicyModel} reads, and the model's answer cast as Neutron's view
 * (groups by the translation's id, rules with remote groups by id, each pod's port with its groups): what Neutron
 * would hold once the reconcilers converged, without a cloud.
 */
import type { DeepReadonly } from '../../src/core/index.ts';
import type { Namespace, NetworkPolicy } from '../../src/kube/api/index.ts';
import type { Lister } from '../../src/kube/cache/index.ts';
import { groupId, PolicyModel, type PolicyNode, type PolicyPod } from '../../src/reconcilers/index.ts';
import type { NeutronView, World } from './netpol.ts';

/** A lister over a mutable list; `byIndex('byNamespace', ns)` as the informers' index. */
export class ListLister<T extends { metadata: { namespace?: string; name?: string } }> implements Lister<T> {
  items: T[];
  constructor(items: T[]) {
    this.items = items;
  }
  get(key: string): DeepReadonly<T> | undefined {
    return this.items.find(
      (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name) === key,
    ) as DeepReadonly<T> | undefined;
  }
  list(): DeepReadonly<T>[] {
    return this.items as DeepReadonly<T>[];
  }
  byIndex(name: string, value: string): DeepReadonly<T>[] {
    if (name !== 'byNamespace') throw new Error(`no index ${name}`);
    return this.items.filter((o) => o.metadata.namespace === value) as DeepReadonly<T>[];
  }
}

let version = 0;
const rv = (): string => String(++version);

/** The world as cache objects (each with a fresh resourceVersion, as a change would give it). */
export function cacheObjects(world: World): {
  namespaces: Namespace[];
  pods: PolicyPod[];
  nodes: PolicyNode[];
  policies: NetworkPolicy[];
} {
  return {
    namespaces: world.namespaces.map((n) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: n.name, uid: `ns-${n.name}`, labels: { ...n.labels }, resourceVersion: rv() },
    })),
    pods: world.pods.map((p) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: p.namespace,
        name: p.name,
        uid: `pod-${p.namespace}-${p.name}`,
        labels: { ...p.labels },
        resourceVersion: rv(),
      },
      spec: { nodeName: p.node, containers: [{ ports: p.ports.map((c) => ({ ...c })) }] },
    })),
    nodes: world.nodes.map((n) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: n.name, uid: `node-${n.name}`, resourceVersion: rv() },
      status: { addresses: [{ type: 'InternalIP', address: n.ip }] },
    })),
    policies: world.policies.map((p) => ({ ...p, metadata: { ...p.metadata, resourceVersion: rv() } })),
  };
}

/** A model over listers of the world; `load(world)` replaces what the listers hold (the caches after changes). */
export function modelOf(world: World, loadBalancerCidrs: string[] = []) {
  const listers = {
    namespaces: new ListLister<Namespace>([]),
    pods: new ListLister<PolicyPod>([]),
    nodes: new ListLister<PolicyNode>([]),
    policies: new ListLister<NetworkPolicy>([]),
  };
  const ips = new Map<string, string>();
  const load = (w: World): void => {
    const objects = cacheObjects(w);
    listers.namespaces.items = objects.namespaces;
    listers.pods.items = objects.pods;
    listers.nodes.items = objects.nodes;
    listers.policies.items = objects.policies;
    ips.clear();
    for (const p of w.pods) ips.set(`pod-${p.namespace}-${p.name}`, p.ip);
  };
  load(world);
  const model = new PolicyModel({
    ...listers,
    wired: () => true,
    address: (pod) => ips.get(pod.metadata.uid ?? ''),
    loadBalancerCidrs: () => loadBalancerCidrs,
    podFamilies: () => [...new Set([...ips.values()].map((ip) => (ip.includes(':') ? 'IPv6' : 'IPv4')))],
  });
  return { model, listers, load };
}

/** What Neutron would hold under the model: every desired group's rules, every pod's port with its groups. */
export function viewOf(
  model: PolicyModel,
  pods: readonly DeepReadonly<PolicyPod>[],
  ipOf: (pod: DeepReadonly<PolicyPod>) => string,
): {
  view: NeutronView;
  groupsOf: Map<string, string[]>;
} {
  const rules = new Map<string, NeutronView extends { rules: Map<string, infer R> } ? R : never>();
  for (const group of model.groups().values())
    rules.set(
      group.id,
      group.rules.map((r) => ({
        direction: r.direction,
        ethertype: r.ethertype,
        protocol: r.protocol,
        port_range_min: r.min,
        port_range_max: r.max,
        remote_ip_prefix: r.remotePrefix ?? null,
        remote_group_id: r.remoteGroup ? groupId(r.remoteGroup) : null,
      })),
    );
  const groupsOf = new Map<string, string[]>();
  const ports = pods.map((pod) => {
    const groups = model.podGroups(pod).map(groupId);
    groupsOf.set(`${pod.metadata.namespace}/${pod.metadata.name}`, groups);
    return { ip: ipOf(pod), groups };
  });
  return { view: { rules, ports }, groupsOf };
}
