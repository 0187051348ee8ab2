import { text, type SimHttpError } from '../http.ts';
import { toBoolean, toInt } from './body.ts';
import { nerr, pyRepr } from './errors.ts';

/**
 * Neutron's list semantics, shared by every collection: filters on any attribute (unknown → 400, Zed's
 * filter-validation), the tag filters, `fields`, `sort_key`/`sort_dir`, and `limit`/`marker`/`page_reverse` with
 * `<collection>_links` built as `neutron/api/api_common.py` builds them.
 */
export type Item = Record<string, unknown>;

export interface ListRequest {
  plural: string;
  /** `<endpoint>/v2.0/<collection>`: the base of the pagination hrefs. */
  href: string;
  query: URLSearchParams;
  /** Every attribute of the resource (valid filter and sort keys). */
  attributes: readonly string[];
  /** Serialized form of any resource by id (a marker need not pass the filters). */
  lookup(id: string): Item | undefined;
  notFound(id: string): SimHttpError;
  /** Filters with their own semantics (`fixed_ips=ip_address=…`). */
  special?: Record<string, (item: Item, values: string[]) => boolean>;
  filterTypes?: Readonly<Record<string, 'boolean' | 'int'>>;
  missingMarker?: 'empty' | 'ignore';
}

const reserved = new Set([
  'fields',
  'sort_key',
  'sort_dir',
  'limit',
  'marker',
  'page_reverse',
  'tags',
  'tags-any',
  'not-tags',
  'not-tags-any',
]);

function matches(value: unknown, wanted: string): boolean {
  if (typeof value === 'boolean') return wanted.toLowerCase() === String(value) || wanted === (value ? '1' : '0');
  if (value === null || value === undefined) return wanted === '' || wanted === 'None' || wanted === 'null';
  if (Array.isArray(value)) return value.some((v) => typeof v !== 'object' && text(v) === wanted);
  if (typeof value === 'object') return false;
  return text(value) === wanted;
}

