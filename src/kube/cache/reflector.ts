import { errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import { isStatus, type KubeObject, type Status, type WatchEvent } from '../api/index.ts';
import { isGone, type KubeClient, type ResourceRef } from '../client/index.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import type { Store, StoreChange } from './store.ts';

/** What a reflector needs of a client: paged lists and watches (a `KubeClient`, or a wrapper that counts calls). */
export type ListerWatcher = Pick<KubeClient, 'listPages' | 'watch'>;

export interface ReflectorOptions<T extends KubeObject> {
  client: ListerWatcher;
  resource: ResourceRef;
  /** Omitted on a namespaced resource = every namespace. */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  store: Store<T>;
  /** Called with the changes of every store operation, after the store is updated. */
  onChanges?: (changes: readonly StoreChange<T>[], initial: boolean) => void;
  /** List page size. Default 500. */
  pageSize?: number;
  backoff?: BackoffOptions;
  /** Watch `timeoutSeconds` is drawn from [min, max). Default [300, 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch silent this long is cut and restarted: the server's bookmark interval plus a margin. Default 90 s. */
  idleTimeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

/** Thrown inside the loop to say "relist": a 410 on the watch. */
class Expired extends Error {}

/**
 * A watch that ends cleanly this soon without any event is treated as a failure (client-go's `errorVeryShortWatch`).
 */
const veryShortWatchMs = 1000;

/**
 * client-go's `Reflector`: keeps a {@link Store} equal to the server's state of one collection. Lists (first at
 * RV "0", later at the last synced RV, at RV "" when that is too old), page by page; replaces the store; then watches
 * from the list's RV with bookmarks and a random `timeoutSeconds`. A clean end re-watches from the last RV; a 410
 * relists; connection errors, 5xx and cut streams back off (0.8 s → 30 s, jitter, reset after 2 min) and retry.
 * It never gives up: {@link run} returns only when its signal aborts.
 *
 * @example
 * const store = new Store<Pod>();
 * const reflector = new Reflector({ client, resource: resources.pods, store });
 * void reflector.run(signal);
 */
export class Reflector<T extends KubeObject> {
  readonly #o: ReflectorOptions<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #backoff: Backoff;
  #lastRv = '';
  #lastRvUnavailable = false;
  #synced = false;
  /** How many lists (not pages) were made: for tests and metrics. */
  listCount = 0;
  /** How many watches were opened. */
  watchCount = 0;

  constructor(options: ReflectorOptions<T>) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({
      resource: options.resource.resource,
      namespace: options.namespace,
    });
    this.#random = options.random ?? Math.random;
    this.#backoff = new Backoff(this.#clock, options.backoff, this.#random);
  }

  /** True once the first list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the store is known to be at (the last list, event or bookmark). */
  lastSyncResourceVersion(): string {
    return this.#lastRv;
  }

  /** Lists and watches until `signal` aborts; never rejects for API failures. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#list(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#log.warn({ err: errorMessage(err) }, 'list failed; backing off');
        if (!(await this.#sleep(signal))) return;
        continue;
      }
      // Watch from the list RV until a 410 asks for a relist.
      for (;;) {
        if (signal.aborted) return;
        try {
          const clean = await this.#watch(signal);
          if (clean) continue;
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof Expired) {
            this.#log.info({ rv: this.#lastRv }, 'watch expired (410); relisting');
            if (!(await this.#sleep(signal))) return;
            break;
          }
          this.#log.warn({ err: errorMessage(err), rv: this.#lastRv }, 'watch failed; backing off');
        }
        if (!(await this.#sleep(signal))) return;
      }
    }
  }

  /** Backs off; false when the signal aborted meanwhile. */
  async #sleep(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#backoff.wait(signal);
      return true;
    } catch {
      return false;
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    // client-go's relistResourceVersion: "0" first (any cached state will do), then the last RV, "" when that is gone.
    const rv = this.#lastRvUnavailable ? '' : this.#synced ? this.#lastRv : '0';
    let items: KubeObject[];
    let listRv: string;
    try {
      ({ items, listRv } = await this.#listAt(rv, signal));
    } catch (err) {
      if (!isGone(err) || rv === '') throw err;
      this.#log.info({ rv }, 'list at resourceVersion expired (410); listing at ""');
      this.#lastRvUnavailable = true;
      ({ items, listRv } = await this.#listAt('', signal));
    }
    this.#lastRvUnavailable = false;
    const changes = this.#o.store.replace(items, listRv);
    this.#lastRv = listRv;
    const initial = !this.#synced;
    this.#synced = true;
    this.#o.onChanges?.(changes, initial);
  }

  async #listAt(resourceVersion: string, signal: AbortSignal): Promise<{ items: KubeObject[]; listRv: string }> {
    this.listCount++;
    const items: KubeObject[] = [];
    let listRv = '';
    const { resource, namespace, labelSelector, fieldSelector } = this.#o;
    const pages = this.#o.client.listPages(resource, {
      namespace,
      labelSelector,
      fieldSelector,
      limit: this.#o.pageSize ?? 500,
      resourceVersion,
      signal,
    });
    for await (const page of pages) {
      for (const item of page.items) items.push(item);
      listRv = page.metadata.resourceVersion ?? listRv;
    }
    return { items, listRv };
  }

  /** One watch from the last RV; true when it ended cleanly (re-watch at once), throws Expired on 410. */
  async #watch(signal: AbortSignal): Promise<boolean> {
    const { min, max } = this.#o.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const timeoutSeconds = Math.floor(min + this.#random() * (max - min));
    const { resource, namespace, labelSelector, fieldSelector } = this.#o;
    this.watchCount++;
    const started = this.#clock.now();
    let events = 0;
    const stream = this.#o.client.watch(resource, {
      namespace,
      labelSelector,
      fieldSelector,
      signal,
      timeoutSeconds,
      resourceVersion: this.#lastRv,
      allowWatchBookmarks: true,
      idleTimeoutMs: this.#o.idleTimeoutMs ?? 90_000,
    });
    for await (const event of stream) {
      events++;
      this.#handle(event);
    }
    if (signal.aborted) return true;
    if (events === 0 && this.#clock.now() - started < veryShortWatchMs) {
      this.#log.warn({ rv: this.#lastRv }, 'very short watch: ended without events');
      return false;
    }
    return true;
  }

  #handle(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      const status = event.object as Status;
      if (isStatus(status) && status.code === 410) throw new Expired(status.message ?? 'expired');
      throw new Error(
        `watch error event: ${isStatus(status) ? (status.message ?? status.reason) : JSON.stringify(status)}`,
      );
    }
    const obj = event.object as KubeObject;
    const rv = obj.metadata?.resourceVersion;
    const store = this.#o.store;
    let change: StoreChange<T> | undefined;
    switch (event.type) {
      case 'ADDED':
        change = store.add(obj);
        break;
      case 'MODIFIED':
        change = store.update(obj);
        break;
      case 'DELETED':
        change = store.delete(obj);
        break;
      case 'BOOKMARK':
        break;
    }
    if (rv) this.#lastRv = rv;
    if (change) this.#o.onChanges?.([change], false);
  }
}
