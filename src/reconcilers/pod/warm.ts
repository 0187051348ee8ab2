import type { DeepReadonly } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import { newControllerManagedBy } from '../../controller/index.ts';
import { keyOf } from '../../kube/api/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import type { NeutronClient } from '../../openstack/index.ts';
import type {
  ClusterNetwork,
  GroupChanged,
  ModuleContext,
  NamespaceNetworkChanged,
  SubnetStrategy,
} from '../network/index.ts';
import { resourceName } from '../network/index.ts';
import { PendingClaims, PortClaimReconciler } from './claims.ts';
import { nodeOfPort, type NestedPods } from './nested.ts';
import { PoolReconciler, type PoolTrunks } from './pool-reconciler.ts';
import { PortPools, type PoolPlace } from './pools.ts';
import type { PodPorts } from './ports.ts';
import { PortRefresh } from './refresh.ts';
import type { CachedNode, CachedPod } from './trim.ts';
import type { PortGone } from './verify.ts';
import { busiestNodes, poolInUse, wantsPort } from './wiring.ts';

/** What the warm pools take from the NetworkPolicy translation: each pod's set, and which sets are still wanted. */
export interface PoolPolicies {
  /** The groups a pod's port must carry (Neutron ids, sorted; undefined while one is not made yet). */
  podGroups: (pod: DeepReadonly<CachedPod>) => readonly string[] | undefined;
  /** Whether every group of a pool's set is still wanted (pools of a gone set are drained). */
  groupsWanted: (ids: readonly string[]) => boolean;
  /** Security groups changed: a set's pools may be stale now (a group Raven is deleting waits for their ports). */
  changed: EventChannel<GroupChanged>;
  /** The namespace whose policies made a set (its free pool ports count against `quotas.poolPortsPerNamespace`). */
  setNamespace: (ids: readonly string[]) => string | undefined;
  /** A group's name (by Neutron id) when it is one of the translation's; for the pool metric's labels. */
  groupNames?: () => ReadonlyMap<string, string>;
}

/** One warm pool's free ports, labelled for a person (`raven_port_pool_size`). */
export interface PoolSizeSample {
  node: string;
  /** The namespace whose subnet it is on or whose policies made its set; `shared`: the cluster's shared subnet. */
  namespace: string;
  /** Its group set by name (the cluster's `raven/<id>/` left out), comma-separated; ids where no name is known. */
  groups: string;
  free: number;
}

export interface PoolMetrics {
  poolRefilled(seconds: number): void;
  pools(read: () => { sizes: PoolSizeSample[]; hits: number; misses: number }): void;
}

export interface WarmPoolsInputs {
  nodes: SharedInformer<CachedNode>;
  pods: SharedInformer<CachedPod>;
  ports: PodPorts;
  /** The record's loader: its `loaded` wakes every node's pools. */
  loader: { loaded: EventChannel<{ count: number }> };
  subnets: SubnetStrategy;
  portsGone: EventChannel<PortGone>;
  /** Pod subnets made, rebuilt or gone (namespace networks, the cluster network): pools of a gone one are drained. */
  namespaceNetworkChanged: EventChannel<NamespaceNetworkChanged>;
  clusterNetworkReady: EventChannel<ClusterNetwork>;
  /** Whether a pod with this uid exists and wants a port. */
  portWanted: (uid: string) => boolean;
  /** With signed VIFs: whether a live pod's own signed VIF names the port (`FreeRule.signedFor`). */
  signedFor?: ((portId: string) => boolean) | undefined;
  policies?: PoolPolicies | undefined;
  /** A namespace's pool-port share cut a refill short (its Warning Event). */
  onShareReached?: ((namespace: string, share: number) => void) | undefined;
  /** Nested mode: VM nodes' trunks, whose pools hold subports (docs/pools.md, "Subport pools"). */
  nested?: NestedPods | undefined;
  workers: number;
  metrics: PoolMetrics;
}

/** The pools and the claims of the ports taken from them: what the pod reconciler takes a warm port from. */
export interface Warm {
  pools: PortPools;
  claims: PendingClaims;
  /**
   * Whether a free pod port is the pools' to keep or delete, never the garbage collector's: one a pod is being given
   * (its claim pending), or one in a pool the pool reconciler decides on (`PoolReconciler.owns`).
   */
  owns: (portId: string) => boolean;
}

/**
 * The warm port pools, wired: the pools are recomputed from the record at every load and sweep; a controller per node
 * keeps them within their sizes; a controller per pod writes each pool port's claim to Neutron (off the pod's path);
 * and their gauges.
 */
