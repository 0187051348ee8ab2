/** store: the MVCC object store (global resourceVersion, bounded history, consistent reads at an old RV). */
export {
  MvccStore,
  EXPIRED,
  compareByPosition,
  comparePosition,
  type StoreEvent,
  type StoreEventType,
  type StoreOptions,
} from './mvcc.ts';
export { storedAs, type TableKinds } from './kinds.ts';
