import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. Objects are frozen and shared: never mutate them. */
export interface StoreEvent {
  readonly rv: number;
  readonly type: StoreEventType;
  /** Storage table (`group/resource`). */
  readonly table: string;
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
  /**
   * The new state; for DELETED, the last state stamped with the deletion's resourceVersion (as etcd3's watcher does).
   */
  readonly object: KubeObject;
  /** The state before this change (MODIFIED and DELETED). */
  readonly prev: KubeObject | undefined;
  /** Serialised forms of this event, made once and shared by every watcher (see `watch/`). */
  readonly lines: Map<string, Uint8Array>;
}

export interface StoreOptions {
  /** How many events the history keeps; a watch or paged list older than that gets 410 Expired. */
  historyLimit: number;
}

type Table = Map<string, Map<string, KubeObject>>;

/** The outcome of reading at an old resourceVersion that is no longer in the history window. */
export const EXPIRED = Symbol('expired');

/**
 * The MVCC store: one global resourceVersion counter, tables of frozen objects, and a bounded history of events.
 * Every method is synchronous, so a handler that reads, checks and commits without awaiting in between is atomic.
 */
export class MvccStore {
  #rv = 0;
  /** Highest resourceVersion whose event is no longer in the history (reading from before it → 410). */
  #compactedRv = 0;
  readonly #tables = new Map<string, Table>();
  readonly #sortedNames = new Map<string, string[]>();
  readonly #history: StoreEvent[] = [];
  #historyStart = 0;
  readonly #historyLimit: number;
  readonly #subscribers = new Set<(event: StoreEvent) => void>();

  constructor(options: StoreOptions) {
    if (!(options.historyLimit >= 1)) throw new RangeError('historyLimit must be at least 1');
    this.#historyLimit = options.historyLimit;
  }

  get currentRv(): number {
    return this.#rv;
  }

  get compactedRv(): number {
    return this.#compactedRv;
  }

  /** Number of events the history holds now. */
  get historySize(): number {
    return this.#history.length - this.#historyStart;
  }

  get(table: string, namespace: string, name: string): KubeObject | undefined {
    return this.#tables.get(table)?.get(namespace)?.get(name);
  }

