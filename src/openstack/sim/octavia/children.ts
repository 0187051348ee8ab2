import { octaviaError } from '../http.ts';
import { parseIp } from '../neutron/ip.ts';
import { checkChildMutable, checkFields, findObject, notFound, parseObject, startChildChange, t, visible, type Check, type OctaviaCall } from './common.ts';
import { octaviaList } from './query.ts';
import {
  serializeListener, serializeMember, serializeMonitor, serializePool, type HealthMonitorRecord, type ListenerRecord, type LoadBalancerRecord,
  type MemberRecord, type OctaviaBase, type PoolRecord,
} from './store.ts';

/** Listeners, pools, members and health monitors: each change goes through the load balancer's PENDING_UPDATE. */
const common = { name: t.str, description: t.str, admin_state_up: t.bool, tags: t.tags, project_id: t.str, tenant_id: t.str };
const listenerExtra = ['default_tls_container_ref', 'sni_container_refs', 'insert_headers', 'timeout_client_data', 'timeout_member_connect', 'timeout_member_data', 'timeout_tcp_inspect', 'client_ca_tls_container_ref', 'client_authentication', 'client_crl_container_ref', 'allowed_cidrs', 'tls_ciphers', 'tls_versions', 'alpn_protocols'];
const poolExtra = ['tls_container_ref', 'ca_tls_container_ref', 'crl_container_ref', 'tls_enabled', 'tls_ciphers', 'tls_versions', 'alpn_protocols'];

export const listenerFields: Record<string, Check> = {
  ...common, protocol: t.oneOf('HTTP', 'HTTPS', 'TCP', 'TERMINATED_HTTPS', 'UDP', 'SCTP', 'PROMETHEUS'), protocol_port: t.int(1, 65535),
  loadbalancer_id: t.str, connection_limit: t.int(-1, 2147483647), default_pool_id: t.strOrNull, ...Object.fromEntries(listenerExtra.map((k) => [k, t.any])),
};
export const poolFields: Record<string, Check> = {
  ...common, protocol: t.oneOf('HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP', 'UDP', 'SCTP'), lb_algorithm: t.oneOf('ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'),
  loadbalancer_id: t.str, listener_id: t.str, session_persistence: t.any, ...Object.fromEntries(poolExtra.map((k) => [k, t.any])),
};
export const memberFields: Record<string, Check> = {
  ...common, address: t.str, protocol_port: t.int(1, 65535), weight: t.int(0, 256), backup: t.bool, subnet_id: t.strOrNull,
  monitor_address: t.strOrNull, monitor_port: t.any,
};
export const monitorFields: Record<string, Check> = {
  ...common, pool_id: t.str, type: t.oneOf('HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'), delay: t.int(0, 2147483647),
  timeout: t.int(0, 2147483647), max_retries: t.int(1, 10), max_retries_down: t.int(1, 10), http_method: t.str, url_path: t.str,
  expected_codes: t.str, http_version: t.any, domain_name: t.str,
};

function pick(attrs: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => attrs[k] !== undefined).map((k) => [k, attrs[k]]));
}

export function newListener(call: OctaviaCall, lb: LoadBalancerRecord, attrs: Record<string, unknown>, taken: ListenerRecord[] = []): ListenerRecord {
  const port = attrs.protocol_port as number;
  if ([...call.store.listenersOf(lb.id), ...taken].some((l) => l.protocol_port === port && (l.protocol === 'UDP') === (attrs.protocol === 'UDP'))) {
    throw octaviaError(409, `Another Listener on this Load Balancer is already using protocol_port ${port}`);
  }
  return {
    ...call.store.base(lb.project_id, attrs), loadbalancer_id: lb.id, protocol: attrs.protocol as string, protocol_port: port,
    connection_limit: (attrs.connection_limit as number | undefined) ?? -1, default_pool_id: (attrs.default_pool_id as string | null | undefined) ?? null,
    extra: pick(attrs, listenerExtra),
  };
}

