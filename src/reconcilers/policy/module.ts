import type { DeepReadonly } from '../../core/index.ts';
import { settingsSchema } from '../../core/settings.ts';
import { allKeys, EventChannel, newControllerManagedBy, type ControllerBuilder } from '../../controller/index.ts';
import { keyOf, type KubeObject, type Namespace, type NetworkPolicy, type Service } from '../../kube/api/index.ts';
import type { Lister, SharedInformer } from '../../kube/cache/index.ts';
import {
  familiesOf,
  familyOf,
  familySubnets,
  rangesOf,
  type ClusterNetwork,
  type ClusterNetworkSource,
  type GroupChanged,
  type LoadBalancerPeers,
  type ModuleContext,
  type PodGroupIds,
  type ReconcilerConfig,
} from '../network/index.ts';
import {
  describeGroup,
  groupId,
  groupKey,
  GroupStatus,
  groupSetNamespace,
  groupSetWanted,
  groupWanted,
  podSetKey,
  PolicyError,
  PolicyModel,
  PortGroups,
  SecurityGroupRecord,
  securityGroupRecordLoader,
  type PolicyNode,
  type PolicyPod,
} from './translation/index.ts';
import { SecurityGroupReconciler } from './group-reconciler.ts';
import { NetworkPolicyReconciler } from './policy-reconciler.ts';
import { PolicyTransitions, Widenings, type TransitionPort } from './transitions.ts';
import { groupVerification, type GroupDrifted } from './verify.ts';

/** Raven's record of its pod ports, as the translation reads it: a pod's address, and the groups its port carries. */
export interface PodPortsView {
  forPod(uid: string): { fixedIps: readonly { address: string }[]; securityGroups: readonly string[] } | undefined;
  all(): readonly TransitionPort[];
  /** Changes with every write to the record. */
  mark(): number;
}

/** A pod as the translation reads it: its address falls back to `status.podIP` while its port is not recorded. */
export type AddressedPod = PolicyPod & { status?: { podIP?: string | undefined } | undefined };

/** The caches and contracts the translation is computed over: the daemon's, or a test's. */
export interface PolicySources<P extends AddressedPod, N extends PolicyNode> {
  policies: Lister<NetworkPolicy>;
  namespaces: Lister<Namespace>;
  pods: Lister<P>;
  nodes: Lister<N>;
  /** Whether Raven wires this pod (its members are those pods). */
  wired: (pod: DeepReadonly<P>) => boolean;
  podPorts: PodPortsView;
  cluster: ClusterNetworkSource;
  subnets: ReconcilerConfig['subnets'];
  /** Per-namespace limits (`quotas.securityGroupsPerNamespace`). */
  quotas?: ReconcilerConfig['quotas'] | undefined;
  /** Services and whether Raven gives each a load balancer (egress to pods also allows their VIPs). */
  services?: { lister: Lister<Service>; balanced: (svc: DeepReadonly<Service>) => boolean } | undefined;
}

/**
 * The translation over Raven's caches: members are the pods Raven wires, a pod's address is its port's (Raven's
 * record), and what an isolated pod always accepts from load balancers is the service subnet (Octavia reaches members
 * through the router from it: docs/policy.md).
 */
export function policyModelOver<P extends AddressedPod, N extends PolicyNode>(c: PolicySources<P, N>): PolicyModel {
  return new PolicyModel({
    policies: c.policies,
    namespaces: c.namespaces,
    pods: c.pods,
    nodes: c.nodes,
    wired: (pod) => c.wired(pod as DeepReadonly<P>),
    address: (pod) =>
      c.podPorts.forPod(pod.metadata.uid ?? '')?.fixedIps[0]?.address ?? (pod as DeepReadonly<P>).status?.podIP,
    loadBalancerCidrs: () => {
      const subnet = c.cluster.current()?.serviceSubnet;
      return subnet ? familySubnets(subnet).map((s) => s.cidr) : [];
    },
    podFamilies: () => {
      // The shared subnet as Neutron has it (an existing one's family is known only there), else the configured ranges.
      const shared = c.cluster.current()?.podSubnet;
      const families = shared
        ? familiesOf(shared)
        : rangesOf(c.subnets.strategy === 'shared' ? c.subnets.shared : c.subnets.namespace).flatMap(
            (r) => familyOf(r) ?? [],
          );
      return families.length > 0 ? families : ['IPv4'];
    },
    balancedServices: c.services?.lister,
    balanced: c.services?.balanced,
    groupsPerNamespace: c.quotas?.securityGroupsPerNamespace,
  });
}