export function setupWarmPools(ctx: ModuleContext, w: WarmPoolsInputs): Warm {
  const { ports, pods, nodes } = w;
  // Without the translation and configured groups, every port gets the project's default group: groups key no pool.
  const anyGroups = !ctx.config.networkPolicies && ctx.config.securityGroups.length === 0;
  const { demandWindowSeconds, trimIdleSeconds, prefillNodes } = ctx.config.portPools;
  const demand = { windowMs: demandWindowSeconds * 1000, idleMs: trimIdleSeconds * 1000 };
  const warm: Omit<Warm, 'owns'> = {
    pools: new PortPools({ anyGroups, demand, nodeOf: (port) => nodeOfPort(port, w.nested) }, ctx.clock),
    claims: new PendingClaims(),
  };
  const graceMs = ctx.config.gc.graceSeconds * 1000;
  ports.onReplaced = () => {
    // A list that began before a claim was written shows the port as it was: the claim is put back over it.
    for (const claim of warm.claims.all()) ports.reserve(claim.reserved);
    const claimed = (portId: string) => warm.claims.get(portId) !== undefined;
    // The names the pods that want a port give the ports their cold path makes (a VM's subport is unclaimed until
    // its add to the trunk is answered: by its name it is the pod's, not a pool's).
    const names = new Set(
      pods
        .lister()
        .list()
        .filter(wantsPort)
        .map((pod) => resourceName(ctx.config.clusterId, pod.metadata.namespace ?? '', pod.metadata.name ?? '')),
    );
    warm.pools.rebuild(ports.record.all(), {
      portWanted: w.portWanted,
      claimed,
      graceMs,
      signedFor: w.signedFor,
      named: (name) => names.has(name),
    });
  };
  const inUse = poolInUse(pods.lister(), w.policies?.podGroups);
  const pools = new PoolReconciler({
    cloud: ctx.cloud,
    config: ctx.config,
    nodes: nodes.lister(),
    pools: warm.pools,
    ports,
    subnets: w.subnets,
    inUse,
    groupsWanted: w.policies?.groupsWanted,
    setNamespace: w.policies?.setNamespace,
    onShareReached: w.onShareReached,
    onRefill: (seconds) => w.metrics.poolRefilled(seconds),
    nested: w.nested && poolTrunks(w.nested, ctx.cloud.neutron),
    clock: ctx.clock,
    logger: ctx.logger.child({ reconciler: 'port-pool' }),
  });
  const everyPoolNode = (): string[] => warm.pools.nodes();
  /**
   * A namespace's network just made: its pools are made (empty, so the decision fills them to `min`) on the nodes that
   * run the most pods with a port, `prefillNodes` at most — where its pods are likeliest to land. Not with the
   * NetworkPolicy translation: a pod's group set, which keys its pool, is known only from its pods.
   */
  const prefill = (e: NamespaceNetworkChanged): string[] => {
    const subnet = e.made && !w.policies && prefillNodes > 0 ? w.subnets.subnetFor(e.namespace) : undefined;
    if (!subnet) return [];
    const groups = anyGroups ? [] : [...ctx.config.securityGroups].sort();
    const chosen = busiestNodes(
      pods.lister().list(),
      prefillNodes,
      (name) => nodes.lister().get(name) !== undefined && w.nested?.nodeOf(name) !== 'pending',
    );
    for (const node of chosen) warm.pools.prepare(node, subnet, groups);
    return chosen;
  };
  const builder = newControllerManagedBy(ctx.manager)
    .named('port-pool')
    .for(nodes)
    .watchesChannel(warm.pools.activity, (e) => [e.node])
    .watchesChannel(w.loader.loaded, everyPoolNode)
    .watchesChannel(w.namespaceNetworkChanged, (e) => [...new Set([...everyPoolNode(), ...prefill(e)])])
    .watchesChannel(w.clusterNetworkReady, everyPoolNode);
  // A VM's trunk known, changed or forgotten: its subport pools (and those found before it was) are looked at.
  if (w.nested) builder.watchesChannel(w.nested.nodes.changed, (e) => [e.node]);
  if (w.policies)
    builder.watchesChannel(w.policies.changed, (e) =>
      e.change === 'in-use' || e.change === 'deleted' ? everyPoolNode() : [],
    );
  // A node's pools are one key: never two refills of a node at once; a few nodes at a time.
  builder.withOptions(ctx.controllerOptions(4)).complete(pools.reconcile);
  // Ports given back are read again before the next pod takes them, so its claim is one update (refresh.ts).
  const refresh = new PortRefresh({
    cloud: ctx.cloud,
    pools: warm.pools,
    ports,
    portWanted: w.portWanted,
    clock: ctx.clock,
  });
  const claims = new PortClaimReconciler({
    cloud: ctx.cloud,
    pods: pods.lister(),
    ports,
    claims: warm.claims,
    portsGone: w.portsGone,
    podExists: (uid) => pods.lister().byIndex('uid', uid).length > 0,
    stale: (portId) => warm.pools.isStale(portId),
    readStale: (port, signal) => refresh.read(port, signal),
    logger: ctx.logger.child({ reconciler: 'port-claim' }),
  });
  // Keyed by the pods of pending claims, not by every pod: a pod's other changes (its VIF written, its status) are
  // none of the claim's business, so a warm pod costs one claim reconcile, not one per pod event.
  const claimedPods = (): string[] =>
    warm.claims.all().flatMap((claim) => pods.lister().byIndex('uid', claim.uid).map(keyOf));
  newControllerManagedBy(ctx.manager)
    .forKeys({ name: 'port-claim', list: claimedPods })
    .watchesChannel(warm.claims.claimed, (e) => [e.key])
    .withOptions(ctx.controllerOptions(w.workers))
    .complete(claims.reconcile);
  newControllerManagedBy(ctx.manager)
    .forKeys({ name: 'port-refresh', list: everyPoolNode })
    .watchesChannel(warm.pools.activity, (e) => [e.node])
    .withOptions(ctx.controllerOptions(2))
    .complete(refresh.reconcile);
  w.metrics.pools(() => ({ sizes: poolSamples(warm.pools.sizes(), w, ctx.config.clusterId), ...warm.pools.stats }));
  return {
    ...warm,
    owns: (portId) =>
      warm.claims.get(portId) !== undefined || pools.owns(portId) || subportKept(portId, ports, nodes, w.nested),
  };
}

