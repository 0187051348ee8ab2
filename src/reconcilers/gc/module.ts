import type { Lister } from '../../kube/cache/index.ts';
import type { ClusterNetworkSource, ModuleContext } from '../network/index.ts';
import { GarbageCollector, ownersIn, type CollectorOptions, type GcReport, type Orphan } from './collector.ts';
import { GarbageCollectionLoop, type SweepCheck } from './loop.ts';

export interface GcMetrics {
  gcDeleted(orphan: Pick<Orphan, 'type' | 'ownerKind'>): void;
  gcRun(report: GcReport | undefined): void;
}

export interface GcModuleInputs {
  /** The owners' caches, each indexed by `uid`. */
  owners: Record<'pod' | 'namespace' | 'service', Lister<unknown>>;
  cluster: ClusterNetworkSource;
  intervalSeconds: number;
  /** `translations.services`: look for load balancers (off, the cloud may have no Octavia). */
  loadBalancers: boolean;
  /** The other modules' checks around each sweep (pod ports, security groups, load balancers gone). */
  checks: readonly SweepCheck[];
  /** With warm pools: whether a node exists, and which free ports are the pools' (see `CollectorOptions.pools`). */
  pools?: CollectorOptions['pools'];
  /** With the NetworkPolicy translation: whether it wants a group (absent: every group of the cluster is an orphan). */
  securityGroups?: { wanted: (id: string, neutronId: string) => boolean } | undefined;
  /** Also list the cluster's subnets and router interfaces (the namespace network verification reads them). */
  networks?: boolean;
  /** With nested mode: whether a trunk's Node exists (see `CollectorOptions.trunks`). */
  trunks?: CollectorOptions['trunks'];
  /** The sweep deleted a pod port (pods waiting on the quota or a full subnet may get one now). */
  podPortDeleted?: ((portId: string) => void) | undefined;
  metrics: GcMetrics;
}

/**
 * Garbage collection's module: the sweep (this cluster's resources whose owner is gone) and the leader-only loop
 * that runs it with the other modules' checks every `intervalSeconds`.
 */
export function setupGarbageCollection(
  ctx: ModuleContext,
  o: GcModuleInputs,
): { collector: GarbageCollector; loop: GarbageCollectionLoop } {
  const logger = ctx.logger.child({ component: 'gc' });
  const collector = new GarbageCollector({
    cloud: ctx.cloud,
    config: ctx.config,
    logger,
    clock: ctx.clock,
    ownerExists: ownersIn(o.owners),
    loadBalancers: o.loadBalancers,
    networks: o.networks,
    pools: o.pools,
    trunks: o.trunks,
    securityGroups: o.securityGroups,
    // Translation off: a port still in one of the cluster's groups is moved to the configured ones.
    releaseGroupsTo: o.securityGroups ? undefined : ctx.config.securityGroups,
    onDeleted: (orphan) => {
      o.metrics.gcDeleted(orphan);
      if (orphan.type === 'port' && orphan.ownerKind === 'pod') o.podPortDeleted?.(orphan.id);
    },
  });
  const loop = new GarbageCollectionLoop({
    collector,
    cluster: o.cluster,
    intervalMs: o.intervalSeconds * 1000,
    checks: o.checks,
    onRound: (report) => o.metrics.gcRun(report),
    clock: ctx.clock,
    logger,
  });
  ctx.manager.add(loop);
  return { collector, loop };
}
