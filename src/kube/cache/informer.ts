import { errorMessage, silentLogger, type DeepReadonly, type Logger } from '../../core/index.ts';
import type { KubeObject } from '../api/index.ts';
import type { ResourceRef } from '../client/index.ts';
import { Reflector, type ReflectorHealth, type ReflectorOptions } from './reflector.ts';
import { Store, type Indexers, type StoreChange } from './store.ts';

/**
 * What a consumer is told. Objects are the cache's frozen snapshots: never mutate them (client-go: "MUST NOT
 * modify"); `structuredClone` one to build an update.
 */
export interface EventHandler<T> {
  /** `initial` is true for objects of the first list (and the synthetic adds of a handler added later). */
  onAdd?(obj: DeepReadonly<T>, initial: boolean): void;
  onUpdate?(old: DeepReadonly<T>, obj: DeepReadonly<T>): void;
  /** Carries the last known state; after a relist that state may be older than the deletion. */
  onDelete?(obj: DeepReadonly<T>): void;
}

/** Read-only access to an informer's cache. */
export interface Lister<T> {
  get(key: string): DeepReadonly<T> | undefined;
  list(): DeepReadonly<T>[];
  byIndex(name: string, value: string): DeepReadonly<T>[];
}

export interface SharedInformerOptions<T extends KubeObject> extends Omit<ReflectorOptions<T>, 'store' | 'onChanges'> {
  /** Decodes (trims) each object from the wire into what the cache keeps (the store's `transform`). */
  transform?: (obj: KubeObject) => T;
  indexers?: Indexers<T>;
}

/**
 * client-go's `SharedIndexInformer`: one {@link Reflector} feeding one {@link Store} and any number of handlers.
 * Handlers are called in the order they were added, synchronously, after the store holds the change; one that
 * throws is logged and the others still run. A handler added after the cache synced first gets an `onAdd` for
 * every cached object.
 *
 * @example
 * const pods = new SharedInformer<Pod>({ client, resource: resources.pods });
 * const off = pods.addEventHandler({ onUpdate: (old, pod) => queue.add(keyOf(pod)) });
 * void pods.run(signal);
 * await pods.waitForSync(signal);
 */
export class SharedInformer<T extends KubeObject> {
  readonly #store: Store<T>;
  readonly #reflector: Reflector<T>;
  readonly #log: Logger;
  /** The resource this informer lists and watches. */
  readonly resource: ResourceRef;
  #handlers: EventHandler<T>[] = [];
  #running: Promise<void> | undefined;
  readonly #synced: Promise<void>;
  #resolveSynced!: () => void;

  constructor(options: SharedInformerOptions<T>) {
    const { transform, indexers, ...reflector } = options;
    this.resource = options.resource;
    this.#log = (options.logger ?? silentLogger).child({ informer: options.resource.resource });
    this.#store = new Store<T>({ ...(transform ? { transform } : {}), ...(indexers ? { indexers } : {}) });
    this.#synced = new Promise((resolve) => (this.#resolveSynced = resolve));
    this.#reflector = new Reflector<T>({
      ...reflector,
      store: this.#store,
      onChanges: (changes, initial) => {
        this.#dispatch(changes, initial);
        if (this.#reflector.hasSynced()) this.#resolveSynced();
      },
    });
  }

  /** Adds a handler; returns its unsubscribe. After sync it gets a synthetic `onAdd` per cached object first. */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.#handlers = [...this.#handlers, handler];
    if (this.hasSynced()) for (const obj of this.#store.list()) this.#call(handler, { type: 'add', obj }, true);
    return () => {
      this.#handlers = this.#handlers.filter((h) => h !== handler);
    };
  }

  /** Adds secondary indexes (see {@link Store.addIndexers}). */
  addIndexers(indexers: Indexers<T>): void {
    this.#store.addIndexers(indexers);
  }

  hasSynced(): boolean {
    return this.#reflector.hasSynced();
  }

  /** Resolves true once synced, false if `signal` aborts first. */
  async waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return true;
    if (signal.aborted) return false;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<boolean>((resolve) => {
      onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.#synced.then(() => true), aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion();
  }

  /** Whether its lists and watches succeed (see {@link Reflector.health}). */
  health(): ReflectorHealth {
    return this.#reflector.health();
  }

  /** The read-only cache. */
  lister(): Lister<T> {
    const store = this.#store;
    return {
      get: (key) => store.get(key),
      list: () => store.list(),
      byIndex: (name, value) => store.byIndex(name, value),
    };
  }

  /** The reflector (list/watch counters, for tests and metrics). */
  get reflector(): Reflector<T> {
    return this.#reflector;
  }

  /** Runs the reflector until `signal` aborts. Running twice is an error-free no-op: it returns the first run. */
  run(signal: AbortSignal): Promise<void> {
    this.#running ??= this.#reflector.run(signal);
    return this.#running;
  }

  #dispatch(changes: readonly StoreChange<T>[], initial: boolean): void {
    const handlers = this.#handlers;
    for (const change of changes) for (const h of handlers) this.#call(h, change, initial);
  }

  #call(h: EventHandler<T>, change: StoreChange<T>, initial: boolean): void {
    try {
      if (change.type === 'add') h.onAdd?.(change.obj, initial);
      else if (change.type === 'update') h.onUpdate?.(change.old, change.obj);
      else h.onDelete?.(change.obj);
    } catch (err) {
      this.#log.error({ err: errorMessage(err), change: change.type }, 'event handler threw');
    }
  }
}
