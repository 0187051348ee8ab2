import { newControllerManagedBy } from '../../controller/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import type { ModuleContext } from '../network/index.ts';
import type { CachedNode } from '../pod/index.ts';
import { NestedNodes, type NestedNode } from './nodes.ts';
import { providerIdentity } from './provider-id.ts';
import { TrunkSubports } from './subports.ts';
import { NodeTrunkReconciler } from './reconciler.ts';

/** What the nested module gives the others: the VM nodes' trunks and their subports. */
export interface NestedModule {
  nodes: NestedNodes;
  subports: TrunkSubports;
  /**
   * The trunk of a pod's node when the node is a VM with one; `pending` when it is a VM whose trunk is not known (yet:
   * its pods wait, never take the bare path); undefined for a bare host.
   */
  nodeOf(nodeName: string | undefined): NestedNode | 'pending' | undefined;
}

/**
 * Nested pods' node side (docs/nested.md): with `nested.mode` other than `off`, a controller keyed by Node that finds
 * (or makes) each VM node's trunk. Undefined when nested mode is off.
 */
export function setupNested(
  ctx: ModuleContext,
  o: { nodes: SharedInformer<CachedNode>; workers: number; podExists: (uid: string) => boolean },
): NestedModule | undefined {
  const settings = ctx.config.nested;
  if (!settings || settings.mode === 'off') return undefined;
  const record = new NestedNodes();
  const subports = new TrunkSubports();
  const reconciler = new NodeTrunkReconciler({
    cloud: ctx.cloud,
    clusterId: ctx.config.clusterId,
    mode: settings.mode,
    parentNetworks: settings.parentNetworks,
    nodes: o.nodes.lister(),
    record,
    subports,
    podExists: o.podExists,
    recorder: ctx.recorder,
    logger: ctx.logger.child({ reconciler: 'nested-node' }),
  });
  newControllerManagedBy(ctx.manager)
    .named('nested-node')
    .for(o.nodes)
    .withOptions(ctx.controllerOptions(o.workers))
    .complete(reconciler.reconcile);
  const nodes = o.nodes.lister();
  return {
    nodes: record,
    subports,
    nodeOf: (name) => {
      if (!name) return undefined;
      const known = record.get(name);
      if (known) return known;
      return providerIdentity(nodes.get(name)?.spec?.providerID).kind === 'other' ? undefined : 'pending';
    },
  };
}
