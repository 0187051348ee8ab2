import { octaviaError, text } from '../http.ts';

/**
 * Octavia's list semantics (`octavia/api/common/pagination.py`): filters on attributes, the tag filters, `fields`,
 * `sort=k:dir,…` or `sort_key`/`sort_dir` (default newest first: created_at, id descending), `limit`/`marker`/
 * `page_reverse`, and `<collection>_links` (`next` when the page is full, `previous` when a marker was given).
 */
type Item = Record<string, unknown>;

const reserved = new Set(['fields', 'sort', 'sort_key', 'sort_dir', 'limit', 'marker', 'page_reverse', 'tags', 'tags-any', 'not-tags', 'not-tags-any']);

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = text(a);
  const sb = text(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function matches(value: unknown, wanted: string): boolean {
  if (typeof value === 'boolean') return wanted.toLowerCase() === String(value);
  if (value === null || value === undefined) return wanted === '' || wanted === 'None';
  if (typeof value === 'object') return false;
  return text(value) === wanted;
}

function tagList(query: URLSearchParams, name: string): string[] | undefined {
  const v = query.getAll(name);
  return v.length === 0 ? undefined : v.flatMap((x) => x.split(',')).filter((t) => t !== '');
}

export function octaviaList(items: Item[], plural: string, href: string, query: URLSearchParams): Item {
  let out = items.filter((item) =>
    [...new Set(query.keys())].filter((k) => !reserved.has(k) && k in item).every((k) => query.getAll(k).some((v) => matches(item[k], v))),
  );
  const all = tagList(query, 'tags');
  const any = tagList(query, 'tags-any');
  const notAll = tagList(query, 'not-tags');
  const notAny = tagList(query, 'not-tags-any');
  out = out.filter((item) => {
    const tags = (item.tags as string[] | undefined) ?? [];
    return (!all || all.every((t) => tags.includes(t))) && (!any || any.some((t) => tags.includes(t))) &&
      (!notAll || !notAll.every((t) => tags.includes(t))) && (!notAny || !notAny.some((t) => tags.includes(t)));
  });
  let order: [string, number][] = [];
  const sort = query.get('sort');
  if (sort) order = sort.split(',').map((s) => { const [k, d] = s.split(':'); return [k!, d === 'asc' ? 1 : -1]; });
  else if (query.get('sort_key')) order = query.get('sort_key')!.split(',').map((k) => [k, query.get('sort_dir') === 'asc' ? 1 : -1]);
  for (const [k] of order) if (items.length > 0 && !(k in items[0]!)) throw octaviaError(400, `Supplied sort key '${k}' is not valid.`);
  if (order.length === 0) order = [['created_at', -1]];
  if (!order.some(([k]) => k === 'id')) order.push(['id', order[0]![1]]);
  const cmp = (a: Item, b: Item): number => {
    for (const [k, d] of order) {
      const c = compare(a[k], b[k]);
      if (c !== 0) return c * d;
    }
    return 0;
  };
  out.sort(cmp);
  const links: Item[] = [];
  const limitText = query.get('limit');
  const marker = query.get('marker');
  const reverse = (query.get('page_reverse') ?? '').toLowerCase() === 'true';
  if (marker !== null) {
    const m = items.find((i) => i.id === marker);
    if (!m) throw octaviaError(400, `Supplied pagination marker '${marker}' is not valid.`);
    out = reverse ? out.filter((i) => cmp(i, m) < 0) : out.filter((i) => cmp(i, m) > 0);
  }
  if (limitText !== null) {
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit <= 0) throw octaviaError(400, `Supplied pagination limit '${limitText}' is not valid.`);
    out = reverse ? out.slice(Math.max(0, out.length - limit)) : out.slice(0, limit);
    if (out.length > 0) {
      const base = [`limit=${limit}`, ...(sort ? [`sort=${sort}`] : []), ...(query.get('sort_key') ? [`sort_key=${query.get('sort_key')}`] : [])];
      if (marker !== null) links.push({ href: `${href}?${[...base, `marker=${String(out[0]!.id)}`, 'page_reverse=True'].join('&')}`, rel: 'previous' });
      if (out.length >= limit) links.push({ href: `${href}?${[...base, `marker=${String(out[out.length - 1]!.id)}`].join('&')}`, rel: 'next' });
    }
  }
  const fields = query.getAll('fields');
  const shaped = fields.length === 0 ? out : out.map((i) => Object.fromEntries(Object.entries(i).filter(([k]) => fields.includes(k))));
  return { [plural]: shaped, [`${plural}_links`]: links };
}