function tagFilter(query: URLSearchParams, name: string): string[] | undefined {
  const values = query.getAll(name);
  return values.length === 0 ? undefined : values.flatMap((v) => v.split(',')).filter((t) => t !== '');
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = text(a);
  const sb = text(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function sorts(req: ListRequest): [string, 1 | -1][] {
  const keys = req.query.getAll('sort_key');
  const dirs = req.query.getAll('sort_dir');
  if (keys.length !== dirs.length) throw nerr.badRequest('The number of sort_keys and sort_dirs must be same');
  const absent = keys.filter((k) => !req.attributes.includes(k));
  if (absent.length > 0) throw nerr.badRequest(`${pyRepr(absent)} is invalid attribute for sort_keys`);
  const badDirs = dirs.filter((d) => d !== 'asc' && d !== 'desc');
  if (badDirs.length > 0)
    throw nerr.badRequest(`${pyRepr(badDirs)} is invalid value for sort_dirs, valid value is 'asc' and 'desc'`);
  const out = keys.map((k, i): [string, 1 | -1] => [k, dirs[i] === 'desc' ? -1 : 1]);
  // Neutron adds the primary key so that pages are stable; it is also the default order.
  if (!keys.includes('id')) out.push(['id', 1]);
  return out;
}

/**
 * `get_next_link`/`get_previous_link`: the request's query without `marker`, then the new marker (none for an empty
 * page) and, going back, `page_reverse=True`, both appended at the end as webob's MultiDict does.
 */
function hrefWith(req: ListRequest, marker: string | undefined, reverse: boolean): string {
  const params = new URLSearchParams(req.query);
  params.delete('marker');
  params.delete('page_reverse');
  if (marker !== undefined) params.append('marker', marker);
  if (reverse) params.append('page_reverse', 'True');
  return `${req.href}?${params.toString()}`;
}

/** Runs a list request over the visible resources (already serialized); returns the response body. */
export function listBody(items: Item[], req: ListRequest): Item {
  const { query } = req;
  const filterKeys = [...new Set([...query.keys()].filter((k) => !reserved.has(k)))];
  const invalid = filterKeys.filter((k) => !req.attributes.includes(k) && !(req.special && k in req.special));
  if (invalid.length > 0) throw nerr.badRequest(`${pyRepr(invalid)} is invalid attribute for filtering`);
  // Typed attributes convert their filter values first (`convert_to`), so a bad one is a 400 and `yes` means true.
  const wanted = new Map(
    filterKeys.map((k) => {
      const values = query.getAll(k);
      const type = req.filterTypes?.[k];
      return [
        k,
        type === 'boolean'
          ? values.map((v) => String(toBoolean(v)))
          : type === 'int'
            ? values.map((v) => String(toInt(v)))
            : values,
      ] as const;
    }),
  );
  let out = items.filter((item) =>
    filterKeys.every((k) => {
      const values = wanted.get(k)!;
      const special = req.special?.[k];
      return special ? special(item, values) : values.some((v) => matches(item[k], v));
    }),
  );
  const all = tagFilter(query, 'tags');
  const any = tagFilter(query, 'tags-any');
  const notAll = tagFilter(query, 'not-tags');
  const notAny = tagFilter(query, 'not-tags-any');
  if (all || any || notAll || notAny) {
    out = out.filter((item) => {
      const tags = (item.tags as string[] | undefined) ?? [];
      if (all && !all.every((t) => tags.includes(t))) return false;
      if (any && !any.some((t) => tags.includes(t))) return false;
      if (notAll && notAll.every((t) => tags.includes(t))) return false;
      if (notAny && notAny.some((t) => tags.includes(t))) return false;
      return true;
    });
  }
  const order = sorts(req);
  const cmp = (a: Item, b: Item): number => {
    for (const [key, dir] of order) {
      const c = compare(a[key], b[key]);
      if (c !== 0) return c * dir;
    }
    return 0;
  };
  out.sort(cmp);

  const limitText = query.get('limit');
  let links: Item[] | undefined;
  if (limitText !== null) {
    // `_get_limit_param`: Python's int(), 0 or more.
    const limit = /^\s*[+-]?\d+\s*$/.test(limitText) ? Number(limitText.trim()) : NaN;
    if (!(limit >= 0))
      throw nerr.badResourceRequest(
        'limit',
        `Limit must be an integer 0 or greater and not '${Number.isNaN(limit) ? limitText : limit}'`,
      );
    const reverse = (query.get('page_reverse') ?? 'False').toLowerCase() === 'true';
    const markerId = limit > 0 ? query.get('marker') : null;
    if (markerId !== null && markerId !== '') {
      const marker = req.lookup(markerId);
      if (marker) out = reverse ? out.filter((i) => cmp(i, marker) < 0) : out.filter((i) => cmp(i, marker) > 0);
      else if (req.missingMarker === 'empty') out = [];
      else if (req.missingMarker !== 'ignore') throw req.notFound(markerId);
    }
    if (limit > 0) {
      out = reverse ? out.slice(Math.max(0, out.length - limit)) : out.slice(0, limit);
      // `get_pagination_links`; an empty page's links carry no marker.
      links = [];
      if (!(out.length < limit && !reverse))
        links.push({
          rel: 'next',
          href: hrefWith(req, out.length > 0 ? String(out[out.length - 1]!.id) : undefined, false),
        });
      if (!(out.length < limit && reverse))
        links.push({ rel: 'previous', href: hrefWith(req, out.length > 0 ? String(out[0]!.id) : undefined, true) });
    }
  }
  const body: Item = { [req.plural]: out.map((item) => selectFields(item, query.getAll('fields'))) };
  if (links) body[`${req.plural}_links`] = links;
  return body;
}

/** `?fields=a&fields=b`: only those attributes (all when none is asked for). */
export function selectFields(item: Item, fields: string[]): Item {
  if (fields.length === 0) return item;
  return Object.fromEntries(Object.entries(item).filter(([k]) => fields.includes(k)));
}