export function newPool(call: OctaviaCall, lb: LoadBalancerRecord, attrs: Record<string, unknown>): PoolRecord {
  return {
    ...call.store.base(lb.project_id, attrs), loadbalancer_id: lb.id, protocol: attrs.protocol as string, lb_algorithm: attrs.lb_algorithm as string,
    session_persistence: attrs.session_persistence ?? null, extra: pick(attrs, poolExtra),
  };
}

export function newMember(call: OctaviaCall, pool: PoolRecord, attrs: Record<string, unknown>, taken: MemberRecord[] = []): MemberRecord {
  const address = attrs.address as string;
  if (!parseIp(address)) throw octaviaError(400, `Invalid input for field/attribute address. Value: '${address}'. Value should be IPv4 or IPv6 format`);
  const port = attrs.protocol_port as number;
  if ([...call.store.membersOf(pool.id), ...taken].some((m) => m.address === address && m.protocol_port === port && m.provisioning_status !== 'PENDING_DELETE')) {
    throw octaviaError(409, `Another member on this pool is already using ip ${address} on protocol_port ${port}`);
  }
  const subnetId = (attrs.subnet_id as string | null | undefined) ?? null;
  if (subnetId && !call.neutron.store.subnets.has(subnetId)) throw octaviaError(400, `Subnet ${subnetId} not found.`);
  return {
    ...call.store.base(pool.project_id, attrs), pool_id: pool.id, address, protocol_port: port, weight: (attrs.weight as number | undefined) ?? 1,
    backup: (attrs.backup as boolean | undefined) ?? false, subnet_id: subnetId, monitor_address: (attrs.monitor_address as string | null | undefined) ?? null,
    monitor_port: (attrs.monitor_port as number | null | undefined) ?? null,
    // No health manager runs: members are NO_MONITOR, or OFFLINE once their pool has a monitor.
    operating_status: call.store.monitorOf(pool.id) ? 'OFFLINE' : 'NO_MONITOR',
  };
}

export function newMonitor(call: OctaviaCall, pool: PoolRecord, attrs: Record<string, unknown>): HealthMonitorRecord {
  if (call.store.monitorOf(pool.id)) throw octaviaError(409, 'This pool already has a health monitor');
  const http = attrs.type === 'HTTP' || attrs.type === 'HTTPS';
  return {
    ...call.store.base(pool.project_id, attrs), pool_id: pool.id, type: attrs.type as string, delay: attrs.delay as number, timeout: attrs.timeout as number,
    max_retries: attrs.max_retries as number, max_retries_down: (attrs.max_retries_down as number | undefined) ?? 3,
    http_method: (attrs.http_method as string | undefined) ?? (http ? 'GET' : null), url_path: (attrs.url_path as string | undefined) ?? (http ? '/' : null),
    expected_codes: (attrs.expected_codes as string | undefined) ?? (http ? '200' : null), http_version: (attrs.http_version as number | undefined) ?? null,
    domain_name: (attrs.domain_name as string | undefined) ?? null,
  };
}

function activate(o: OctaviaBase): void {
  if (o.provisioning_status === 'PENDING_CREATE' || o.provisioning_status === 'PENDING_UPDATE') o.provisioning_status = 'ACTIVE';
}

type Kind = 'listener' | 'pool' | 'member' | 'healthmonitor';
const names: Record<Kind, string> = { listener: 'Listener', pool: 'Pool', member: 'Member', healthmonitor: 'Health Monitor' };

/** The load balancer and affected listeners of an object. */
function parents(call: OctaviaCall, kind: Kind, o: OctaviaBase): { lb: LoadBalancerRecord; listenerIds: string[] } {
  const s = call.store;
  const poolId = kind === 'pool' ? o.id : kind === 'member' ? (o as MemberRecord).pool_id : kind === 'healthmonitor' ? (o as HealthMonitorRecord).pool_id : undefined;
  const lbId = kind === 'listener' ? (o as ListenerRecord).loadbalancer_id : s.pools.get(poolId!)!.loadbalancer_id;
  const listenerIds = kind === 'listener' ? [o.id] : s.listenersOfPool(poolId!).map((l) => l.id);
  return { lb: s.loadbalancers.get(lbId)!, listenerIds };
}

