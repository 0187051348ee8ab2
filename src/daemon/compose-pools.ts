import type { Clock, DeepReadonly, Logger } from '../core/index.ts';
import { EventChannel, newControllerManagedBy, type BuilderOptions, type Manager } from '../controller/index.ts';
import type { SharedInformer } from '../kube/cache/index.ts';
import {
  PoolReconciler,
  PortClaimReconciler,
  poolInUse,
  type CachedNode,
  type CachedPod,
  type GroupChanged,
  type ClusterNetwork,
  type NamespaceNetworkChanged,
  type Cloud,
  type PendingClaims,
  type PodPortRecord,
  type PodPortRecordLoader,
  type PortGone,
  type PortPools,
  type ReconcilerConfig,
  type SubnetStrategy,
} from '../reconcilers/index.ts';
import type { Metrics } from './metrics.ts';

export interface WarmPoolsWiring {
  manager: Manager;
  warm: { pools: PortPools; claims: PendingClaims };
  nodes: SharedInformer<CachedNode>;
  pods: SharedInformer<CachedPod>;
  record: PodPortRecord;
  loader: PodPortRecordLoader;
  cloud: Cloud;
  rc: ReconcilerConfig;
  subnets: SubnetStrategy;
  portsGone: EventChannel<PortGone>;
  /** Pod subnets made, rebuilt or gone (namespace networks, the cluster network): pools of a gone one are drained. */
  namespaceNetworkChanged: EventChannel<NamespaceNetworkChanged>;
  clusterNetworkReady: EventChannel<ClusterNetwork>;
  /** Whether a pod with this uid exists and wants a port. */
  portWanted: (uid: string) => boolean;
  /**
   * With the NetworkPolicy translation: the groups a pod's port must carry (Neutron ids, sorted; undefined while
   * one is not made yet), and whether every group of a pool's set is still wanted (pools of a gone set are drained).
   */
  policies?: {
    podGroups: (pod: DeepReadonly<CachedPod>) => readonly string[] | undefined;
    groupsWanted: (ids: readonly string[]) => boolean;
    /** Security groups changed: a set's pools may be stale now (a group Raven is deleting waits for their ports). */
    changed: EventChannel<GroupChanged>;
    /** The namespace whose policies made a set (its free pool ports count against `quotas.poolPortsPerNamespace`). */
    setNamespace: (ids: readonly string[]) => string | undefined;
  };
  /** A namespace's pool-port share cut a refill short (its Warning Event). */
  onShareReached?: ((namespace: string, share: number) => void) | undefined;
  controllerOptions: (workers: number) => BuilderOptions;
  workers: number;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
}

/**
 * The warm port pools' part of the composition root: the pools are recomputed from the record at every load and
 * sweep; a controller per node keeps them within their sizes; a controller per pod writes each pool port's claim to
 * Neutron (off the pod's path); and their gauges.
 */
export function wireWarmPools(w: WarmPoolsWiring): void {
  const { warm, record, pods, nodes, manager } = w;
  const graceMs = w.rc.gc.graceSeconds * 1000;
  record.onReplaced = () => {
    // A list that began before a claim was written shows the port as it was: the claim is put back over it.
    for (const claim of warm.claims.all()) record.put(claim.reserved);
    const claimed = (portId: string) => warm.claims.get(portId) !== undefined;
    warm.pools.rebuild(record.all(), { portWanted: w.portWanted, claimed, graceMs });
  };
  const inUse = poolInUse(pods.lister(), w.policies?.podGroups);
  const pools = new PoolReconciler({
    cloud: w.cloud,
    config: w.rc,
    nodes: nodes.lister(),
    pools: warm.pools,
    record,
    subnets: w.subnets,
    inUse,
    groupsWanted: w.policies?.groupsWanted,
    setNamespace: w.policies?.setNamespace,
    onShareReached: w.onShareReached,
    onRefill: (seconds) => w.metrics.raven.poolRefilled(seconds),
    clock: w.clock,
    logger: w.logger.child({ reconciler: 'port-pool' }),
  });
  const everyPoolNode = (): string[] => warm.pools.nodes();
  newControllerManagedBy(manager)
    .named('port-pool')
    .for(nodes)
    .watchesChannel(warm.pools.activity, (e) => [e.node])
    .watchesChannel(w.loader.loaded, everyPoolNode)
    .watchesChannel(w.namespaceNetworkChanged, everyPoolNode)
    .watchesChannel(w.clusterNetworkReady, everyPoolNode)
    .watchesChannel(w.policies?.changed ?? new EventChannel<GroupChanged>('unused'), (e) =>
      e.change === 'in-use' || e.change === 'deleted' ? everyPoolNode() : [],
    )
    // A node's pools are one key: never two refills of a node at once; a few nodes at a time.
    .withOptions(w.controllerOptions(4))
    .complete(pools.reconcile);
  const claims = new PortClaimReconciler({
    cloud: w.cloud,
    pods: pods.lister(),
    record,
    claims: warm.claims,
    portsGone: w.portsGone,
    podExists: (uid) => pods.lister().byIndex('uid', uid).length > 0,
    logger: w.logger.child({ reconciler: 'port-claim' }),
  });
  newControllerManagedBy(manager)
    .named('port-claim')
    .for(pods)
    .watchesChannel(warm.claims.claimed, (e) => [e.key])
    .withOptions(w.controllerOptions(w.workers))
    .complete(claims.reconcile);
  w.metrics.raven.pools(() => ({ sizes: warm.pools.sizes(), ...warm.pools.stats }));
}
