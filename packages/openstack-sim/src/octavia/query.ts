import { octaviaError, text } from '../http.ts';
import { pecanError, policyForbidden, type OctaviaCall } from './common.ts';
import {
  ciCompare,
  type HealthMonitorRecord,
  type ListenerRecord,
  type LoadBalancerRecord,
  type MemberRecord,
  type OctaviaBase,
  type PoolRecord,
} from './store.ts';
import { pyRepr } from './wsme.ts';

/**
 * Octavia's list semantics as Zed on MariaDB answers them (`octavia/api/common/pagination.py` + SQL):
 * - filters are SQL equalities on model columns: unknown keys are a 400, relationship keys a 500, NULL matches
 *   nothing, strings compare case-insensitively, numbers and booleans compare as MySQL coerces strings (`'abc'` is 0),
 *   `admin_state_up` goes through `bool_from_string`, a repeated key is a 500 (a row compared to a varchar);
 * - the tag filters, `fields` (exact names, also on a single GET);
 * - sort: `sort=k[:dir],…` or `sort_key`/`sort_dir`; the direction defaults to asc, and `created_at`, `id` asc are
 *   always appended: the default order is oldest first;
 * - `limit` (capped at 1000, the default; `<1` or `infinite` means none — and then the links code fails with a 500),
 *   `marker` (must exist), `page_reverse=True` (exactly: the rows before the marker, still in the forward order);
 * - `<collection>_links`: `previous` when a marker was given, `next` when the page is full, each with `limit=` and
 *   the sort parameters but not the filters.
 */
type Item = Record<string, unknown>;

type ColumnType = 'str' | 'int' | 'bool' | 'enabled' | 'time';
type Column = { type: ColumnType; get: (r: OctaviaBase) => unknown } | 'relationship' | 'object';

const col = <R extends OctaviaBase>(type: ColumnType, get: (r: R) => unknown): Column => ({
  type,
  get: get as (r: OctaviaBase) => unknown,
});

const baseColumns: Record<string, Column> = {
  id: col('str', (r) => r.id),
  name: col('str', (r) => r.name),
  provisioning_status: col('str', (r) => r.provisioning_status),
  operating_status: col('str', (r) => r.operating_status),
  admin_state_up: col('enabled', (r) => r.admin_state_up),
  enabled: col('enabled', (r) => r.admin_state_up),
  project_id: col('str', (r) => r.project_id),
  created_at: col('time', (r) => r.created_at),
  updated_at: col('time', (r) => r.updated_at),
};
const described: Record<string, Column> = { description: col('str', (r) => r.description) };
const extra = (key: string): Column => col<ListenerRecord | PoolRecord>('str', (r) => r.extra[key] ?? null);

