import type { Clock, DeepReadonly } from '../../core/index.ts';
import type { LatestEvent } from '../../controller/index.ts';
import type { ObjectDetail, Problem, SubnetView, TopologySnapshot, TopologySource } from '../../dashboard/index.ts';
import { TOPOLOGY_VERSION } from '../../dashboard/index.ts';
import { keyOf, type Namespace, type NetworkPolicy, type Service } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { familyOf, familySubnets, type ClusterNetworkSource, type SubnetInfo } from '../network/index.ts';
import type { CachedPod, PodModuleView } from '../pod/index.ts';
import type { NetworkPolicyModule } from '../policy/index.ts';
import type { SeenLoadBalancer } from '../service/index.ts';

/** What the view composes: the shared caches and each module's read-only view. No client: it never calls out. */
export interface TopologyInputs {
  clusterId: string;
  subnetStrategy: string;
  externalNetworkId: string | undefined;
  cluster: ClusterNetworkSource;
  namespaces: Lister<Namespace>;
  pods: Lister<CachedPod>;
  services: Lister<Service>;
  policies?: Lister<NetworkPolicy> | undefined;
  /** The namespace module's record of each namespace's network. */
  networks: { all(): (SubnetInfo & { namespace: string })[] };
  podModule?: PodModuleView | undefined;
  serviceModule?: { loadBalancer(key: string): SeenLoadBalancer | undefined } | undefined;
  policyModule?: Pick<NetworkPolicyModule<CachedPod>, 'groups' | 'policyGroups'> | undefined;
  /** The Event recorder: each object's latest Event (a Warning is why it is stuck). */
  events: { latest(kind: string, namespace: string, name: string): LatestEvent | undefined };
  clock: Clock;
}

function subnets(info: SubnetInfo | undefined): SubnetView[] {
  if (!info) return [];
  return familySubnets(info).map((s) => ({
    subnetId: s.subnetId,
    networkId: info.networkId,
    cidr: s.cidr,
    family: familyOf(s.cidr) === 'IPv6' ? 6 : 4,
  }));
}

const byName = <T extends { metadata: { name?: string | undefined } }>(a: T, b: T): number =>
  (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** The OCCM options a Service carries. */
function lbOptions(svc: DeepReadonly<Service>): Record<string, string> {
  const all = svc.metadata.annotations ?? {};
  return Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith('loadbalancer.openstack.org/')));
}

/**
 * The live topology, composed from Raven's caches and its modules' records (no OpenStack or Kubernetes call): the
 * cluster network, each namespace with its network, pods (their ports), Services (their load balancers) and
 * policies, the security groups and the warm pools; an object whose latest Event is a Warning is stuck, with that
 * Event as the reason.
 */
