import { newControllerManagedBy } from '../../controller/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import type { ModuleContext } from '../network/index.ts';
import type { CachedNode } from '../pod/index.ts';
import { NestedNodes } from './nodes.ts';
import { NodeTrunkReconciler } from './reconciler.ts';

/** What the nested module gives the others: the VM nodes' trunks, read-only for them. */
export interface NestedModule {
  nodes: NestedNodes;
}

/**
 * Nested pods' node side (docs/nested.md): with `nested.mode` other than `off`, a controller keyed by Node that finds
 * (or makes) each VM node's trunk. Undefined when nested mode is off.
 */
export function setupNested(
  ctx: ModuleContext,
  o: { nodes: SharedInformer<CachedNode>; workers: number },
): NestedModule | undefined {
  const settings = ctx.config.nested;
  if (!settings || settings.mode === 'off') return undefined;
  const record = new NestedNodes();
  const reconciler = new NodeTrunkReconciler({
    cloud: ctx.cloud,
    clusterId: ctx.config.clusterId,
    mode: settings.mode,
    parentNetworks: settings.parentNetworks,
    nodes: o.nodes.lister(),
    record,
    recorder: ctx.recorder,
    logger: ctx.logger.child({ reconciler: 'nested-node' }),
  });
  newControllerManagedBy(ctx.manager)
    .named('nested-node')
    .for(o.nodes)
    .withOptions(ctx.controllerOptions(o.workers))
    .complete(reconciler.reconcile);
  return { nodes: record };
}
