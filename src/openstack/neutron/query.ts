import type { QueryValue } from '../session.ts';
import type { RequestPriority } from '../transport/http.ts';

/**
 * Neutron list queries, kept pure so they can be unit-tested: filters (`?name=x`, repeated keys for OR), the tag
 * filters (comma-joined), `fields`, `sort_key`/`sort_dir`, `limit`, and following `<collection>_links` `next` markers.
 */

/** Per-call options every Neutron method takes. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Whole-request deadline; default: the session's. */
  timeoutMs?: number | undefined;
  /** Its place in Neutron's concurrency limit: `critical` on a pod's path, `background` for upkeep. */
  priority?: RequestPriority | undefined;
}

export type SortDir = 'asc' | 'desc';

/** Options of `list()` / `pages()`; `K` are the fields asked for (every field when `fields` is not given). */
export interface ListOptions<K extends string = string> extends CallOptions {
  /** Only these attributes in each item (`?fields=a&fields=b`). */
  fields?: readonly K[] | undefined;
  /** Page size (`?limit=`); pages are followed by marker until the last one either way. */
  limit?: number | undefined;
  sortKey?: string | readonly string[] | undefined;
  /** One per sort key; `asc` for each key when omitted. */
  sortDir?: SortDir | readonly SortDir[] | undefined;
}

/** A filter value: a scalar, or several values that match any of them (the key repeats: `?id=a&id=b`). */
export type FilterValue = string | number | boolean | readonly (string | number)[];

/** The tag filters every standard-attribute collection accepts; several tags are comma-joined. */
export interface TagFilters {
  /** Has every one of these tags. */
  tags?: string | readonly string[] | undefined;
  /** Has at least one of these tags. */
  'tags-any'?: string | readonly string[] | undefined;
  /** Does not have all of these tags together. */
  'not-tags'?: string | readonly string[] | undefined;
  /** Has none of these tags. */
  'not-tags-any'?: string | readonly string[] | undefined;
}

/** Filters common to every standard-attribute resource. */
export interface StandardFilters extends TagFilters {
  id?: string | readonly string[] | undefined;
  name?: string | readonly string[] | undefined;
  description?: string | undefined;
  project_id?: string | readonly string[] | undefined;
  revision_number?: number | undefined;
}

const tagKeys = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

/** The query of a list request: filters (undefined ones dropped) plus fields, sorting and limit. */
export function listQuery(filters: object | undefined, options: ListOptions = {}): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(filters ?? {}) as [string, unknown][]) {
    if (value === undefined) continue;
    if (tagKeys.has(key)) query[key] = typeof value === 'string' ? value : (value as readonly string[]).join(',');
    else if (Array.isArray(value))
      query[key] = (value as (string | number | boolean)[]).map((v) => (typeof v === 'boolean' ? String(v) : v));
    else if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string')
      query[key] = typeof value === 'boolean' ? String(value) : value;
    else throw new TypeError(`Neutron filter ${key} must be a string, number, boolean or array of those`);
  }
  if (options.fields && options.fields.length > 0) query.fields = options.fields;
  const keys =
    options.sortKey === undefined ? [] : typeof options.sortKey === 'string' ? [options.sortKey] : options.sortKey;
  if (keys.length > 0) {
    const dirs =
      options.sortDir === undefined ? [] : typeof options.sortDir === 'string' ? [options.sortDir] : options.sortDir;
    if (dirs.length > keys.length) throw new TypeError('more sortDir values than sortKey values');
    query.sort_key = keys;
    query.sort_dir = keys.map((_, i) => dirs[i] ?? 'asc');
  } else if (options.sortDir !== undefined) {
    throw new TypeError('sortDir needs a sortKey');
  }
  if (options.limit !== undefined) {
    if (!Number.isInteger(options.limit) || options.limit < 1)
      throw new RangeError(`limit must be a positive integer, not ${options.limit}`);
    query.limit = options.limit;
  }
  return query;
}

interface Link {
  rel?: unknown;
  href?: unknown;
}

/** The `marker` of the `next` link in a list body's `<collection>_links`, or undefined on the last page. */
export function nextMarker(body: unknown, collection: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const links = (body as Record<string, unknown>)[`${collection}_links`];
  if (!Array.isArray(links)) return undefined;
  for (const link of links as Link[]) {
    if (link?.rel !== 'next' || typeof link.href !== 'string') continue;
    const q = link.href.indexOf('?');
    if (q < 0) return undefined;
    const marker = new URLSearchParams(link.href.slice(q + 1)).get('marker');
    return marker === null || marker === '' ? undefined : marker;
  }
  return undefined;
}

/** One fetched page: its items and the marker of the next one (undefined on the last page). */
export interface Page<T> {
  items: T[];
  next: string | undefined;
}

/**
 * Walks pages by marker until a page has no `next` link or comes back empty (Neutron sends a `next` link whenever
 * a page is full, so the page after an exactly-full last page is empty). A marker seen twice means a server that
 * would loop forever: that throws instead.
 */
export async function* walkPages<T>(
  fetchPage: (marker: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T[], void, undefined> {
  const seen = new Set<string>();
  let marker: string | undefined;
  for (;;) {
    const page = await fetchPage(marker);
    if (page.items.length > 0) yield page.items;
    if (page.next === undefined || page.items.length === 0) return;
    if (seen.has(page.next)) throw new Error(`Neutron pagination repeats marker ${page.next}`);
    seen.add(page.next);
    marker = page.next;
  }
}

/** Rejects as soon as `signal` aborts, without cancelling `promise` (which other callers may share). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * A path segment, percent-encoded so that `/`, `?`, `#`, `%` in an id or tag cannot leave the segment, but with the
 * path-safe `=`, `:`, `@`, `,` kept readable (`/tags/k8s-ns=default`, as the logs of other clients show them).
 */
export function seg(value: string): string {
  return encodeURIComponent(value).replace(/%(3D|3A|40|2C)/g, (m) => decodeURIComponent(m));
}