export function topologySource(i: TopologyInputs): TopologySource {
  const problem = (kind: string, namespace: string, name: string): Problem | undefined => {
    const e = i.events.latest(kind, namespace, name);
    return e?.type === 'Warning'
      ? { reason: e.reason, message: e.message, at: new Date(e.at).toISOString() }
      : undefined;
  };

  function snapshot(): TopologySnapshot {
    const net = i.cluster.current();
    const networks = new Map(i.networks.all().map((n) => [n.namespace, n]));
    // A group's members: the pods whose port carries it (a free pool port carries its set's groups too: not counted).
    const members = new Map<string, number>();
    if (i.policyModule && i.podModule)
      for (const pod of i.pods.list())
        for (const g of i.podModule.portOf(pod.metadata.uid ?? '')?.port.securityGroups ?? [])
          members.set(g, (members.get(g) ?? 0) + 1);
    let stuck = 0;
    const count = <T extends { problem?: Problem | undefined }>(x: T): T => {
      if (x.problem) stuck++;
      return x;
    };
    const namespaces = [...i.namespaces.list()].sort(byName).map((ns) => {
      const name = ns.metadata.name ?? '';
      const network = networks.get(name);
      return count({
        name,
        uid: ns.metadata.uid ?? '',
        network: network && { networkId: network.networkId, subnets: subnets(network) },
        problem: problem('Namespace', '', name),
        pods: [...i.pods.byIndex('byNamespace', name)].sort(byName).map((pod) => {
          const seen = i.podModule?.portOf(pod.metadata.uid ?? '');
          const port = seen?.port;
          return count({
            name: pod.metadata.name ?? '',
            uid: pod.metadata.uid ?? '',
            node: pod.spec.nodeName,
            phase: pod.status.phase,
            port: port && {
              id: port.id,
              mac: port.mac,
              addresses: port.fixedIps.map((ip) => ip.address),
              networkId: port.networkId,
              active: port.active,
              host: port.hostId,
              securityGroups: [...port.securityGroups],
              warm: seen.warm,
              claim: seen.claimPending ? ('pending' as const) : undefined,
            },
            problem: problem('Pod', name, pod.metadata.name ?? ''),
          });
        }),
        services: [...i.services.byIndex('byNamespace', name)].sort(byName).map((svc) =>
          count({
            name: svc.metadata.name ?? '',
            uid: svc.metadata.uid ?? '',
            type: svc.spec?.type ?? 'ClusterIP',
            clusterIPs: [...(svc.spec?.clusterIPs ?? [])],
            sourceRanges: [...(svc.spec?.loadBalancerSourceRanges ?? [])],
            options: lbOptions(svc),
            loadBalancer: i.serviceModule?.loadBalancer(keyOf(svc)),
            problem: problem('Service', name, svc.metadata.name ?? ''),
          }),
        ),
        policies: [...(i.policies?.byIndex('byNamespace', name) ?? [])].sort(byName).map((p) =>
          count({
            name: p.metadata.name ?? '',
            uid: p.metadata.uid ?? '',
            policyTypes: [...(p.spec?.policyTypes ?? [])],
            groups: i.policyModule
              ?.policyGroups(keyOf(p))
              .map((g) => ({ ...g, members: g.neutronId ? (members.get(g.neutronId) ?? 0) : 0 })),
            problem: problem('NetworkPolicy', name, p.metadata.name ?? ''),
          }),
        ),
      });
    });
    return {
      version: TOPOLOGY_VERSION,
      generatedAt: new Date(i.clock.now()).toISOString(),
      cluster: {
        clusterId: i.clusterId,
        ready: net !== undefined,
        routerId: net?.routerId,
        externalNetworkId: i.externalNetworkId,
        podSubnets: subnets(net?.podSubnet),
        serviceSubnets: subnets(net?.serviceSubnet),
        subnetStrategy: i.subnetStrategy,
      },
      namespaces,
      securityGroups: (i.policyModule?.groups() ?? [])
        .map((g) => ({ ...g, members: members.get(g.neutronId) ?? 0 }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      pools: (i.podModule?.pools() ?? []).map((p) => ({
        ...p,
        subnetIds: [...p.subnetIds],
        securityGroups: [...p.securityGroups],
      })),
      stuck,
    };
  }

  function detail(kind: ObjectDetail['kind'], namespace: string, name: string): ObjectDetail | undefined {
    const key = namespace ? `${namespace}/${name}` : name;
    switch (kind) {
      case 'pod': {
        const pod = i.pods.get(key);
        return pod && { kind, kubernetes: pod, record: i.podModule?.portOf(pod.metadata.uid ?? '') ?? null };
      }
      case 'service': {
        const svc = i.services.get(key);
        return svc && { kind, kubernetes: svc, record: i.serviceModule?.loadBalancer(key) ?? null };
      }
      case 'namespace': {
        const ns = i.namespaces.get(name);
        return ns && { kind, kubernetes: ns, record: i.networks.all().find((n) => n.namespace === name) ?? null };
      }
      case 'networkpolicy': {
        const policy = i.policies?.get(key);
        return policy && { kind, kubernetes: policy, record: i.policyModule?.policyGroups(key) ?? null };
      }
    }
  }

  return { snapshot, detail };
}
