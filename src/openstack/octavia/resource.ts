import { isNotFound } from '../errors.ts';
import type { OpenStackSession, QueryValue } from '../session.ts';

/** Options every Octavia call takes. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Whole-request deadline; default the session's. */
  timeoutMs?: number | undefined;
}

/**
 * List filters. Any response field Octavia stores can filter (`name`, `project_id`, `provisioning_status`,
 * `loadbalancer_id` …); the tag filters take lists (sent comma-separated: `tags` = all of them, `tags-any` = at
 * least one, `not-tags` = not all of them, `not-tags-any` = none of them); `fields` limits the fields returned.
 * `limit` is the page size; `list` follows every page, `listPage` returns one.
 */
export interface ListQuery {
  tags?: readonly string[] | undefined;
  'tags-any'?: readonly string[] | undefined;
  'not-tags'?: readonly string[] | undefined;
  'not-tags-any'?: readonly string[] | undefined;
  fields?: readonly string[] | undefined;
  limit?: number | undefined;
  marker?: string | undefined;
  /** `name:asc,created_at:desc`. */
  sort?: string | undefined;
  [filter: string]: QueryValue | undefined;
}

/** One page of a list, with the marker of the next page when Octavia links one. */
export interface Page<T> {
  items: T[];
  nextMarker: string | undefined;
}

interface Link {
  rel?: string;
  href?: string;
}

const tagFilters = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

function toQuery(query: ListQuery): Record<string, QueryValue | undefined> {
  const out: Record<string, QueryValue | undefined> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    // Octavia splits tag filters on commas (pagination.py _prepare_tags_list); `fields` repeats the key.
    out[key] = tagFilters.has(key) && Array.isArray(value) ? (value as readonly string[]).join(',') : value;
  }
  return out;
}

/**
 * The marker of the `next` link. Only the marker is taken: Octavia's links carry `limit` and the sort but drop the
 * filters (and say `limit=None` where no limit applied), so following the href verbatim would list the wrong set.
 */
function nextMarker(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined;
  const next = (links as Link[]).find((l) => l.rel === 'next');
  if (!next?.href) return undefined;
  try {
    return new URL(next.href, 'http://octavia.invalid/').searchParams.get('marker') ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * CRUD for one Octavia collection (`/v2/lbaas/<plural>`, or below a parent for members), on the shared session.
 * Bodies are wrapped in the singular key both ways (`{"listener": {...}}`), lists in the plural key.
 */
export class OctaviaResource<T, Create, Update> {
  readonly #session: OpenStackSession;
  readonly #singular: string;
  readonly #plural: string;

  constructor(session: OpenStackSession, singular: string, plural: string) {
    this.#session = session;
    this.#singular = singular;
    this.#plural = plural;
  }

  /** One page at `collection` (a path below the endpoint). */
  async listPage(collection: string, query: ListQuery = {}, options: CallOptions = {}): Promise<Page<T>> {
    const { body } = await this.#session.request<Record<string, unknown>>({
      service: 'load-balancer',
      method: 'GET',
      path: collection,
      query: toQuery(query),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    const items = (body?.[this.#plural] ?? []) as T[];
    return { items, nextMarker: items.length === 0 ? undefined : nextMarker(body?.[`${this.#plural}_links`]) };
  }

  /** Every match, following the `next` links (Octavia pages at `pagination_max_limit`, 1000 by default). */
  async list(collection: string, query: ListQuery = {}, options: CallOptions = {}): Promise<T[]> {
    const all: T[] = [];
    const seen = new Set<string>();
    let marker = query.marker;
    for (;;) {
      const page = await this.listPage(collection, { ...query, marker }, options);
      all.push(...page.items);
      // A repeated marker would loop for ever on a server that ignores it; stop instead.
      if (page.nextMarker === undefined || seen.has(page.nextMarker)) return all;
      seen.add(page.nextMarker);
      marker = page.nextMarker;
    }
  }

  async get(path: string, options: CallOptions = {}): Promise<T> {
    const { body } = await this.#session.request<Record<string, T>>({
      service: 'load-balancer',
      method: 'GET',
      path,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body[this.#singular] as T;
  }

  async find(path: string, options: CallOptions = {}): Promise<T | undefined> {
    try {
      return await this.get(path, options);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async create(collection: string, spec: Create, options: CallOptions = {}): Promise<T> {
    const { body } = await this.#session.request<Record<string, T>>({
      service: 'load-balancer',
      method: 'POST',
      path: collection,
      body: { [this.#singular]: spec },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body[this.#singular] as T;
  }

  async update(path: string, patch: Update, options: CallOptions = {}): Promise<T> {
    const { body } = await this.#session.request<Record<string, T>>({
      service: 'load-balancer',
      method: 'PUT',
      path,
      body: { [this.#singular]: patch },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body[this.#singular] as T;
  }

  /** True when deleted (204), false when it was already gone (404). */
  async delete(
    path: string,
    options: CallOptions & { query?: Record<string, QueryValue | undefined> } = {},
  ): Promise<boolean> {
    try {
      await this.#session.request({
        service: 'load-balancer',
        method: 'DELETE',
        path,
        query: options.query,
        signal: options.signal,
        timeoutMs: options.timeoutMs,
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
