import type { Clock, DeepReadonly, Logger } from '../core/index.ts';
import {
  allKeys,
  EventChannel,
  newControllerManagedBy,
  type BuilderOptions,
  type EventRecorder,
  type Manager,
} from '../controller/index.ts';
import type { NetworkPolicy, Namespace, Service } from '../kube/api/index.ts';
import type { Lister, SharedInformer } from '../kube/cache/index.ts';
import {
  groupId,
  groupKey,
  GroupStatus,
  NetworkPolicyReconciler,
  PolicyModel,
  PortGroups,
  SecurityGroupReconciler,
  SecurityGroupRecord,
  SecurityGroupRecordLoader,
  groupVerification,
  groupSetNamespace,
  groupSetWanted,
  groupWanted,
  wantsPort,
  familiesOf,
  familyOf,
  familySubnets,
  rangesOf,
  type CachedNode,
  type CachedPod,
  type Cloud,
  type ClusterNetwork,
  type ClusterNetworkSource,
  type GroupDrifted,
  type PodPortRecord,
  type PodSecurityGroups,
  type ReconcilerConfig,
} from '../reconcilers/index.ts';
import type { Metrics } from './metrics.ts';

export interface NetworkPolicyWiring {
  manager: Manager;
  policies: SharedInformer<NetworkPolicy>;
  namespaces: SharedInformer<Namespace>;
  pods: SharedInformer<CachedPod>;
  nodes: SharedInformer<CachedNode>;
  /** With Services translated: their cache, and whether Raven gives each a load balancer. */
  services?: { informer: SharedInformer<Service>; balanced: (svc: DeepReadonly<Service>) => boolean } | undefined;
  cloud: Cloud;
  rc: ReconcilerConfig;
  cluster: ClusterNetworkSource;
  clusterNetworkReady: EventChannel<ClusterNetwork>;
  /** Raven's record of its pod ports: a pod's address, and the groups its port carries. */
  podPorts: PodPortRecord;
  recorder: EventRecorder;
  controllerOptions: (workers: number) => BuilderOptions;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
}

/** What the pod side takes from the NetworkPolicy translation. */
export interface NetworkPolicyParts {
  model: PolicyModel;
  record: SecurityGroupRecord;
  status: GroupStatus;
  loader: SecurityGroupRecordLoader;
  /** The pod reconciler's view: each port's groups. */
  podGroups: PodSecurityGroups;
  /** Whether every group of a set (Neutron ids) is one the translation still wants (pools of others are drained). */
  groupsWanted: (ids: readonly string[]) => boolean;
  /** The namespace whose pod-set groups a set of groups (Neutron ids) holds, if any: its policies made the set. */
  setNamespace: (ids: readonly string[]) => string | undefined;
  /** The garbage collector's view: whether a group of the cluster (its `raven.uid`, its Neutron id) is still wanted. */
  groupWanted: (id: string, neutronId: string) => boolean;
  /** The check around each sweep that finds groups and rules changed in Neutron behind Raven's back. */
  verification: ReturnType<typeof groupVerification>;
}

/**
 * The translation over Raven's caches (the daemon's, or `raven plan`'s and `raven gc`'s): members are the pods Raven
 * wires, a pod's address is its port's (Raven's record), and what an isolated pod always accepts from load balancers
 * is the service subnet (Octavia reaches members through the router from it: docs/policy.md).
 */
