import { TokenBucket, ravenUserAgent, type Clock, type Logger } from '../../core/index.ts';
import type { KubeList, KubeObject, Status, WatchEvent } from '../api/index.ts';
import type { ClusterConnection } from './connection.ts';
import { queryString, resourcePath, type ResourceRef } from './paths.ts';
import type { RetryOptions } from '../../core/index.ts';
import { Transport } from './transport.ts';
import { watchEvents } from './watch.ts';

/** `raven/<version>`: the default User-Agent (the API server derives the default field manager from it). */
export const defaultUserAgent = ravenUserAgent;

export interface KubeClientOptions {
  connection: ClusterConnection;
  /** Client-side requests per second (client-go's QPS). Default 50. */
  qps?: number;
  /** Requests allowed at once above `qps` (client-go's Burst). Default 100. */
  burst?: number;
  userAgent?: string;
  clock?: Clock;
  logger?: Logger;
  retry?: RetryOptions;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface ListOptions extends CallOptions {
  /** Omitted on a namespaced resource = every namespace. */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan' | undefined;
}

export interface WriteOptions extends CallOptions {
  /** Defaults to the object's `metadata.namespace`. */
  namespace?: string | undefined;
  fieldManager?: string | undefined;
  /** `dryRun=All`: validated, not persisted. */
  dryRun?: boolean | undefined;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface PatchOptions extends CallOptions {
  /** Required by the server for `apply`. */
  fieldManager?: string | undefined;
  /** `apply` only: take ownership of conflicting fields. */
  force?: boolean | undefined;
  dryRun?: boolean | undefined;
  /** Patch a subresource (`status`) instead of the object. */
  subresource?: string | undefined;
}

export interface DeleteOptions extends CallOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground' | undefined;
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  dryRun?: boolean | undefined;
}

export interface WatchOptions extends CallOptions {
  namespace?: string | undefined;
  /**
   * Where to start: `''`/`'0'` = synthetic ADDED events for what exists, then changes; otherwise every change after it.
   */
  resourceVersion?: string | undefined;
  allowWatchBookmarks?: boolean | undefined;
  /** The server ends the stream cleanly after this long. */
  timeoutSeconds?: number | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** A silent stream is cut (WATCH_INTERRUPTED) after this long; default `timeoutSeconds` + 30 s, else 5 min. */
  idleTimeoutMs?: number | undefined;
  /** Called once the server accepted the watch (a 2xx and its stream), before any event: the watch is open. */
  onOpen?: (() => void) | undefined;
}

const json = 'application/json';

/**
 * A typed Kubernetes REST client: CRUD, patch in four types, paged lists and NDJSON watch streams, over one
 * transport with client-side rate limiting and safe retries. Failures are {@link KubeStatusError} (with guards such
 * as `isNotFound`), {@link KubeTransportError} (`KUBE_UNREACHABLE`) or, for watches, `WATCH_INTERRUPTED`.
 *
 * @example
 * const client = new KubeClient({ connection });
 * const cm = await client.get(resources.configmaps, 'settings', 'default', { signal });
 * const from = list.metadata.resourceVersion;
 * for await (const ev of client.watch(resources.pods, { resourceVersion: from, signal })) { … }
 */
export class KubeClient {
  readonly #transport: Transport;
  /** The client-side limiter every request takes a token from (exposed for tests and metrics). */
  readonly bucket: TokenBucket;

  constructor(options: KubeClientOptions) {
    this.bucket = new TokenBucket({
      qps: options.qps ?? 50,
      burst: options.burst ?? 100,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.#transport = new Transport({
      connection: options.connection,
      bucket: this.bucket,
      userAgent: options.userAgent ?? defaultUserAgent,
      clock: options.clock,
      logger: options.logger,
      retry: options.retry,
    });
  }