/** The translation's metrics. */
export interface PolicyMetrics {
  policyTranslated(seconds: number): void;
  membershipUpdated(): void;
  securityGroups(read: () => { groups: number; rules: number }): void;
}

export interface NetworkPolicyModuleInputs<P extends AddressedPod, N extends PolicyNode> {
  /** Indexed `byNamespace`. */
  policies: SharedInformer<NetworkPolicy>;
  namespaces: SharedInformer<Namespace>;
  /** Indexed `byNamespace` and `uid`. */
  pods: SharedInformer<P>;
  nodes: SharedInformer<N>;
  /** With Services translated: their cache (indexed `byNamespace`), and whether Raven gives each a load balancer. */
  services?: { informer: SharedInformer<Service>; balanced: (svc: DeepReadonly<Service>) => boolean } | undefined;
  wired: (pod: DeepReadonly<P>) => boolean;
  podPorts: PodPortsView;
  cluster: ClusterNetworkSource & { ready: EventChannel<ClusterNetwork> };
  metrics: PolicyMetrics;
}

/** What the NetworkPolicy module gives the pod module, the warm pools and the garbage collector. */
export interface NetworkPolicyModule<P extends AddressedPod> {
  /** The groups a pod's port must carry, and what the pod reconciler says back. */
  podGroups: {
    of(pod: DeepReadonly<P>): PodGroupIds;
    changed(podKey: string): void;
    gone(): void;
    mayDrop(portId: string, drop: readonly string[], keep: readonly string[]): { waitMs: number } | undefined;
    widened(portId: string): void;
  };
  /** The translation's triggers of the pod controller: a pod's groups may have changed. */
  watchPods(builder: ControllerBuilder<P & KubeObject>): void;
  /** What the warm pools take: each pod's set, whether a set is still wanted, and who made it. */
  pools: {
    podGroups: (pod: DeepReadonly<P>) => readonly string[] | undefined;
    /** Whether every group of a set (Neutron ids) is one the translation still wants (pools of others are drained). */
    groupsWanted: (ids: readonly string[]) => boolean;
    /** Security groups changed: a set's pools may be stale now. */
    changed: EventChannel<GroupChanged>;
    /** The namespace whose pod-set groups a set (Neutron ids) holds, if any: its policies made the set. */
    setNamespace: (ids: readonly string[]) => string | undefined;
    /** The translation's groups' names by Neutron id (the pool metric's labels). */
    groupNames: () => ReadonlyMap<string, string>;
  };
  /** The garbage collector's view: whether a group of the cluster (its `raven.uid`, its Neutron id) is still wanted. */
  groupWanted: (id: string, neutronId: string) => boolean;
  /** The check around each sweep that finds groups and rules changed in Neutron behind Raven's back. */
  verification: ReturnType<typeof groupVerification>;
  /** Raven's record of its groups holds a full list. */
  synced(): boolean;
  /** Who a pod's ingress policies admit on a port: its load balancers' listeners admit no more (service/). */
  loadBalancerPeers: LoadBalancerPeers;
  /** Raven's record of its security groups, read-only (the topology view). */
  groups(): { id: string; neutronId: string; name: string; rules: number }[];
  /**
   * The groups a policy's translation makes (the topology view): the set it selects (`target`, which holds its rules
   * with those of the set's other policies) and the sets its rules name (`peer`), each as the translation wants it
   * (what it is, how many rules) with its Neutron id once Raven's record holds it. None for a policy it cannot read.
   */
  policyGroups(policyKey: string): PolicyGroup[];
}

/** One of a policy's security groups, for people. */
export interface PolicyGroup {
  id: string;
  role: 'target' | 'peer';
  description: string;
  rules: number;
  neutronId?: string | undefined;
}