export const listColumns = {
  loadbalancer: {
    ...baseColumns,
    ...described,
    vip_address: col<LoadBalancerRecord>('str', (r) => r.vip_address),
    vip_port_id: col<LoadBalancerRecord>('str', (r) => r.vip_port_id),
    vip_subnet_id: col<LoadBalancerRecord>('str', (r) => r.vip_subnet_id),
    vip_network_id: col<LoadBalancerRecord>('str', (r) => r.vip_network_id),
    vip_qos_policy_id: col('str', () => null),
    provider: col('str', () => 'amphora'),
    flavor_id: col('str', () => null),
    availability_zone: col('str', () => null),
    topology: col('str', () => 'SINGLE'),
    server_group_id: col('str', () => null),
    listeners: 'relationship',
    pools: 'relationship',
    additional_vips: 'relationship',
    amphorae: 'relationship',
  },
  listener: {
    ...baseColumns,
    ...described,
    protocol: col<ListenerRecord>('str', (r) => r.protocol),
    protocol_port: col<ListenerRecord>('int', (r) => r.protocol_port),
    connection_limit: col<ListenerRecord>('int', (r) => r.connection_limit),
    default_pool_id: col<ListenerRecord>('str', (r) => r.default_pool_id),
    loadbalancer_id: col<ListenerRecord>('str', (r) => r.loadbalancer_id),
    load_balancer_id: col<ListenerRecord>('str', (r) => r.loadbalancer_id),
    default_tls_container_ref: extra('default_tls_container_ref'),
    insert_headers: col('str', () => '{}'),
    timeout_client_data: col<ListenerRecord>('int', (r) => r.extra.timeout_client_data ?? 50000),
    timeout_member_connect: col<ListenerRecord>('int', (r) => r.extra.timeout_member_connect ?? 5000),
    timeout_member_data: col<ListenerRecord>('int', (r) => r.extra.timeout_member_data ?? 50000),
    timeout_tcp_inspect: col<ListenerRecord>('int', (r) => r.extra.timeout_tcp_inspect ?? 0),
    client_authentication: col<ListenerRecord>('str', (r) => r.extra.client_authentication ?? 'NONE'),
    client_ca_tls_container_ref: extra('client_ca_tls_container_ref'),
    client_crl_container_ref: extra('client_crl_container_ref'),
    tls_ciphers: extra('tls_ciphers'),
    tls_versions: extra('tls_versions'),
    alpn_protocols: extra('alpn_protocols'),
    allowed_cidrs: 'relationship',
    sni_container_refs: 'relationship',
    l7policies: 'relationship',
  },
  pool: {
    ...baseColumns,
    ...described,
    protocol: col<PoolRecord>('str', (r) => r.protocol),
    lb_algorithm: col<PoolRecord>('str', (r) => r.lb_algorithm),
    loadbalancer_id: col<PoolRecord>('str', (r) => r.loadbalancer_id),
    load_balancer_id: col<PoolRecord>('str', (r) => r.loadbalancer_id),
    tls_enabled: col<PoolRecord>('bool', (r) => r.extra.tls_enabled ?? false),
    tls_container_ref: extra('tls_container_ref'),
    ca_tls_container_ref: extra('ca_tls_container_ref'),
    crl_container_ref: extra('crl_container_ref'),
    tls_ciphers: extra('tls_ciphers'),
    tls_versions: extra('tls_versions'),
    alpn_protocols: extra('alpn_protocols'),
    session_persistence: 'object',
    members: 'relationship',
    listeners: 'relationship',
    l7policies: 'relationship',
  },
  member: {
    ...baseColumns,
    address: col<MemberRecord>('str', (r) => r.address),
    ip_address: col<MemberRecord>('str', (r) => r.address),
    protocol_port: col<MemberRecord>('int', (r) => r.protocol_port),
    weight: col<MemberRecord>('int', (r) => r.weight),
    backup: col<MemberRecord>('bool', (r) => r.backup),
    subnet_id: col<MemberRecord>('str', (r) => r.subnet_id),
    pool_id: col<MemberRecord>('str', (r) => r.pool_id),
    monitor_address: col<MemberRecord>('str', (r) => r.monitor_address),
    monitor_port: col<MemberRecord>('int', (r) => r.monitor_port),
  },
  healthmonitor: {
    ...baseColumns,
    type: col<HealthMonitorRecord>('str', (r) => r.type),
    delay: col<HealthMonitorRecord>('int', (r) => r.delay),
    timeout: col<HealthMonitorRecord>('int', (r) => r.timeout),
    max_retries: col<HealthMonitorRecord>('int', (r) => r.max_retries),
    max_retries_down: col<HealthMonitorRecord>('int', (r) => r.max_retries_down),
    http_method: col<HealthMonitorRecord>('str', (r) => r.http_method),
    url_path: col<HealthMonitorRecord>('str', (r) => r.url_path),
    expected_codes: col<HealthMonitorRecord>('str', (r) => r.expected_codes),
    http_version: col<HealthMonitorRecord>('int', (r) => r.http_version),
    domain_name: col<HealthMonitorRecord>('str', (r) => r.domain_name),
    pool_id: col<HealthMonitorRecord>('str', (r) => r.pool_id),
  },
} satisfies Record<string, Record<string, Column>>;

/** The filterable and sortable keys of one kind (a pool's `healthmonitor_id` goes through `ListOptions.special`). */
export type Columns = Record<string, Column>;

const reserved = new Set(['fields', 'sort', 'sort_key', 'sort_dir', 'limit', 'marker', 'page_reverse']);
const tagKeys = ['tags', 'tags-any', 'not-tags', 'not-tags-any'] as const;
const PAGE_MAX = 1000;

