/**
 * reconcilers/gc: the garbage collector — this cluster's cloud resources whose owner is gone, deleted after a grace
 * age — and its loop, which runs checks (the port verification) on what each sweep listed.
 */
export {
  GarbageCollector,
  ownersIn,
  trunkNodesIn,
  uidIndexers,
  type CollectorOptions,
  type CollectOptions,
  type GcReport,
  type Orphan,
  type OwnerExists,
} from './collector.ts';
export { GarbageCollectionLoop, type GarbageCollectionLoopOptions, type GcRound, type SweepCheck } from './loop.ts';
export { setupGarbageCollection, type GcMetrics, type GcModuleInputs } from './module.ts';