/** {@link NetworkPolicyModule.policyGroups} over the translation and the record. */
function policyGroupsOf(model: PolicyModel, record: SecurityGroupRecord, key: string): PolicyGroup[] {
  const compiled = model.compiled(key);
  if (!compiled || compiled instanceof PolicyError) return [];
  const target = podSetKey(compiled.target);
  const wanted = model.groups();
  return model.policyGroups(key).flatMap((id) => {
    const group = wanted.get(id);
    if (group?.spec.kind !== 'pods') return [];
    return [
      {
        id,
        role: podSetKey(group.spec.set) === target ? ('target' as const) : ('peer' as const),
        description: describeGroup(group.spec),
        rules: group.rules.length,
        neutronId: record.get(id)?.neutronId,
      },
    ];
  });
}

/**
 * The NetworkPolicy module: the translation over the caches, Raven's record of its security groups (loaded when it
 * leads), the security group controller (keyed by group) and the policy controller (Events on each policy), and
 * their metrics.
 */
export function setupNetworkPolicies<P extends AddressedPod, N extends PolicyNode>(
  ctx: ModuleContext,
  o: NetworkPolicyModuleInputs<P, N>,
): NetworkPolicyModule<P> {
  const { manager, config } = ctx;
  const { policies, namespaces, pods, nodes } = o;
  const model = policyModelOver({
    policies: policies.lister(),
    namespaces: namespaces.lister(),
    pods: pods.lister(),
    nodes: nodes.lister(),
    wired: o.wired,
    podPorts: o.podPorts,
    cluster: o.cluster,
    subnets: config.subnets,
    quotas: config.quotas,
    services: o.services && { lister: o.services.informer.lister(), balanced: o.services.balanced },
  });
  const record = new SecurityGroupRecord();
  const status = new GroupStatus();
  const loader = securityGroupRecordLoader({
    neutron: ctx.cloud.neutron,
    clusterId: config.clusterId,
    record,
    clock: ctx.clock,
    logger: ctx.logger.child({ component: 'security-group-record' }),
  });
  manager.add(loader);
  const portGroups = new PortGroups(model, record, config.securityGroups, status);
  const membershipChanged = new EventChannel<{ key: string }>('port-groups-changed');
  const drifted = new EventChannel<GroupDrifted>('security-group-drifted');

  const settings = config.policyTransitions ?? settingsSchema.shape.policyTransitions.parse({});
  // A widening matters until it has settled; kept twice as long, for a narrowing that looks just after.
  const portWidenings = new Widenings(ctx.clock, settings.settleSeconds * 2_000);
  const groupWidenings = new Widenings(ctx.clock, settings.settleSeconds * 2_000);
  const transitions = new PolicyTransitions({
    model,
    record,
    portGroups,
    ports: o.podPorts,
    podOf: (uid) => pods.lister().byIndex('uid', uid)[0],
    // What a pod's groups and its port's are computed from: one pass over the ports is kept while none changed.
    version: () =>
      [policies, namespaces, pods, nodes].map((i) => i.lastSyncResourceVersion()).join('|') +
      `|${o.podPorts.mark()}|${record.mark()}`,
    portWidenings,
    groupWidenings,
    clock: ctx.clock,
    settleMs: settings.settleSeconds * 1000,
    maxHoldMs: settings.maxHoldSeconds * 1000,
    logger: ctx.logger.child({ component: 'policy-transitions' }),
  });
  const groups = new SecurityGroupReconciler({
    cloud: ctx.cloud,
    config,
    model,
    record,
    status,
    transitions,
    widenings: groupWidenings,
    carried: (neutronId) => o.podPorts.all().some((p) => p.securityGroups.includes(neutronId)),
    ready: () => o.cluster.current() !== undefined,
    logger: ctx.logger.child({ reconciler: 'security-group' }),
  });
  const everyGroup = (): string[] => [...new Set([...model.groups().keys(), ...record.all().map((g) => g.id)])];
  // A group made: the groups whose rules name it can now make them.
  const referrers = (id: string): string[] =>
    [...model.groups().values()]
      .filter((g) => g.rules.some((r) => r.remoteGroup !== undefined && groupId(r.remoteGroup) === id))
      .map((g) => g.id);
  const groupController = newControllerManagedBy(manager)
    .forKeys({ name: 'security-group', list: everyGroup })
    .watchesChannel(loader.loaded, everyGroup)
    .watches(policies, everyGroup)
    .watches(namespaces, everyGroup)
    .watches(pods, (pod) => [...model.namedPortGroups(pod), ...model.serviceVipGroups(pod)])
    .watches(nodes, (node) => [groupId(groupKey({ kind: 'node', node: node.metadata.name ?? '' }))])
    // The service subnet (what the node groups let in) is known, or changed.
    .watchesChannel(o.cluster.ready, everyGroup)
    .watchesChannel(status.changed, (e) => (e.change === 'created' ? referrers(e.id) : []))
    .watchesChannel(drifted, (e) => [e.id]);
  // A Service's VIPs, ports or selector: the egress rules to its pods' sets.
  if (o.services) groupController.watches(o.services.informer, () => model.egressGroups());
  groupController.withOptions(ctx.controllerOptions(4)).complete(groups.reconcile);

  const reporter = new NetworkPolicyReconciler({
    policies: policies.lister(),
    pods: pods.lister(),
    model,
    record,
    status,
    portGroups,
    portGroupsOf: (pod) => o.podPorts.forPod(pod.metadata.uid ?? '')?.securityGroups,
    recorder: ctx.recorder,
    onTranslated: (seconds) => o.metrics.policyTranslated(seconds),
    clock: ctx.clock,
    logger: ctx.logger.child({ reconciler: 'network-policy' }),
  });
  newControllerManagedBy(manager)
    .named('network-policy')
    .for(policies)
    .watchesChannel(loader.loaded, allKeys(policies))
    .watchesChannel(status.changed, () => reporter.pending())
    .watchesChannel(membershipChanged, () => reporter.pending())
    .withOptions(ctx.controllerOptions(2))
    .complete(reporter.reconcile);

  o.metrics.securityGroups(() => ({
    groups: record.all().length,
    rules: record.all().reduce((n, g) => n + g.rules.size, 0),
  }));
  const podsInNamespace = (namespace: string): string[] => pods.lister().byIndex('byNamespace', namespace).map(keyOf);
  return {
    podGroups: {
      of: (pod) => portGroups.of(pod),
      changed: (key) => {
        o.metrics.membershipUpdated();
        membershipChanged.send({ key });
      },
      gone: () => loader.reload(),
      mayDrop: (portId, drop, keep) => transitions.portMayDrop(portId, drop, keep),
      widened: (portId) => portWidenings.widened(portId),
    },
    watchPods: (builder) =>
      builder
        // A policy's pods (before and after the change) and those of the sets its rules name: their groups may change.
        .watches(policies, (policy) => model.affectedPods(policy))
        // A namespace's labels move its pods in and out of namespaceSelector sets.
        .watches(namespaces, (ns) => podsInNamespace(ns.metadata.name ?? ''))
        // Its record loaded, or a group made: pods waiting for their groups go on.
        .watchesChannel(loader.loaded, allKeys(pods))
        .watchesChannel(status.changed, (e) => {
          const key = e.change === 'created' ? model.groups().get(e.id)?.key : undefined;
          return key && record.get(e.id) ? model.members(key) : [];
        }),
    pools: {
      podGroups: (pod) => {
        const ids = portGroups.of(pod);
        return 'ids' in ids ? ids.ids : undefined;
      },
      groupsWanted: groupSetWanted(model, record, config.securityGroups),
      changed: status.changed,
      setNamespace: groupSetNamespace(model, record),
      groupNames: () => new Map(record.all().map((g) => [g.neutronId, g.name])),
    },
    groupWanted: groupWanted(model, record),
    verification: groupVerification({ record, drifted, logger: ctx.logger.child({ component: 'gc' }) }),
    synced: () => record.synced(),
    loadBalancerPeers: (podKey, port, protocol) => {
      const pod = pods.lister().get(podKey);
      // A pod gone from the cache is no member: nothing to admit (its Service drops it with its endpoints).
      return pod ? model.loadBalancerPeers(pod, port, protocol) : { everyone: false, cidrs: [] };
    },
    groups: () => record.all().map((g) => ({ id: g.id, neutronId: g.neutronId, name: g.name, rules: g.rules.size })),
    policyGroups: (key) => policyGroupsOf(model, record, key),
  };
}