function mapOf(call: OctaviaCall, kind: Kind): Map<string, OctaviaBase> {
  const s = call.store;
  return (kind === 'listener' ? s.listeners : kind === 'pool' ? s.pools : kind === 'member' ? s.members : s.healthmonitors);
}

function serialize(call: OctaviaCall, kind: Kind, o: OctaviaBase): Record<string, unknown> {
  if (kind === 'listener') return serializeListener(call.store, o as ListenerRecord);
  if (kind === 'pool') return serializePool(call.store, o as PoolRecord);
  if (kind === 'member') return serializeMember(o as MemberRecord);
  return serializeMonitor(o as HealthMonitorRecord);
}

const updatable: Record<Kind, string[]> = {
  listener: ['name', 'description', 'admin_state_up', 'tags', 'connection_limit', 'default_pool_id', ...listenerExtra],
  pool: ['name', 'description', 'admin_state_up', 'tags', 'lb_algorithm', 'session_persistence', ...poolExtra],
  member: ['name', 'admin_state_up', 'tags', 'weight', 'backup', 'monitor_address', 'monitor_port'],
  healthmonitor: ['name', 'admin_state_up', 'tags', 'delay', 'timeout', 'max_retries', 'max_retries_down', 'http_method', 'url_path', 'expected_codes', 'http_version', 'domain_name'],
};
const fieldsOf: Record<Kind, Record<string, Check>> = { listener: listenerFields, pool: poolFields, member: memberFields, healthmonitor: monitorFields };