/** MySQL's string → number coercion: the leading number, or 0. */
function mysqlNumber(v: string): number {
  const n = Number.parseFloat(v);
  return Number.isNaN(n) ? 0 : n;
}

const boolFromString = (v: string): boolean => ['1', 't', 'true', 'on', 'y', 'yes'].includes(v.trim().toLowerCase());
const timeText = (v: string): string => v.replace('T', ' ').replace(/Z$/, '');

function matches(type: ColumnType, value: unknown, wanted: string): boolean {
  if (value === null || value === undefined) return false;
  switch (type) {
    case 'str':
      return typeof value === 'string'
        ? ciCompare(value, wanted) === 0
        : ciCompare(JSON.stringify(value), wanted) === 0;
    case 'int':
      return Number(value) === mysqlNumber(wanted);
    case 'bool':
      return (value ? 1 : 0) === mysqlNumber(wanted);
    case 'enabled':
      return value === boolFromString(wanted);
    case 'time':
      return typeof value === 'string' && timeText(value) === timeText(wanted);
  }
}

/** SQL ORDER BY on one column: NULL first, strings case-insensitively. */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' || typeof b === 'boolean') return Number(a) - Number(b);
  return ciCompare(text(a), text(b));
}

function tagList(query: URLSearchParams, name: string): string[] | undefined {
  const v = query.getAll(name);
  return v.length === 0 ? undefined : v.flatMap((x) => x.split(','));
}

function parseLimit(query: URLSearchParams): number | null {
  const text = query.get('limit');
  if (text === null) return PAGE_MAX;
  if (text === 'infinite') return null;
  if (!/^\s*[-+]?\d+\s*$/.test(text))
    throw pecanError(400, 'Bad Request', `Supplied pagination limit '${text}' is not valid.`);
  const n = Number.parseInt(text, 10);
  return n < 1 ? null : Math.min(n, PAGE_MAX);
}

function sortDir(d: string): 1 | -1 {
  const dir = d.toLowerCase();
  if (dir !== 'asc' && dir !== 'desc')
    throw pecanError(400, 'Bad Request', `Supplied sort direction '${dir}' is not valid.`);
  return dir === 'asc' ? 1 : -1;
}

/** The sort keys as PaginationHelper parses them (in its constructor, before wsme: errors are pecan-shaped). */
function parseSort(query: URLSearchParams): [string, 1 | -1][] {
  const sort = query.get('sort');
  const sortKey = query.get('sort_key');
  if (sort) {
    return sort.split(',').map((part) => {
      const comps = part.split(':');
      if (comps.length === 1) return [comps[0]!, 1];
      if (comps.length === 2) return [comps[0]!, sortDir(comps[1]!)];
      throw pecanError(400, 'Bad Request', `Supplied sort key '${pyRepr(comps)}' is not valid.`);
    });
  }
  if (sortKey) {
    const keys = sortKey.split(',');
    const dirs = (query.get('sort_dir') ?? '').split(',').filter((d) => d !== '');
    return keys.map((k, i) => {
      const d = dirs[i];
      return [k, d === undefined ? 1 : sortDir(d)];
    });
  }
  return [];
}

export interface ListOptions<R extends OctaviaBase> {
  call: OctaviaCall;
  records: R[];
  columns: Columns;
  serialize: (r: R) => Item;
  plural: string;
  /** The collection's URL, for the links. */
  href: string;
  /** Every record of the kind (a marker may name one the caller cannot see). */
  all: Map<string, R>;
  /** Extra filters the columns cannot express (a pool's `healthmonitor_id`). */
  special?: Record<string, (r: R, wanted: string) => boolean>;
}

