import { deepFreeze, StringSetMap, type DeepReadonly } from '../../core/index.ts';
import { keyOf, type KubeObject } from '../api/index.ts';

/** Maps an object to the values it is indexed under in one named index (client-go's `IndexFunc`). */
export type IndexFunc<T> = (obj: DeepReadonly<T>) => readonly string[];

/** Named secondary indexes. */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/** One change a store operation made: what the informer hands to its event handlers. */
export type StoreChange<T> =
  | { type: 'add'; obj: DeepReadonly<T> }
  | { type: 'update'; old: DeepReadonly<T>; obj: DeepReadonly<T> }
  | { type: 'delete'; obj: DeepReadonly<T> };

export interface StoreOptions<T> {
  /**
   * Decodes every object from the wire into what is stored (trims it to the fields a consumer reads); may mutate its
   * argument. Without it an object is stored as it came: the collection's objects are taken to be `T`s.
   */
  transform?: (obj: KubeObject) => T;
  indexers?: Indexers<T>;
}

/**
 * An index function for "objects by namespace" (`''` for cluster-scoped ones): `addIndexers({ byNamespace:
 * indexByNamespace })`.
 */
export const indexByNamespace = (obj: DeepReadonly<KubeObject>): string[] => [obj.metadata.namespace ?? ''];

/**
 * A thread-safe-by-construction (single-threaded) keyed cache with secondary indexes: client-go's `cache.Indexer`.
 * Keys are {@link keyOf} (`namespace/name` or `name`). Stored objects are deep-frozen and typed `DeepReadonly<T>`:
 * `structuredClone` one before building an update. Every mutation returns the changes it made, so a caller (the
 * informer) can notify handlers after the store is consistent.
 *
 * @example
 * const store = new Store<Pod>({ indexers: { byNode: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) } });
 * store.replace(list.items, list.metadata.resourceVersion ?? '');
 * store.byIndex('byNode', 'node-1');
 */
export class Store<T extends KubeObject> {
  readonly #items = new Map<string, DeepReadonly<T>>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  /** index name → index value → keys. */
  /** Index name → value → keys; a value of one key (a uid) held without a Set of its own. */
  readonly #indices = new Map<string, StringSetMap>();
  readonly #transform: ((obj: KubeObject) => T) | undefined;
  #resourceVersion = '';

  constructor(options: StoreOptions<T> = {}) {
    this.#transform = options.transform;
    if (options.indexers) this.addIndexers(options.indexers);
  }

  /** Adds named indexes; existing objects are indexed at once. A name already in use is an error. */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#indexers.has(name)) throw new Error(`indexer "${name}" already exists`);
      this.#indexers.set(name, fn);
      const index = new StringSetMap();
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) for (const v of fn(obj)) index.add(v, key);
    }
  }

  /** Stores an object (added or replaced by key). */
  add(obj: KubeObject): StoreChange<T> {
    const frozen = this.#prepare(obj);
    const key = keyOf(frozen);
    const old = this.#items.get(key);
    this.#put(key, frozen, old);
    return old ? { type: 'update', old, obj: frozen } : { type: 'add', obj: frozen };
  }

  /** The same as {@link add}: the key decides whether it is new. */
  update(obj: KubeObject): StoreChange<T> {
    return this.add(obj);
  }

  /** Removes the object with this one's key; the change carries the last stored version (undefined if absent). */
  delete(obj: DeepReadonly<KubeObject>): StoreChange<T> | undefined {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (!old) return undefined;
    this.#unindex(key, old);
    this.#items.delete(key);
    return { type: 'delete', obj: old };
  }

  /**
   * Replaces the whole content with a list (a relist). Keys that vanished become `delete` changes carrying the last
   * known object; objects whose resourceVersion did not change produce no change.
   */
  replace(list: readonly KubeObject[], resourceVersion: string): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const seen = new Set<string>();
    for (const item of list) {
      const frozen = this.#prepare(item);
      const key = keyOf(frozen);
      seen.add(key);
      const old = this.#items.get(key);
      this.#put(key, frozen, old);
      if (!old) changes.push({ type: 'add', obj: frozen });
      else if (old.metadata.resourceVersion !== frozen.metadata.resourceVersion)
        changes.push({ type: 'update', old, obj: frozen });
    }
    for (const [key, old] of [...this.#items]) {
      if (seen.has(key)) continue;
      this.#unindex(key, old);
      this.#items.delete(key);
      changes.push({ type: 'delete', obj: old });
    }
    this.#resourceVersion = resourceVersion;
    return changes;
  }

  /** The resourceVersion of the last {@link replace}. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  get(key: string): DeepReadonly<T> | undefined {
    return this.#items.get(key);
  }

  list(): DeepReadonly<T>[] {
    return [...this.#items.values()];
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /** The objects an index holds under `value`. An unknown index name is an error. */
  byIndex(name: string, value: string): DeepReadonly<T>[] {
    return this.indexKeys(name, value).map((k) => this.#items.get(k)!);
  }

  /** The keys an index holds under `value`. */
  indexKeys(name: string, value: string): string[] {
    const index = this.#indices.get(name);
    if (!index) throw new Error(`no indexer "${name}"`);
    return index.get(value);
  }

  /** The values an index currently holds. */
  indexValues(name: string): string[] {
    const index = this.#indices.get(name);
    if (!index) throw new Error(`no indexer "${name}"`);
    return index.keys();
  }

  #prepare(obj: KubeObject): DeepReadonly<T> {
    return deepFreeze(this.#transform ? this.#transform(obj) : (obj as T));
  }

  #put(key: string, obj: DeepReadonly<T>, old: DeepReadonly<T> | undefined): void {
    if (old) this.#unindex(key, old);
    this.#items.set(key, obj);
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      for (const v of fn(obj)) index.add(v, key);
    }
  }

  #unindex(key: string, old: DeepReadonly<T>): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      for (const v of fn(old)) index.delete(v, key);
    }
  }
}