export const children = {
  list(call: OctaviaCall, kind: Kind, plural: string, items: OctaviaBase[], href: string) {
    return { status: 200, body: octaviaList(items.filter((o) => visible(call, o)).map((o) => serialize(call, kind, o)), plural, href, call.query) };
  },

  get(call: OctaviaCall, kind: Kind, id: string, poolId?: string) {
    const o = findObject(call, mapOf(call, kind), id, names[kind]);
    if (poolId !== undefined && (o as MemberRecord).pool_id !== poolId) throw notFound(names[kind], id);
    return { status: 200, body: { [kind]: serialize(call, kind, o) } };
  },

  create(call: OctaviaCall, kind: Kind, poolIdFromPath?: string) {
    const s = call.store;
    const required = { listener: ['protocol', 'protocol_port', 'loadbalancer_id'], pool: ['protocol', 'lb_algorithm'], member: ['address', 'protocol_port'], healthmonitor: ['pool_id', 'type', 'delay', 'timeout', 'max_retries'] }[kind];
    const attrs = parseObject(call.body, kind, fieldsOf[kind], required);
    let o: OctaviaBase;
    let lb: LoadBalancerRecord;
    let listenerIds: string[];
    if (kind === 'listener') {
      lb = findObject(call, s.loadbalancers, attrs.loadbalancer_id as string, 'Load Balancer');
      checkChildMutable(call, lb);
      o = newListener(call, lb, attrs);
      listenerIds = [o.id];
    } else if (kind === 'pool') {
      const listener = attrs.listener_id ? findObject(call, s.listeners, attrs.listener_id as string, 'Listener') : undefined;
      if (!listener && !attrs.loadbalancer_id) throw octaviaError(400, 'Validation failure: A pool must have a loadbalancer_id or a listener_id.');
      lb = findObject(call, s.loadbalancers, listener?.loadbalancer_id ?? (attrs.loadbalancer_id as string), 'Load Balancer');
      if (listener?.default_pool_id) throw octaviaError(409, 'This listener already has a default pool');
      listenerIds = listener ? [listener.id] : [];
      checkChildMutable(call, lb, listenerIds);
      o = newPool(call, lb, attrs);
      if (listener) listener.default_pool_id = o.id;
    } else {
      const pool = findObject(call, s.pools, (poolIdFromPath ?? attrs.pool_id) as string, 'Pool');
      ({ lb, listenerIds } = parents(call, 'pool', pool));
      checkChildMutable(call, lb, listenerIds);
      o = kind === 'member' ? newMember(call, pool, attrs) : newMonitor(call, pool, attrs);
    }
    mapOf(call, kind).set(o.id, o);
    const body = { [kind]: serialize(call, kind, o) };
    startChildChange(call, lb, listenerIds, () => {
      activate(o);
      if (kind === 'healthmonitor') for (const m of s.membersOf((o as HealthMonitorRecord).pool_id)) m.operating_status = 'OFFLINE';
    });
    return { status: 201, body };
  },

  update(call: OctaviaCall, kind: Kind, id: string) {
    const o = findObject(call, mapOf(call, kind), id, names[kind]);
    const allowed = Object.fromEntries(updatable[kind].map((k) => [k, fieldsOf[kind][k] ?? t.any]));
    const attrs = parseObject(call.body, kind, allowed, []);
    const { lb, listenerIds } = parents(call, kind, o);
    checkChildMutable(call, lb, listenerIds);
    const record = o as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(attrs)) {
      if (k in record && k !== 'extra') record[k] = k === 'tags' ? [...(v as string[])] : v;
      else (record.extra as Record<string, unknown>)[k] = v;
    }
    o.provisioning_status = 'PENDING_UPDATE';
    call.store.touch(o);
    const body = { [kind]: serialize(call, kind, o) };
    startChildChange(call, lb, listenerIds, () => activate(o));
    return { status: 200, body };
  },

  delete(call: OctaviaCall, kind: Kind, id: string) {
    const s = call.store;
    const o = findObject(call, mapOf(call, kind), id, names[kind]);
    const { lb, listenerIds } = parents(call, kind, o);
    checkChildMutable(call, lb, listenerIds);
    o.provisioning_status = 'PENDING_DELETE';
    startChildChange(call, lb, listenerIds, () => {
      mapOf(call, kind).delete(id);
      if (kind === 'listener') return;
      if (kind === 'healthmonitor') for (const m of s.membersOf((o as HealthMonitorRecord).pool_id)) m.operating_status = 'NO_MONITOR';
      if (kind === 'pool') {
        for (const l of s.listenersOfPool(id)) l.default_pool_id = null;
        for (const m of s.membersOf(id)) s.members.delete(m.id);
        const hm = s.monitorOf(id);
        if (hm) s.healthmonitors.delete(hm.id);
      }
    });
    return { status: 204 };
  },

  /** `PUT /pools/{id}/members {"members": [...]}`: the pool's members become exactly these (or only these added). */
  batch(call: OctaviaCall, poolId: string) {
    const s = call.store;
    const pool = findObject(call, s.pools, poolId, 'Pool');
    const body = call.body as { members?: unknown } | undefined;
    if (!body || !Array.isArray(body.members)) throw octaviaError(400, "Invalid input for field/attribute members. Value: 'None'. Mandatory field missing.");
    const wanted = (body.members as unknown[]).map((m) => checkFields((m ?? {}) as Record<string, unknown>, 'members', memberFields, ['address', 'protocol_port']));
    const additive = (call.query.get('additive_only') ?? '').toLowerCase() === 'true';
    const { lb, listenerIds } = parents(call, 'pool', pool);
    checkChildMutable(call, lb, listenerIds);
    const existing = s.membersOf(poolId);
    const key = (m: { address?: unknown; protocol_port?: unknown }) => `${String(m.address)}|${String(m.protocol_port)}`;
    const byKey = new Map(existing.map((m) => [key(m), m]));
    const created: MemberRecord[] = [];
    const updated: MemberRecord[] = [];
    for (const attrs of wanted) {
      const old = byKey.get(key(attrs));
      if (old) {
        for (const k of updatable.member) if (attrs[k] !== undefined) (old as unknown as Record<string, unknown>)[k] = attrs[k];
        updated.push(old);
      } else {
        created.push(newMember(call, pool, attrs, created));
      }
    }
    const keep = new Set(wanted.map(key));
    const removed = additive ? [] : existing.filter((m) => !keep.has(key(m)));
    for (const m of created) s.members.set(m.id, m);
    for (const m of updated) m.provisioning_status = 'PENDING_UPDATE';
    for (const m of removed) m.provisioning_status = 'PENDING_DELETE';
    startChildChange(call, lb, listenerIds, () => {
      for (const m of [...created, ...updated]) activate(m);
      for (const m of removed) s.members.delete(m.id);
    });
    return { status: 202 };
  },
};
