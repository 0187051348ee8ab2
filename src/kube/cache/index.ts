/**
 * kube/cache: client-go's `tools/cache` for Raven: a {@link Reflector} keeps a {@link Store} (keyed `namespace/name`,
 * with secondary indexes) equal to the server's state of one collection, and never gives up (list, then watch; 410 →
 * relist; a server that went back in time → relist from ""; failures → back off 0.8 s → 5 s with jitter and retry)
 * and says whether it keeps up (`health()`); a {@link SharedInformer} adds ordered event handlers and a read-only
 * lister; a {@link SharedInformerFactory} shares one informer per resource and scope.
 * Cached objects are deep-frozen snapshots typed `DeepReadonly<T>`: never mutate them. Everything long-running is
 * `run(signal)`, with time injected through a `Clock`. Imports core, kube/api and kube/client.
 */
export {
  Store,
  indexByNamespace,
  type StoreOptions,
  type StoreChange,
  type IndexFunc,
  type Indexers,
} from './store.ts';
export { Backoff, type BackoffOptions } from './backoff.ts';
export { Reflector, type ReflectorOptions, type ReflectorHealth, type ListerWatcher } from './reflector.ts';
export { SharedInformer, type SharedInformerOptions, type EventHandler, type Lister } from './informer.ts';
export { SharedInformerFactory, type InformerDefaults, type InformerHealth, type InformerScope } from './factory.ts';
export { trimMetadata } from './trim.ts';