  /** Reads one object. */
  get<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace?: string,
    options: CallOptions = {},
  ): Promise<T> {
    return this.#transport.json<T>({
      method: 'GET',
      path: resourcePath(ref, { namespace, name }),
      signal: options.signal,
    });
  }

  /** One page of a list (`limit`/`continue`); the list's `metadata.continue` says whether there is more. */
  list<T extends KubeObject>(ref: ResourceRef<T>, options: ListOptions = {}): Promise<KubeList<T>> {
    const query = queryString({
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      limit: options.limit,
      continue: options.continue,
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
    });
    return this.#transport.json<KubeList<T>>({
      method: 'GET',
      path: resourcePath(ref, { namespace: options.namespace }) + query,
      signal: options.signal,
    });
  }

  /** Every page of a list, following `continue` (a 410 on a continue token throws: the caller relists). */
  async *listPages<T extends KubeObject>(
    ref: ResourceRef<T>,
    options: ListOptions = {},
  ): AsyncGenerator<KubeList<T>, void, undefined> {
    let cont = options.continue;
    do {
      // resourceVersion applies to the first page only: the continue token pins the snapshot.
      const page = await this.list<T>(
        ref,
        cont ? { ...options, continue: cont, resourceVersion: undefined, resourceVersionMatch: undefined } : options,
      );
      yield page;
      cont = page.metadata.continue;
    } while (cont);
  }

  /** The whole list, read page by page; `metadata` is the last page's, without `continue`. */
  async listAll<T extends KubeObject>(ref: ResourceRef<T>, options: ListOptions = {}): Promise<KubeList<T>> {
    let result: KubeList<T> | undefined;
    for await (const page of this.listPages<T>(ref, options)) {
      if (!result) result = page;
      else {
        for (const item of page.items) result.items.push(item);
        result.metadata = page.metadata;
      }
    }
    const { continue: _c, remainingItemCount: _r, ...metadata } = result!.metadata;
    return { ...result!, metadata };
  }

  /** Creates an object (POST to its collection); resolves with what the server stored. */
  create<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    const path = resourcePath(ref, { namespace: options.namespace ?? obj.metadata.namespace }) + writeQuery(options);
    return this.#transport.json<T>({
      method: 'POST',
      path,
      body: JSON.stringify(obj),
      contentType: json,
      signal: options.signal,
    });
  }

  /** Replaces an object (PUT) with its `metadata.resourceVersion`: a stale one is a 409 Conflict (`isConflict`). */
  update<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#put(ref, obj, undefined, options);
  }

  /** Replaces an object's `status` subresource (PUT `/status`), with its resourceVersion. */
  updateStatus<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#put(ref, obj, 'status', options);
  }

  #put<T extends KubeObject>(
    ref: ResourceRef<T>,
    obj: T,
    subresource: string | undefined,
    options: WriteOptions,
  ): Promise<T> {
    const namespace = options.namespace ?? obj.metadata.namespace;
    const path = resourcePath(ref, { namespace, name: obj.metadata.name ?? '', subresource }) + writeQuery(options);
    return this.#transport.json<T>({
      method: 'PUT',
      path,
      body: JSON.stringify(obj),
      contentType: json,
      signal: options.signal,
    });
  }

  /**
   * Patches an object. `merge` (RFC 7386) and `strategic` take an object, `json` (RFC 6902) an array of operations,
   * `apply` (server-side apply) the object's owned fields and a `fieldManager`. A string is sent as it is.
   */
  patch<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    options: PatchOptions = {},
  ): Promise<T> {
    const query = queryString({
      fieldManager: options.fieldManager,
      force: options.force,
      dryRun: options.dryRun ? 'All' : undefined,
    });
    const path = resourcePath(ref, { namespace, name, subresource: options.subresource }) + query;
    const body = typeof patch === 'string' ? patch : JSON.stringify(patch);
    return this.#transport.json<T>({
      method: 'PATCH',
      path,
      body,
      contentType: patchContentTypes[type],
      signal: options.signal,
    });
  }

  /**
   * Deletes an object. Resolves with what the server answers: the object (still there with a `deletionTimestamp`
   * while finalizers remain, or as it was) or a Success `Status`.
   */
  delete<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace?: string,
    options: DeleteOptions = {},
  ): Promise<T | Status> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.dryRun) body.dryRun = ['All'];
    const path = resourcePath(ref, { namespace, name });
    return this.#transport.json<T | Status>({
      method: 'DELETE',
      path,
      body: JSON.stringify(body),
      contentType: json,
      signal: options.signal,
    });
  }

  /**
   * Watches a collection: the events in order, as they come. Never retried here (a reflector re-watches or relists);
   * ends when the server ends the stream or `signal` aborts; a cut stream throws `WATCH_INTERRUPTED`; an `ERROR`
   * event (410 Expired when `resourceVersion` is too old) is yielded, not thrown.
   */
  async *watch<T extends KubeObject>(
    ref: ResourceRef<T>,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const { signal } = options;
    const query = queryString({
      watch: 'true',
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowWatchBookmarks,
      timeoutSeconds: options.timeoutSeconds,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    });
    const path = resourcePath(ref, { namespace: options.namespace }) + query;
    const idle =
      options.idleTimeoutMs ?? (options.timeoutSeconds !== undefined ? (options.timeoutSeconds + 30) * 1000 : 300_000);
    let res;
    try {
      res = await this.#transport.send({ method: 'GET', path, signal, retry: false, bodyTimeoutMs: idle });
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    options.onOpen?.();
    yield* watchEvents<T>(res.body, path, signal);
  }

  /** Closes the client's connections. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}

function writeQuery(options: WriteOptions): string {
  return queryString({ fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined });
}