export function octaviaList<R extends OctaviaBase>(o: ListOptions<R>): Item {
  const { call, columns } = o;
  const query = call.query;
  const limit = parseLimit(query);
  const order = parseSort(query);
  for (const key of ['created_at', 'id']) if (!order.some(([k]) => k === key)) order.push([key, 1]);
  const marker = query.get('marker');
  const reverse = query.get('page_reverse') === 'True';

  if (!call.noauth && !call.ctx.isAdmin && query.has('project_id') && query.get('project_id') !== call.ctx.projectId)
    throw policyForbidden();

  const filterKeys = [...new Set(query.keys())].filter(
    (k) => !reserved.has(k) && !(tagKeys as readonly string[]).includes(k),
  );
  for (const k of filterKeys)
    if (!(k in columns) && !o.special?.[k])
      throw octaviaError(400, 'One or more arguments are either duplicate or invalid');
  for (const k of filterKeys) {
    const c = columns[k];
    if (c === 'relationship')
      throw octaviaError(
        500,
        "Can't compare a collection to an object or collection; use contains() to test for membership.",
      );
    if (c === 'object')
      throw octaviaError(
        500,
        'Mapped instance expected for relationship comparison to object.   Classes, queries and other SQL elements are not accepted in this context; for comparison with a subquery, use Pool.session_persistence.has(**criteria).',
      );
    if (query.getAll(k).length > 1)
      throw octaviaError(
        500,
        `(pymysql.err.OperationalError) (4078, "Illegal parameter data types varchar and row for operation '='")`,
      );
  }

  const tags = Object.fromEntries(tagKeys.map((k) => [k, tagList(query, k)]));
  let rows = o.records.filter((r) => {
    for (const k of filterKeys) {
      const wanted = query.get(k)!;
      const special = o.special?.[k];
      if (special) {
        if (!special(r, wanted)) return false;
        continue;
      }
      const c = columns[k] as Exclude<Column, 'relationship' | 'object'>;
      if (!matches(c.type, c.get(r), wanted)) return false;
    }
    const has = (t: string) => r.tags.some((x) => ciCompare(x, t) === 0);
    const all = tags.tags;
    const any = tags['tags-any'];
    const notAll = tags['not-tags'];
    const notAny = tags['not-tags-any'];
    return (
      (!all || all.every(has)) &&
      (!any || any.some(has)) &&
      (!notAll || !notAll.every(has)) &&
      (!notAny || !notAny.some(has))
    );
  });

  for (const [k] of order) {
    const c = columns[k];
    if (c === undefined || c === 'relationship' || c === 'object')
      throw octaviaError(400, `Supplied sort key '${k}' is not valid.`);
  }
  const sortValue = (r: R, k: string): unknown => {
    const c = columns[k] as Exclude<Column, 'relationship' | 'object'>;
    const v = c.get(r);
    return c.type === 'enabled' || c.type === 'bool' ? Number(Boolean(v)) : v;
  };
  const cmp = (a: R, b: R): number => {
    for (const [k, d] of order) {
      const c = compareValues(sortValue(a, k), sortValue(b, k));
      if (c !== 0) return c * d;
    }
    return 0;
  };
  rows.sort(cmp);

  if (marker !== null) {
    const m = o.all.get(marker);
    if (!m) throw octaviaError(400, `Supplied pagination marker '${marker}' is not valid.`);
    rows = rows.filter((r) => (reverse ? cmp(r, m) < 0 : cmp(r, m) > 0));
  }
  if (limit !== null) rows = rows.slice(0, limit);

  const items = rows.map(o.serialize);
  const links: Item[] = [];
  if (items.length > 0) {
    const base = [
      `limit=${limit === null ? 'None' : limit}`,
      ...(query.get('sort') ? [`sort=${query.get('sort')}`] : []),
      ...(query.get('sort_key') ? [`sort_key=${query.get('sort_key')}`] : []),
    ];
    if (marker !== null)
      links.push({
        href: `${o.href}?${[...base, `marker=${rows[0]!.id}`, 'page_reverse=True'].join('&')}`,
        rel: 'previous',
      });
    if (limit === null) throw octaviaError(500, "'>=' not supported between instances of 'int' and 'NoneType'");
    if (items.length >= limit)
      links.push({ href: `${o.href}?${[...base, `marker=${rows[rows.length - 1]!.id}`].join('&')}`, rel: 'next' });
  }
  return { [o.plural]: items.map((i) => onlyFields(i, query)), [`${o.plural}_links`]: links };
}

/** `fields=a&fields=b`: only those attributes (exact names; unknown names give an empty object). */
export function onlyFields(item: Item, query: URLSearchParams): Item {
  const fields = query.getAll('fields');
  return fields.length === 0 ? item : Object.fromEntries(Object.entries(item).filter(([k]) => fields.includes(k)));
}