/**
 * Nested mode: whether a free port is kept from the garbage collector as a VM's — a subport of a live VM's trunk (its
 * pool's, trimmed by the pool reconciler), or one bound to no host while a VM's trunk is not read yet (Raven starting:
 * it may be a pool's subport, not known as one yet).
 */
function subportKept(
  portId: string,
  ports: PodPorts,
  nodes: SharedInformer<CachedNode>,
  nested: NestedPods | undefined,
): boolean {
  if (!nested || (ports.record.get(portId)?.hostId ?? '') !== '') return false;
  if (nodeOfPort({ id: portId, hostId: '' }, nested) !== '') return true;
  return nodes
    .lister()
    .list()
    .some((node) => nested.nodeOf(node.metadata.name) === 'pending');
}

/** A VM node's trunk for its pools: its subports' adds and removes through the one `TrunkSubports`. */
function poolTrunks(nested: NestedPods, neutron: NeutronClient): PoolTrunks {
  return {
    trunkOf: (node) => nested.nodeOf(node),
    attach: (trunkId, portId, signal) => nested.subports.attach(neutron, trunkId, portId, signal),
    attachAll: (trunkId, portIds, signal) => nested.subports.attachAll(neutron, trunkId, portIds, signal),
    detach: (portId, signal) => nested.subports.detach(neutron, portId, signal),
  };
}

/**
 * The pools as the metric labels them: node, namespace, group names. As many samples as pools (bounded by nodes ×
 * subnets × group sets, which Raven trims and drains); two pools that label alike (a namespace's two group sets with
 * one name each cannot) are summed.
 */
function poolSamples(
  pools: readonly { place: PoolPlace; free: number }[],
  w: Pick<WarmPoolsInputs, 'subnets' | 'policies'>,
  clusterId: string,
): PoolSizeSample[] {
  const names = w.policies?.groupNames?.() ?? new Map<string, string>();
  const prefix = `raven/${clusterId}/`;
  const samples = new Map<string, PoolSizeSample>();
  for (const { place, free } of pools) {
    const owner = place.subnetIds.map((id) => w.subnets.ownerOf(id)).find((o) => typeof o === 'object');
    const namespace =
      (typeof owner === 'object' ? owner.namespace : undefined) ??
      w.policies?.setNamespace(place.securityGroups) ??
      'shared';
    const groups = place.securityGroups
      .map((id) => {
        const name = names.get(id);
        return name === undefined ? id : name.startsWith(prefix) ? name.slice(prefix.length) : name;
      })
      .join(',');
    const key = `${place.node}\n${namespace}\n${groups}`;
    const sample = samples.get(key);
    if (sample) sample.free += free;
    else samples.set(key, { node: place.node, namespace, groups, free });
  }
  return [...samples.values()];
}
