import { errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import { failureStatus, isStatus, type KubeList, type KubeObject, type WatchEvent } from '../api/index.ts';
import {
  KubeStatusError,
  isGone,
  isTooLargeResourceVersion,
  type KubeClient,
  type ResourceRef,
} from '../client/index.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { isOlderResourceVersion } from './resource-version.ts';
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
  /** Default 0.8 s doubling to 5 s (client-go: to 30 s), jitter 1.0, reset after 2 minutes without a failure. */
  backoff?: BackoffOptions;
  /** Watch `timeoutSeconds` is drawn from [min, max). Default [300, 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch silent this long is cut and restarted: the server's bookmark interval plus a margin. Default 90 s. */
  idleTimeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

/**
 * Thrown inside the loop to say "relist": at the last RV after a 410, or from "" (`fromScratch`) when the server no
 * longer knows our RV — a 504 `ResourceVersionTooLarge`, or a resourceVersion older than one already seen.
 */
class Relist extends Error {
  constructor(
    readonly fromScratch: boolean,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The longest back-off between attempts. client-go's reflector goes to 30 s, which spares an API server restarting
 * under thousands of kubelets; Raven is one client (and a standby) with a handful of informers, so 5 s costs the API
 * server nothing and has the caches live within 5 s of its return (a pod created then is not missed for 30 s).
 */
const maxBackoffMs = 5_000;

/** Whether a reflector is keeping up: see {@link Reflector.health}. */
export interface ReflectorHealth {
  /** When the current run of failures began (the reflector's clock); undefined while healthy. */
  failingSince: number | undefined;
  /** How long that run has lasted, in ms (0 while healthy). */
  failingForMs: number;
  /** What the last failure of the run said. */
  lastError: string | undefined;
}

/**
 * A watch that ends cleanly this soon without any event is treated as a failure (client-go's `errorVeryShortWatch`).
 */
const veryShortWatchMs = 1000;

/**
 * client-go's `Reflector`: keeps a {@link Store} equal to the server's state of one collection. Lists (first at
 * RV "0", later at the last synced RV, at RV "" when that is too old or too new), page by page; replaces the store;
 * then watches from the list's RV with bookmarks and a random `timeoutSeconds`. A clean end re-watches from the last
 * RV; a 410 relists; connection errors, 5xx and cut streams back off (0.8 s → 5 s, jitter, reset after 2 min) and
 * retry. It never gives up: {@link run} returns only when its signal aborts.
 *
 * It also survives an API server that lost its state (etcd restored from an older backup, or rebuilt empty), whose
 * resourceVersion went back: a 504 `ResourceVersionTooLarge` on a list or watch, or any resourceVersion older than one
 * already seen, relists from "" — the store is replaced and the objects lost in the gap become deletes. A watch from an
 * RV the server has not reached waits silently on a real server, so after any failure (the server may have restarted)
 * the reflector first reads the server's current RV with one `limit=1` list before it watches from its own again.
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
  /** Read the server's RV before the next watch: something failed since the last list or check. */
  #checkServerRv = false;
  #failingSince: number | undefined;
  #lastError: string | undefined;
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
    this.#backoff = new Backoff(this.#clock, { maxMs: maxBackoffMs, ...options.backoff }, this.#random);
  }

  /** True once the first list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the store is known to be at (the last list, event or bookmark). */
  lastSyncResourceVersion(): string {
    return this.#lastRv;
  }

  /**
   * Healthy once a list succeeded or a watch opened (a 2xx and its stream); a failure (of a list, a watch request, a
   * stream, the RV check) starts a run of failures that the next success ends. A clean end of a watch is neither.
   */
  health(): ReflectorHealth {
    const since = this.#failingSince;
    return {
      failingSince: since,
      failingForMs: since === undefined ? 0 : this.#clock.now() - since,
      lastError: since === undefined ? undefined : this.#lastError,
    };
  }

  /** Lists and watches until `signal` aborts; never rejects for API failures. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#list(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#failed(err, 'list failed; backing off');
        if (!(await this.#sleep(signal))) return;
        continue;
      }
      // Watch from the list RV until the server asks for a relist.
      for (;;) {
        if (signal.aborted) return;
        try {
          if (this.#checkServerRv) await this.#checkRv(signal);
          if (await this.#watch(signal)) continue;
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof Relist) {
            if (err.fromScratch) this.#lastRvUnavailable = true;
            this.#log.info({ rv: this.#lastRv, why: err.message, fromScratch: err.fromScratch }, 'relisting');
            if (!(await this.#sleep(signal))) return;
            break;
          }
          this.#failed(err, 'watch failed; backing off');
        }
        if (!(await this.#sleep(signal))) return;
      }
    }
  }

  #failed(err: unknown, message: string): void {
    this.#failingSince ??= this.#clock.now();
    this.#lastError = errorMessage(err);
    this.#checkServerRv = true;
    this.#log.warn({ err: this.#lastError, rv: this.#lastRv }, message);
  }

  #succeeded(): void {
    this.#failingSince = undefined;
    this.#lastError = undefined;
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
    // client-go's relistResourceVersion: "0" first (any cached state will do), then the last RV, "" when that is
    // unavailable.
    const rv = this.#lastRvUnavailable ? '' : this.#synced ? this.#lastRv : '0';
    let items: KubeObject[];
    let listRv: string;
    try {
      ({ items, listRv } = await this.#listAt(rv, signal));
    } catch (err) {
      if (rv === '' || !(isGone(err) || isTooLargeResourceVersion(err))) throw err;
      this.#log.info({ rv, err: errorMessage(err) }, 'list at resourceVersion unavailable; listing at ""');
      this.#lastRvUnavailable = true;
      ({ items, listRv } = await this.#listAt('', signal));
    }
    this.#lastRvUnavailable = false;
    this.#checkServerRv = false;
    this.#succeeded();
    const changes = this.#o.store.replace(items, listRv);
    this.#lastRv = listRv;
    const initial = !this.#synced;
    this.#synced = true;
    this.#o.onChanges?.(changes, initial);
  }

  /**
   * The server's current RV (one `limit=1` list at ""), checked against ours before watching from ours again after a
   * failure: older means the server went back in time, and a watch from our RV would wait for it silently.
   */
  async #checkRv(signal: AbortSignal): Promise<void> {
    let current = '';
    for await (const page of this.#pages('', 1, signal)) {
      current = page.metadata.resourceVersion ?? '';
      break;
    }
    this.#checkServerRv = false;
    if (isOlderResourceVersion(current, this.#lastRv))
      throw new Relist(true, `the server is at resourceVersion ${current}, older than ${this.#lastRv}: it lost state`);
  }

  async #listAt(resourceVersion: string, signal: AbortSignal): Promise<{ items: KubeObject[]; listRv: string }> {
    this.listCount++;
    const items: KubeObject[] = [];
    let listRv = '';
    for await (const page of this.#pages(resourceVersion, this.#o.pageSize ?? 500, signal)) {
      for (const item of page.items) items.push(item);
      listRv = page.metadata.resourceVersion ?? listRv;
    }
    return { items, listRv };
  }

  #pages(resourceVersion: string, limit: number, signal: AbortSignal): AsyncGenerator<KubeList> {
    const { resource, namespace, labelSelector, fieldSelector } = this.#o;
    return this.#o.client.listPages(resource, {
      namespace,
      labelSelector,
      fieldSelector,
      limit,
      resourceVersion,
      signal,
    });
  }

  /** One watch from the last RV; true when it ended cleanly (re-watch at once), throws {@link Relist}. */
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
      onOpen: () => this.#succeeded(),
    });
    try {
      for await (const event of stream) {
        events++;
        this.#handle(event);
      }
    } catch (err) {
      if (isGone(err)) throw new Relist(false, `watch expired (410): ${errorMessage(err)}`);
      if (isTooLargeResourceVersion(err)) throw new Relist(true, errorMessage(err));
      throw err;
    }
    if (signal.aborted) return true;
    if (events === 0 && this.#clock.now() - started < veryShortWatchMs) {
      this.#failed(new Error('very short watch: ended within 1 s without events'), 'very short watch');
      return false;
    }
    return true;
  }

  #handle(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      // As client-go's apierrors.FromObject: the Status as an error, judged by the same guards as a failed request.
      const status = isStatus(event.object)
        ? event.object
        : failureStatus(500, 'InternalError', `watch error event: ${JSON.stringify(event.object)}`);
      throw new KubeStatusError(status, 'WATCH', this.#o.resource.resource);
    }
    const obj = event.object as KubeObject;
    const rv = obj.metadata?.resourceVersion;
    if (rv && isOlderResourceVersion(rv, this.#lastRv))
      throw new Relist(
        true,
        `a ${event.type} at resourceVersion ${rv}, older than ${this.#lastRv}: the server lost state`,
      );
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
