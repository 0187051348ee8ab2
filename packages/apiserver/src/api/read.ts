import type { KubeList, KubeObject } from '../../../../src/kube/api/index.ts';
import { failureStatus } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import { isTrueParam } from '../http/request-info.ts';
import { EXPIRED, comparePosition } from '../store/index.ts';
import { jsonLines, type WatchEncoding } from '../watch/index.ts';
import type { Format } from '../http/negotiate.ts';
import { PROTOBUF_WATCH, encodeWatchFrame } from '../protobuf/index.ts';
import { present, type ApiContext, type Target } from './context.ts';
import { selectionOf } from './selection.ts';
import { toTable, type IncludeObject } from './table.ts';

/** `includeObject` of a Table request (default `Metadata`, as on the real server). */
export function includeObjectOf(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject') ?? 'Metadata';
  if (value !== 'None' && value !== 'Metadata' && value !== 'Object')
    throw apiErrors.badRequest(`includeObject: Unsupported value: "${value}"`);
  return value;
}

/** Length-delimited protobuf `WatchEvent` frames (`application/vnd.kubernetes.protobuf;stream=watch`). */
const protobufFrames: WatchEncoding = {
  key: 'protobuf',
  event: (type, object) => encodeWatchFrame(type, object as Record<string, unknown>),
};

/** GET of one object (also `/status`, which returns the whole object). */
export function getObject(ctx: ApiContext, target: Target, name: string): KubeObject {
  const obj = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!obj) throw apiErrors.notFound(target.def, name);
  return present(obj, target.apiVersion);
}

interface ContinueToken {
  rv: number;
  start: [string, string];
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const token = JSON.parse(Buffer.from(text, 'base64url').toString()) as {
      v?: string;
      rv?: unknown;
      start?: unknown;
    };
    if (
      token.v === 'meta.k8s.io/v1' &&
      typeof token.rv === 'number' &&
      Array.isArray(token.start) &&
      token.start.length === 2
    ) {
      return { rv: token.rv, start: token.start as [string, string] };
    }
  } catch {
    // Fall through to the 400 below.
  }
  throw apiErrors.badRequest('continue key is not valid: invalid continue token');
}

