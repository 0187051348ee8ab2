import type { DeepReadonly } from '../../core/index.ts';
import { allKeys, EventChannel, newControllerManagedBy, type ControllerBuilder } from '../../controller/index.ts';
import { keyOf, objectReference, type Namespace } from '../../kube/api/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import type { Port } from '../../openstack/index.ts';
import type {
  ClusterNetwork,
  ClusterNetworkSource,
  ModuleContext,
  NamespaceNetworkChanged,
  PodGroupIds,
  RecordLoader,
  SubnetStrategy,
} from '../network/index.ts';
import type { NestedPods } from './nested.ts';
import { networkReadySeconds } from './network-ready.ts';
import { PodPortRecord, podPortRecordLoader } from './port-record.ts';
import { PodPorts } from './ports.ts';
import { PodReconciler, type PortFreed } from './reconciler.ts';
import type { CachedNode, CachedPod } from './trim.ts';
import { portVerification, type PortGone } from './verify.ts';
import { podModuleView, type PodModuleView } from './view.ts';
import { setupWarmPools, type PoolMetrics, type PoolPolicies } from './warm.ts';
import { SIGNED_VIF_INDEX, signedVifIndexers, UNWIRED_INDEX, unwiredPodIndexers, wantsPort } from './wiring.ts';

/**
 * Raven's record of its pod ports (filled by its loader's paginated list when Raven leads, and by every sweep), read by
 * the NetworkPolicy translation (a pod's address, its port's groups) and written by the pod module only.
 */
export function setupPodPorts(ctx: ModuleContext): { ports: PodPorts; loader: RecordLoader<Port> } {
  const ports = new PodPorts(ctx.cloud.neutron, new PodPortRecord());
  const loader = podPortRecordLoader({
    neutron: ctx.cloud.neutron,
    clusterId: ctx.config.clusterId,
    ports,
    clock: ctx.clock,
    logger: ctx.logger.child({ component: 'pod-port-record' }),
  });
  ctx.manager.add(loader);
  return { ports, loader };
}

/** What the pod module takes from the NetworkPolicy translation. */
export interface PodPolicies {
  podGroups: {
    of(pod: DeepReadonly<CachedPod>): PodGroupIds;
    changed(podKey: string): void;
    gone(): void;
    /** Make before break: whether a port may drop groups now (see `PodSecurityGroups.mayDrop`). */
    mayDrop(portId: string, drop: readonly string[], keep: readonly string[]): { waitMs: number } | undefined;
    widened(portId: string): void;
  };
  watchPods(builder: ControllerBuilder<CachedPod>): void;
  pools: PoolPolicies;
}

export interface PodMetrics extends PoolMetrics {
  podNetworkReady(seconds: number): void;
}

export interface PodModuleInputs {
  /** Indexed by `uid`, `byNamespace` and `byNode`. */
  pods: SharedInformer<CachedPod>;
  namespaces: SharedInformer<Namespace>;
  /** With warm pools on: the nodes (a pool per node). */
  nodes?: SharedInformer<CachedNode> | undefined;
  ports: { ports: PodPorts; loader: RecordLoader<Port> };
  cluster: ClusterNetworkSource & { ready: EventChannel<ClusterNetwork> };
  namespaceNetworks: { changed: EventChannel<NamespaceNetworkChanged> };
  subnets: SubnetStrategy;
  /** With the NetworkPolicy translation on. */
  policies?: PodPolicies | undefined;
  workers: number;
  metrics: PodMetrics;
  /** With it, VIFs are signed in the leader's term (docs/pools.md, "Signed VIFs"). */
  vifKey?: Uint8Array | undefined;
  /** Nested mode on: pods on VM nodes get subports of the node's trunk (docs/nested.md). */
  nested?: NestedPods | undefined;
}

/** What the pod module gives the others. */
export interface PodModule {
  /** The pod controller's waiting keys (`raven_pods_waiting`). */
  controller: { waiting(): Map<string, number> };
  /** The check around each sweep that finds pod ports gone behind Raven's back. */
  verification: ReturnType<typeof portVerification>;
  /** The garbage collector deleted a pod port: pods waiting on the quota or a full subnet may get one now. */
  portDeleted: (portId: string) => void;
  /**
   * With warm pools on: whether a node exists (a port no pod owns is then its pool's, not an orphan), and which free
   * ports are the pools' to delete, never the garbage collector's.
   */
  pools?: { nodeExists: (name: string) => boolean; owns: (portId: string) => boolean } | undefined;
  /** Its record and pools, read-only (the topology view). */
  view: PodModuleView;
}