export function policyModelOver(c: {
  policies: Lister<NetworkPolicy>;
  namespaces: Lister<Namespace>;
  pods: Lister<CachedPod>;
  nodes: Lister<CachedNode>;
  podPorts: PodPortRecord;
  cluster: ClusterNetworkSource;
  subnets: ReconcilerConfig['subnets'];
  /** Per-namespace limits (`quotas.securityGroupsPerNamespace`). */
  quotas?: ReconcilerConfig['quotas'];
  /** Services and whether Raven gives each a load balancer (egress to pods also allows their VIPs). */
  services?: { lister: Lister<Service>; balanced: (svc: DeepReadonly<Service>) => boolean } | undefined;
}): PolicyModel {
  return new PolicyModel({
    policies: c.policies,
    namespaces: c.namespaces,
    pods: c.pods,
    nodes: c.nodes,
    wired: (pod) => wantsPort(pod as DeepReadonly<CachedPod>),
    address: (pod) =>
      c.podPorts.forPod(pod.metadata.uid ?? '')?.fixedIps[0]?.address ?? (pod as DeepReadonly<CachedPod>).status?.podIP,
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

/**
 * The NetworkPolicy translation's part of the composition root: the model over the caches, Raven's record of its
 * security groups (loaded when it leads), the security group controller (keyed by group) and the policy controller
 * (Events on each policy), and their metrics. The pod controller's own wiring takes {@link NetworkPolicyParts}.
 */
export function wireNetworkPolicies(w: NetworkPolicyWiring): NetworkPolicyParts {
  const { manager, policies, namespaces, pods, nodes, podPorts, rc } = w;
  const model = policyModelOver({
    policies: policies.lister(),
    namespaces: namespaces.lister(),
    pods: pods.lister(),
    nodes: nodes.lister(),
    podPorts,
    cluster: w.cluster,
    subnets: rc.subnets,
    quotas: rc.quotas,
    services: w.services && { lister: w.services.informer.lister(), balanced: w.services.balanced },
  });
  const record = new SecurityGroupRecord();
  const status = new GroupStatus();
  const loader = new SecurityGroupRecordLoader({
    neutron: w.cloud.neutron,
    clusterId: rc.clusterId,
    record,
    clock: w.clock,
    logger: w.logger.child({ component: 'security-group-record' }),
  });
  manager.add(loader);
  const portGroups = new PortGroups(model, record, rc.securityGroups, status);
  const membershipChanged = new EventChannel<{ key: string }>('port-groups-changed');
  const drifted = new EventChannel<GroupDrifted>('security-group-drifted');

  const groups = new SecurityGroupReconciler({
    cloud: w.cloud,
    config: rc,
    model,
    record,
    status,
    ready: () => w.cluster.current() !== undefined,
    logger: w.logger.child({ reconciler: 'security-group' }),
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
    .watchesChannel(w.clusterNetworkReady, everyGroup)
    .watchesChannel(status.changed, (e) => (e.change === 'created' ? referrers(e.id) : []))
    .watchesChannel(drifted, (e) => [e.id]);
  // A Service's VIPs, ports or selector: the egress rules to its pods' sets.
  if (w.services) groupController.watches(w.services.informer, () => model.egressGroups());
  groupController.withOptions(w.controllerOptions(4)).complete(groups.reconcile);

  const reporter = new NetworkPolicyReconciler({
    policies: policies.lister(),
    pods: pods.lister(),
    model,
    record,
    status,
    portGroups,
    portGroupsOf: (pod) => podPorts.forPod(pod.metadata.uid ?? '')?.securityGroups,
    recorder: w.recorder,
    onTranslated: (seconds) => w.metrics.raven.policyTranslated(seconds),
    clock: w.clock,
    logger: w.logger.child({ reconciler: 'network-policy' }),
  });
  newControllerManagedBy(manager)
    .named('network-policy')
    .for(policies)
    .watchesChannel(loader.loaded, allKeys(policies))
    .watchesChannel(status.changed, () => reporter.pending())
    .watchesChannel(membershipChanged, () => reporter.pending())
    .withOptions(w.controllerOptions(2))
    .complete(reporter.reconcile);

  w.metrics.raven.securityGroups(() => ({
    groups: record.all().length,
    rules: record.all().reduce((n, g) => n + g.rules.size, 0),
  }));
  return {
    model,
    record,
    status,
    loader,
    podGroups: {
      of: (pod) => portGroups.of(pod),
      changed: (key) => {
        w.metrics.raven.membershipUpdated();
        membershipChanged.send({ key });
      },
      gone: () => loader.reload(),
    },
    groupsWanted: groupSetWanted(model, record, rc.securityGroups),
    setNamespace: groupSetNamespace(model, record),
    groupWanted: groupWanted(model, record),
    verification: groupVerification({ record, drifted, logger: w.logger.child({ component: 'gc' }) }),
  };
}