  /** Objects of a table (in one namespace, or all), sorted by namespace then name, like etcd's key order. */
  list(table: string, namespace?: string): KubeObject[] {
    const t = this.#tables.get(table);
    if (!t) return [];
    const namespaces = namespace !== undefined ? [namespace] : [...t.keys()].sort();
    const out: KubeObject[] = [];
    for (const ns of namespaces) {
      const objects = t.get(ns);
      if (!objects) continue;
      for (const name of this.#sorted(table, ns, objects)) out.push(objects.get(name)!);
    }
    return out;
  }

  /** How many objects a table holds (in one namespace, or all). */
  count(table: string, namespace?: string): number {
    const t = this.#tables.get(table);
    if (!t) return 0;
    if (namespace !== undefined) return t.get(namespace)?.size ?? 0;
    let n = 0;
    for (const objects of t.values()) n += objects.size;
    return n;
  }

  /** Every table name that holds objects. */
  tables(): string[] {
    return [...this.#tables.keys()];
  }

  /**
   * The table as it was at `rv` (consistent paged lists, `resourceVersionMatch=Exact`): the current state with every
   * later event undone. {@link EXPIRED} when `rv` is older than the history window.
   */
  listAt(table: string, rv: number, namespace?: string): KubeObject[] | typeof EXPIRED {
    if (rv < this.#compactedRv) return EXPIRED;
    if (rv >= this.#rv) return this.list(table, namespace);
    const relevant = (e: StoreEvent) => e.table === table && (namespace === undefined || e.namespace === namespace);
    let changed = false;
    for (let i = this.#history.length - 1; i >= this.#historyStart && this.#history[i]!.rv > rv; i--) {
      if (relevant(this.#history[i]!)) {
        changed = true;
        break;
      }
    }
    if (!changed) return this.list(table, namespace);
    const state = new Map<string, KubeObject>();
    for (const obj of this.list(table, namespace)) state.set(entryKey(obj), obj);
    for (let i = this.#history.length - 1; i >= this.#historyStart; i--) {
      const event = this.#history[i]!;
      if (event.rv <= rv) break;
      if (!relevant(event)) continue;
      const key = `${event.namespace}/${event.name}`;
      if (event.type === 'ADDED') state.delete(key);
      else state.set(key, event.prev!);
    }
    return [...state.values()].sort(compareByPosition);
  }

  /** Events of a table after `rv`, oldest first; {@link EXPIRED} when some of them have left the history. */
  eventsSince(table: string, rv: number): StoreEvent[] | typeof EXPIRED {
    if (rv < this.#compactedRv) return EXPIRED;
    const out: StoreEvent[] = [];
    // History is sorted by rv: binary-search the first event after rv.
    let lo = this.#historyStart;
    let hi = this.#history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#history[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.#history.length; i++) {
      const event = this.#history[i]!;
      if (event.table === table) out.push(event);
    }
    return out;
  }

  /** Stores a new object (the caller has checked it does not exist) and returns it frozen, with its resourceVersion. */
  create(table: string, obj: KubeObject): KubeObject {
    return this.#commit('ADDED', table, obj, undefined);
  }

  /** Replaces an existing object (the caller has checked preconditions); returns the frozen new state. */
  update(table: string, obj: KubeObject): KubeObject {
    const prev = this.get(table, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    if (!prev)
      throw new Error(`update of missing object ${table} ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`);
    return this.#commit('MODIFIED', table, obj, prev);
  }

  /** Removes an object; returns its last state stamped with the deletion's resourceVersion. */
  remove(table: string, namespace: string, name: string): KubeObject | undefined {
    const prev = this.get(table, namespace, name);
    if (!prev) return undefined;
    const last = { ...prev, metadata: { ...prev.metadata } };
    return this.#commit('DELETED', table, last, prev);
  }

  /** Forgets all history now, so every watch or paged list from an older resourceVersion gets 410 (fault API). */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history.length = 0;
    this.#historyStart = 0;
  }

  /** Calls `fn` synchronously after every commit. Returns the unsubscribe function. */
  subscribe(fn: (event: StoreEvent) => void): () => void {
    this.#subscribers.add(fn);
    return () => this.#subscribers.delete(fn);
  }

  /** Everything needed to rebuild the store: its objects and its resourceVersion counter (`--data-dir`). */
  dump(): { resourceVersion: number; tables: Record<string, KubeObject[]> } {
    const tables: Record<string, KubeObject[]> = {};
    for (const table of this.#tables.keys()) tables[table] = this.list(table);
    return { resourceVersion: this.#rv, tables };
  }

  /** Loads a {@link dump} into an empty store. History starts empty, so older resourceVersions are expired. */
  load(state: { resourceVersion: number; tables: Record<string, KubeObject[]> }): void {
    if (this.#rv !== 0 || this.#tables.size > 0) throw new Error('load() needs an empty store');
    for (const [table, objects] of Object.entries(state.tables)) {
      for (const obj of objects) this.#put(table, deepFreeze(structuredClone(obj)) as KubeObject);
    }
    this.#rv = state.resourceVersion;
    this.#compactedRv = state.resourceVersion;
  }

  #commit(type: StoreEventType, table: string, obj: KubeObject, prev: KubeObject | undefined): KubeObject {
    const rv = ++this.#rv;
    obj.metadata.resourceVersion = String(rv);
    const frozen = deepFreeze(obj) as KubeObject;
    const namespace = frozen.metadata.namespace ?? '';
    const name = frozen.metadata.name ?? '';
    if (type === 'DELETED') this.#drop(table, namespace, name);
    else this.#put(table, frozen);
    const event: StoreEvent = { rv, type, table, namespace, name, object: frozen, prev, lines: new Map() };
    this.#remember(event);
    for (const fn of this.#subscribers) fn(event);
    return frozen;
  }

  #remember(event: StoreEvent): void {
    this.#history.push(event);
    if (this.#history.length - this.#historyStart > this.#historyLimit) {
      this.#compactedRv = this.#history[this.#historyStart]!.rv;
      this.#history[this.#historyStart++] = undefined as unknown as StoreEvent;
      // Shift the array down now and then instead of on every event.
      if (this.#historyStart > 1024 && this.#historyStart * 2 > this.#history.length) {
        this.#history.splice(0, this.#historyStart);
        this.#historyStart = 0;
      }
    }
  }

  #put(table: string, obj: KubeObject): void {
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    let t = this.#tables.get(table);
    if (!t) this.#tables.set(table, (t = new Map<string, Map<string, KubeObject>>()));
    let objects = t.get(namespace);
    if (!objects) t.set(namespace, (objects = new Map<string, KubeObject>()));
    if (!objects.has(name)) this.#sortedNames.delete(`${table}\u0000${namespace}`);
    objects.set(name, obj);
  }

  #drop(table: string, namespace: string, name: string): void {
    const t = this.#tables.get(table);
    const objects = t?.get(namespace);
    if (!objects?.delete(name)) return;
    this.#sortedNames.delete(`${table}\u0000${namespace}`);
    if (objects.size === 0) t!.delete(namespace);
  }

  #sorted(table: string, namespace: string, objects: Map<string, KubeObject>): string[] {
    const cacheKey = `${table}\u0000${namespace}`;
    let names = this.#sortedNames.get(cacheKey);
    if (!names) this.#sortedNames.set(cacheKey, (names = [...objects.keys()].sort()));
    return names;
  }
}

/** The order lists are served in: namespace, then name. Continue tokens rely on it. */
export function compareByPosition(a: KubeObject, b: KubeObject): number {
  return comparePosition(
    a.metadata.namespace ?? '',
    a.metadata.name ?? '',
    b.metadata.namespace ?? '',
    b.metadata.name ?? '',
  );
}

export function comparePosition(nsA: string, nameA: string, nsB: string, nameB: string): number {
  if (nsA !== nsB) return nsA < nsB ? -1 : 1;
  return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
}

function entryKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}