/**
 * Pods' module: the pod controller (pod → Neutron port, published as the VIF annotation) with its triggers — the
 * cluster network, the record loaded, its namespace's network, a port found gone or freed, the translation's — and,
 * with `portPools.enabled`, the warm pools, their refills and the claims of the ports taken from them.
 */
export function setupPods(ctx: ModuleContext, o: PodModuleInputs): PodModule {
  const { pods } = o;
  const { ports, loader } = o.ports;
  pods.addIndexers(unwiredPodIndexers);
  if (o.vifKey) pods.addIndexers(signedVifIndexers(o.vifKey));
  const signedFor = o.vifKey
    ? (portId: string) => pods.lister().byIndex(SIGNED_VIF_INDEX, portId).length > 0
    : undefined;
  const portsFreed = new EventChannel<PortFreed>('ports-freed');
  const portsGone = new EventChannel<PortGone>('ports-gone');
  // Whether a pod with this uid exists and wants a port: a port whose device_id names none is free.
  const portWanted = (uid: string): boolean =>
    pods
      .lister()
      .byIndex('uid', uid)
      .some((p) => wantsPort(p));
  const warm =
    ctx.config.portPools.enabled && o.nodes
      ? setupWarmPools(ctx, {
          nodes: o.nodes,
          pods,
          ports,
          loader,
          subnets: o.subnets,
          portsGone,
          namespaceNetworkChanged: o.namespaceNetworks.changed,
          clusterNetworkReady: o.cluster.ready,
          portWanted,
          signedFor,
          policies: o.policies?.pools,
          nested: o.nested,
          onShareReached: (name, share) => {
            const ns = o.namespaces.lister().get(name);
            const message = `the warm pools of its NetworkPolicy sets hold ${share} free port(s), its share (quotas.poolPortsPerNamespace): further pods of those sets get a port of their own when they start`;
            if (ns)
              ctx.recorder.record(
                objectReference(ns, { kind: 'Namespace', apiVersion: 'v1' }),
                'Warning',
                'PoolShareReached',
                message,
              );
          },
          workers: o.workers,
          metrics: o.metrics,
        })
      : undefined;
  const reconciler = new PodReconciler({
    cloud: ctx.cloud,
    config: ctx.config,
    client: ctx.client,
    pods: pods.lister(),
    subnets: o.subnets,
    ports,
    pools: warm,
    groups: o.policies?.podGroups,
    portWanted,
    portsFreed,
    recorder: ctx.recorder,
    logger: ctx.logger.child({ reconciler: 'pod' }),
    vifSigning: o.vifKey && { key: o.vifKey, epoch: () => ctx.manager.leaderEpoch() },
    nested: o.nested,
    onNetworkReady: (pod) => {
      const seconds = networkReadySeconds(pod, ctx.clock.now());
      if (seconds !== undefined) o.metrics.podNetworkReady(seconds);
    },
  });
  const unwired = (): string[] => pods.lister().byIndex(UNWIRED_INDEX, 'unwired').map(keyOf);
  const builder = newControllerManagedBy(ctx.manager)
    .named('pod')
    .for(pods)
    // A cluster network first known or rebuilt, and the record loaded: every pod is checked (no OpenStack call for a
    // pod whose annotation matches the record).
    .watchesChannel(o.cluster.ready, allKeys(pods))
    .watchesChannel(loader.loaded, allKeys(pods))
    .watchesChannel(o.namespaceNetworks.changed, (e) => pods.lister().byIndex('byNamespace', e.namespace).map(keyOf))
    .watchesChannel(portsGone, (gone) => [gone.key])
    .watchesChannel(portsFreed, unwired);
  o.policies?.watchPods(builder);
  // A VM node's trunk known (or gone): its pods, which waited for it.
  if (o.nested)
    builder.watchesChannel(o.nested.nodes.changed, (e) => pods.lister().byIndex('byNode', e.node).map(keyOf));
  if (warm) {
    builder.watchesChannel(warm.pools.refilled, unwired);
    // A claim landed: the pod's groups may have changed while it was pending.
    builder.watchesChannel(warm.claims.settled, (e) => [e.key]);
  }
  const controller = builder.withOptions(ctx.controllerOptions(o.workers)).complete(reconciler.reconcile);
  const nodes = o.nodes?.lister();
  return {
    controller,
    verification: portVerification({
      pods: pods.lister(),
      ports,
      portsGone,
      logger: ctx.logger.child({ component: 'gc' }),
    }),
    portDeleted: (portId) => portsFreed.send({ portId }),
    view: podModuleView(ports, warm),
    pools:
      warm && nodes
        ? {
            // A port bound to a VM node is no pool's (its pods get subports): the garbage collector's.
            nodeExists: (name) => nodes.get(name) !== undefined && o.nested?.nodeOf(name) === undefined,
            owns: warm.owns,
          }
        : undefined,
  };
}