/** Index of the first object after `position` in a list sorted by namespace, name (binary search). */
function firstAfter(all: readonly KubeObject[], [ns, name]: [string, string]): number {
  let lo = 0;
  let hi = all.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const m = all[mid]!.metadata;
    if (comparePosition(m.namespace ?? '', m.name ?? '', ns, name) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function parseRv(text: string): number {
  const rv = Number(text);
  if (!Number.isSafeInteger(rv) || rv < 0) throw apiErrors.badRequest(`invalid resource version: ${text}`);
  return rv;
}

/** How long a read at a resourceVersion newer than the store's waits for it: the real watch cache's `blockTimeout`. */
const FRESHNESS_WAIT_MS = 3_000;

/**
 * Before a LIST at a resourceVersion newer than the current one: waits until the store reaches it, at most
 * {@link FRESHNESS_WAIT_MS} (or until `signal` aborts), as the real server's watch cache does
 * (`waitUntilFreshAndBlock`). A list still too new after that gets 504 `Timeout` with the cause
 * `ResourceVersionTooLarge` and `retryAfterSeconds: 1` from {@link listObjects}.
 */
export async function waitUntilFresh(ctx: ApiContext, query: URLSearchParams, signal?: AbortSignal): Promise<void> {
  const rvText = query.get('resourceVersion') ?? '';
  if (rvText === '' || rvText === '0' || query.get('continue')) return;
  const rv = parseRv(rvText);
  if (rv <= ctx.store.currentRv || signal?.aborted) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, FRESHNESS_WAIT_MS);
    const unsubscribe = ctx.store.subscribe(() => {
      if (ctx.store.currentRv >= rv) done();
    });
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * LIST: selectors, `limit`/`continue` pages from one consistent snapshot, and `resourceVersion`/`resourceVersionMatch`.
 */
export function listObjects(ctx: ApiContext, target: Target, query: URLSearchParams): KubeList {
  const matches = selectionOf(target.def, query);
  const limit = Number(query.get('limit') ?? '0');
  if (!Number.isSafeInteger(limit) || limit < 0) throw apiErrors.badRequest(`invalid limit: ${query.get('limit')}`);
  const continueText = query.get('continue');
  const rvText = query.get('resourceVersion') ?? '';
  const rvMatch = query.get('resourceVersionMatch') ?? '';
  let snapshotRv = ctx.store.currentRv;
  let start: [string, string] | undefined;
  if (continueText) {
    if (rvText !== '') throw apiErrors.badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinue(continueText);
    snapshotRv = token.rv;
    start = token.start;
  } else if (rvText !== '' && rvText !== '0') {
    const rv = parseRv(rvText);
    // Reached only after waitUntilFresh gave up.
    if (rv > ctx.store.currentRv) throw apiErrors.tooLargeResourceVersion(rvText, ctx.store.currentRv);
    if (rvMatch === 'Exact') snapshotRv = rv;
  } else if (rvMatch === 'Exact') {
    throw apiErrors.badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0" or unset');
  }
  const all = ctx.store.listAt(target.table, snapshotRv, target.namespace);
  if (all === EXPIRED) {
    if (continueText) {
      throw apiErrors.expired(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      );
    }
    throw apiErrors.expired(`too old resource version: ${snapshotRv} (${ctx.store.compactedRv + 1})`);
  }
  let i = start ? firstAfter(all, start) : 0;
  const items: KubeObject[] = [];
  let next: [string, string] | undefined;
  for (; i < all.length; i++) {
    const obj = all[i]!;
    if (!matches(obj)) continue;
    if (limit > 0 && items.length === limit) {
      next = [items[limit - 1]!.metadata.namespace ?? '', items[limit - 1]!.metadata.name ?? ''];
      break;
    }
    items.push(present(obj, target.apiVersion));
  }
  const metadata: KubeList['metadata'] = { resourceVersion: String(snapshotRv) };
  if (next) {
    metadata.continue = encodeContinue({ rv: snapshotRv, start: next });
    // Like the real server, the count is only given when no selector makes it expensive to know.
    if (!query.get('labelSelector') && !query.get('fieldSelector')) metadata.remainingItemCount = all.length - i;
  }
  return { kind: target.def.listKind ?? `${target.def.kind}List`, apiVersion: target.apiVersion, metadata, items };
}

/**
 * A boolean query parameter as the real server converts it (`Convert_Slice_string_To_bool`): absent → false, `0` or
 * `false` in any case → false, anything else → true. python-kubernetes sends `True`.
 */
export function boolParam(query: URLSearchParams, name: string): boolean {
  return isTrueParam(query.get(name));
}

function randomTimeoutMs(cap: number): number {
  return Math.round(cap * (1 + Math.random()) * 1000);
}

/**
 * WATCH: synthetic ADDED for the current state when `resourceVersion` is ""/"0", else every event after it from the
 * history; 410 `Expired` (as an ERROR event on a 200 stream, like the real watch cache) when that is gone. A
 * resourceVersion newer than the current one is not an error, as on the real watch cache: the stream stays silent
 * (no bookmarks either) until the store passes it, then carries the events after it.
 */
export function watchObjects(
  ctx: ApiContext,
  target: Target,
  query: URLSearchParams,
  negotiated: { table: boolean; format: Format },
  name?: string,
): Response {
  const asTable = negotiated.table;
  const encoding = negotiated.format === 'protobuf' ? protobufFrames : jsonLines;
  const matches = selectionOf(target.def, query, name);
  const rvText = query.get('resourceVersion') ?? '';
  let fromRv: number | undefined;
  if (rvText !== '' && rvText !== '0') fromRv = parseRv(rvText);
  const timeoutText = query.get('timeoutSeconds');
  const timeoutSeconds = timeoutText === null ? undefined : Number(timeoutText);
  if (timeoutSeconds !== undefined && (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0)) {
    throw apiErrors.badRequest(`invalid timeoutSeconds: ${timeoutText}`);
  }
  const timeoutMs = timeoutSeconds ? timeoutSeconds * 1000 : randomTimeoutMs(ctx.watchTimeoutSeconds);
  const bookmarks = boolParam(query, 'allowWatchBookmarks');
  const include = includeObjectOf(query);
  const stream = ctx.hub.open({
    table: target.table,
    ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
    matches,
    apiVersion: target.apiVersion,
    kind: target.def.kind,
    render: asTable
      ? {
          key: `table\u0000${target.apiVersion}\u0000${include}`,
          fn: (obj) => toTable(target.def, [present(obj, target.apiVersion)], {}, include),
        }
      : { key: target.apiVersion, fn: (obj) => present(obj, target.apiVersion) },
    encoding,
    fromRv,
    bookmarks,
    timeoutMs,
  });
  // Like the real server: a JSON watch is `application/json`, a protobuf one names its stream framing.
  const contentType = negotiated.format === 'protobuf' ? PROTOBUF_WATCH : 'application/json';
  const headers = { 'content-type': contentType, 'cache-control': 'no-cache, private' };
  if (stream === EXPIRED) {
    const status = failureStatus(410, 'Expired', `too old resource version: ${rvText} (${ctx.store.compactedRv + 1})`);
    return new Response(encoding.event('ERROR', status), { status: 200, headers });
  }
  return new Response(stream, { status: 200, headers });
}
