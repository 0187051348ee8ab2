import { octaviaError } from '../http.ts';
import {
  checkChildMutable,
  findObject,
  notFound,
  pecanError,
  startChildChange,
  validationFailure,
  visible,
  type ChangeScope,
  type OctaviaCall,
} from './common.ts';
import { bodies, memberPost } from './fields.ts';
import { checkListenerOptions, checkPoolOptions } from './options.ts';
import { listColumns, octaviaList, onlyFields } from './query.ts';
import {
  serializeListener,
  serializeMember,
  serializeMonitor,
  serializePool,
  sortTags,
  type HealthMonitorRecord,
  type ListenerRecord,
  type LoadBalancerRecord,
  type MemberRecord,
  type OctaviaBase,
  type PoolRecord,
} from './store.ts';
import { ovnCreated, ovnMembersChanged, vipCidr } from './ovn.ts';
import { ovnDriver } from './providers.ts';
import { parseBody, parseMemberList, serverError } from './wsme.ts';

/** Listeners, pools, members and health monitors: each change goes through the load balancer's PENDING_UPDATE. */
const listenerExtra = [
  'default_tls_container_ref',
  'sni_container_refs',
  'insert_headers',
  'timeout_client_data',
  'timeout_member_connect',
  'timeout_member_data',
  'timeout_tcp_inspect',
  'client_ca_tls_container_ref',
  'client_authentication',
  'client_crl_container_ref',
  'allowed_cidrs',
  'tls_ciphers',
  'tls_versions',
  'alpn_protocols',
];
const poolExtra = [
  'tls_container_ref',
  'ca_tls_container_ref',
  'crl_container_ref',
  'tls_enabled',
  'tls_ciphers',
  'tls_versions',
  'alpn_protocols',
];

/** Listener protocols that share a port space (`L4_PROTOCOL_MAP`). */
const l4: Record<string, string> = {
  TCP: 'TCP',
  HTTP: 'TCP',
  HTTPS: 'TCP',
  TERMINATED_HTTPS: 'TCP',
  PROMETHEUS: 'TCP',
  UDP: 'UDP',
  SCTP: 'SCTP',
};
/** Which pool protocols a listener protocol takes (`VALID_LISTENER_POOL_PROTOCOL_MAP`). */
const poolProtocolsFor: Record<string, string[]> = {
  TCP: ['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  HTTP: ['HTTP', 'PROXY', 'PROXYV2'],
  HTTPS: ['HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  TERMINATED_HTTPS: ['HTTP', 'PROXY', 'PROXYV2'],
  UDP: ['UDP'],
  SCTP: ['SCTP'],
  PROMETHEUS: [],
};

function pick(attrs: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => attrs[k] !== undefined && attrs[k] !== null).map((k) => [k, attrs[k]]));
}

/** Tags go into a table keyed (resource, tag) under a case-insensitive collation: a repeat is a duplicate key. */
export function checkTags(id: string, tags: unknown): void {
  if (!Array.isArray(tags)) return;
  const seen = new Set<string>();
  for (const t of tags as string[]) {
    const key = t.toLowerCase();
    if (seen.has(key))
      throw serverError(`(pymysql.err.IntegrityError) (1062, "Duplicate entry '${id}-${t}' for key 'PRIMARY'")`);
    seen.add(key);
  }
}

export function checkPoolProtocol(listenerProtocol: string, poolProtocol: string): void {
  if (!(poolProtocolsFor[listenerProtocol] ?? []).includes(poolProtocol)) {
    throw validationFailure(
      `The pool protocol '${poolProtocol}' is invalid while the listener protocol is '${listenerProtocol}'.`,
    );
  }
}

export function newListener(
  call: OctaviaCall,
  lb: LoadBalancerRecord,
  attrs: Record<string, unknown>,
  taken: ListenerRecord[] = [],
): ListenerRecord {
  const port = attrs.protocol_port as number;
  const protocol = attrs.protocol as string;
  const clash = [...call.store.listenersOf(lb.id), ...taken].find(
    (l) => l.protocol_port === port && l4[l.protocol] === l4[protocol],
  );
  if (clash)
    throw octaviaError(
      409,
      `Another Listener on this Load Balancer is already using protocol ${clash.protocol} and protocol_port ${port}`,
    );
  const base = call.store.base(lb.project_id, attrs);
  checkTags(base.id, attrs.tags);
  return {
    ...base,
    loadbalancer_id: lb.id,
    protocol,
    protocol_port: port,
    connection_limit: (attrs.connection_limit as number | null | undefined) ?? -1,
    default_pool_id: (attrs.default_pool_id as string | null | undefined) ?? null,
    extra: pick(attrs, listenerExtra),
  };
}

export function newPool(call: OctaviaCall, lb: LoadBalancerRecord, attrs: Record<string, unknown>): PoolRecord {
  const base = call.store.base(lb.project_id, attrs);
  checkTags(base.id, attrs.tags);
  return {
    ...base,
    loadbalancer_id: lb.id,
    protocol: attrs.protocol as string,
    lb_algorithm: attrs.lb_algorithm as string,
    session_persistence: attrs.session_persistence ?? null,
    extra: pick(attrs, poolExtra),
  };
}

export function newMember(
  call: OctaviaCall,
  pool: PoolRecord,
  attrs: Record<string, unknown>,
  taken: MemberRecord[] = [],
): MemberRecord {
  const address = attrs.address as string;
  const port = attrs.protocol_port as number;
  if ([...call.store.membersOf(pool.id), ...taken].some((m) => m.address === address && m.protocol_port === port)) {
    throw octaviaError(409, `Another member on this pool is already using ip ${address} on protocol_port ${port}`);
  }
  const base = call.store.base(pool.project_id, attrs);
  checkTags(base.id, attrs.tags);
  return {
    ...base,
    pool_id: pool.id,
    address,
    protocol_port: port,
    weight: (attrs.weight as number | null | undefined) ?? 1,
    backup: (attrs.backup as boolean | null | undefined) ?? false,
    subnet_id: (attrs.subnet_id as string | null | undefined) ?? null,
    monitor_address: (attrs.monitor_address as string | null | undefined) ?? null,
    monitor_port: (attrs.monitor_port as number | null | undefined) ?? null,
    // No health manager runs: a member is NO_MONITOR, or OFFLINE when its pool had a monitor when it was made.
    operating_status: call.store.monitorOf(pool.id) ? 'OFFLINE' : 'NO_MONITOR',
  };
}

export function newMonitor(call: OctaviaCall, pool: PoolRecord, attrs: Record<string, unknown>): HealthMonitorRecord {
  // Explicit nulls pass wsme; `_validate_create_hm` catches them.
  for (const k of ['type', 'delay', 'timeout', 'max_retries'])
    if (attrs[k] === null) throw octaviaError(400, `None is not a valid option for ${k}`);
  const type = attrs.type as string;
  const http = type === 'HTTP' || type === 'HTTPS';
  if (!http) {
    for (const k of ['http_method', 'url_path', 'expected_codes']) {
      if (attrs[k]) throw octaviaError(400, `${k} is not a valid option for health monitors of type ${type}`);
    }
  }
  if (attrs.domain_name && !attrs.http_version)
    throw validationFailure("'http_version' must be specified when 'domain_name' is provided.");
  if (attrs.domain_name && (attrs.http_version as number) < 1.1) {
    throw octaviaError(
      400,
      `http_version ${String(attrs.http_version)} is not a valid option for health monitors HTTP 1.1 domain name health check`,
    );
  }
  if (call.store.monitorOf(pool.id)) throw octaviaError(409, 'This pool already has a health monitor');
  const base = call.store.base(pool.project_id, attrs);
  checkTags(base.id, attrs.tags);
  return {
    ...base,
    pool_id: pool.id,
    type,
    delay: attrs.delay as number,
    timeout: attrs.timeout as number,
    max_retries: attrs.max_retries as number,
    max_retries_down: (attrs.max_retries_down as number | null | undefined) ?? 3,
    http_method: (attrs.http_method as string | undefined) || (http ? 'GET' : null),
    url_path: (attrs.url_path as string | undefined) || (http ? '/' : null),
    expected_codes: (attrs.expected_codes as string | undefined) || (http ? '200' : null),
    http_version: (attrs.http_version as number | null | undefined) ?? null,
    domain_name: (attrs.domain_name as string | null | undefined) ?? null,
  };
}

/** The OVN driver's checks of a PUT (listener, pool, member; a monitor's PUT it takes as it is). */
function ovnUpdate(
  call: OctaviaCall,
  kind: Kind,
  o: OctaviaBase,
  attrs: Record<string, unknown>,
  lb: LoadBalancerRecord,
): void {
  if (kind === 'listener') ovnDriver.allowedCidrs(attrs.allowed_cidrs);
  if (kind === 'pool' && attrs.lb_algorithm) ovnDriver.algorithm(attrs.lb_algorithm as string);
  if (kind === 'member') ovnDriver.memberUpdate((o as MemberRecord).subnet_id, attrs, vipCidr(call, lb));
}

/** The worker finished creating or updating an object: ACTIVE (a health monitor also goes ONLINE). */
function activate(call: OctaviaCall, kind: Kind, o: OctaviaBase): void {
  if (o.provisioning_status !== 'PENDING_CREATE' && o.provisioning_status !== 'PENDING_UPDATE') return;
  o.provisioning_status = 'ACTIVE';
  if (kind === 'healthmonitor') o.operating_status = 'ONLINE';
  call.store.touch(o);
}

export type Kind = 'listener' | 'pool' | 'member' | 'healthmonitor';
const names: Record<Kind, string> = {
  listener: 'Listener',
  pool: 'Pool',
  member: 'Member',
  healthmonitor: 'Health Monitor',
};
const plurals: Record<Kind, string> = {
  listener: 'listeners',
  pool: 'pools',
  member: 'members',
  healthmonitor: 'healthmonitors',
};

/** The load balancer, the listeners the change touches, and (members, monitors) the pool it locks. */
function scopeOf(call: OctaviaCall, kind: Kind, o: OctaviaBase): ChangeScope {
  const s = call.store;
  if (kind === 'listener')
    return { lb: s.loadbalancers.get((o as ListenerRecord).loadbalancer_id)!, listenerIds: [o.id] };
  const pool = kind === 'pool' ? (o as PoolRecord) : s.pools.get((o as MemberRecord | HealthMonitorRecord).pool_id)!;
  const lb = s.loadbalancers.get(pool.loadbalancer_id)!;
  return {
    lb,
    listenerIds: s.listenersOfPool(pool.id).map((l) => l.id),
    ...(kind === 'pool' ? {} : { pool }),
    ...(kind === 'healthmonitor' && lb.provider === 'ovn' ? { listenersUnreported: true } : {}),
  };
}

function mapOf(call: OctaviaCall, kind: Kind): Map<string, OctaviaBase> {
  const s = call.store;
  return kind === 'listener'
    ? s.listeners
    : kind === 'pool'
      ? s.pools
      : kind === 'member'
        ? s.members
        : s.healthmonitors;
}

function serialize(call: OctaviaCall, kind: Kind, o: OctaviaBase): Record<string, unknown> {
  if (kind === 'listener') return serializeListener(call.store, o as ListenerRecord);
  if (kind === 'pool') return serializePool(call.store, o as PoolRecord);
  if (kind === 'member') return serializeMember(o as MemberRecord);
  return serializeMonitor(o as HealthMonitorRecord);
}

/** What a PUT of `null` puts back (`_set_default_on_none`). */
const resetTo: Record<string, unknown> = {
  admin_state_up: true,
  connection_limit: -1,
  weight: 1,
  backup: false,
  max_retries_down: 3,
};

const putBodies = {
  listener: bodies.listenerPut,
  pool: bodies.poolPut,
  member: bodies.memberPut,
  healthmonitor: bodies.healthmonitorPut,
};

/** The pool of a `/pools/{id}/members` route: pecan's 404 (not the wsme fault) when it does not exist. */
export function memberPool(call: OctaviaCall, poolId: string): PoolRecord {
  const pool = call.store.pools.get(poolId);
  if (!pool) throw pecanError(404, 'Bad Request', `Pool ${poolId} not found.`);
  return findObject(call, call.store.pools, poolId, 'Pool');
}

export const children = {
  list(call: OctaviaCall, kind: Kind, poolId?: string) {
    const map = mapOf(call, kind);
    let records = [...map.values()].filter((o) => visible(call, o));
    if (kind === 'member') records = records.filter((m) => (m as MemberRecord).pool_id === poolId);
    const special =
      kind === 'pool'
        ? { healthmonitor_id: (r: OctaviaBase, wanted: string) => call.store.monitorOf(r.id)?.id === wanted }
        : undefined;
    const href =
      kind === 'member' ? `${call.href}/lbaas/pools/${poolId}/members` : `${call.href}/lbaas/${plurals[kind]}`;
    const body = octaviaList({
      call,
      records,
      columns: listColumns[kind],
      serialize: (o) => serialize(call, kind, o),
      plural: plurals[kind],
      href,
      all: map,
      ...(special ? { special } : {}),
    });
    return { status: 200, body };
  },

  get(call: OctaviaCall, kind: Kind, id: string, poolId?: string) {
    const o = findObject(call, mapOf(call, kind), id, names[kind]);
    if (poolId !== undefined && (o as MemberRecord).pool_id !== poolId) throw notFound(names[kind], id);
    return { status: 200, body: { [kind]: onlyFields(serialize(call, kind, o), call.query) } };
  },

  create(call: OctaviaCall, kind: Kind, poolIdFromPath?: string) {
    const s = call.store;
    let o: OctaviaBase;
    let scope: ChangeScope;
    if (kind === 'listener') {
      const attrs = parseBody(call.body, bodies.listenerPost);
      const lb = findObject(call, s.loadbalancers, attrs.loadbalancer_id as string, 'Load Balancer');
      checkChildMutable(lb);
      // An explicit null passes wsme; the NOT NULL column fails, and Octavia blames the protocol.
      if (attrs.protocol_port === null)
        throw octaviaError(400, `${attrs.protocol as string} is not a valid option for protocol`);
      if (attrs.default_pool_id) {
        const pool = s.pools.get(attrs.default_pool_id as string);
        if (!pool || pool.loadbalancer_id !== lb.id) throw notFound('Pool', attrs.default_pool_id as string);
        checkPoolProtocol(attrs.protocol as string, pool.protocol);
      }
      checkListenerOptions(attrs.protocol as string, lb.vip_address, attrs);
      o = newListener(call, lb, attrs);
      if (lb.provider === 'ovn') ovnDriver.listener(attrs.protocol as string, attrs.allowed_cidrs);
      scope = { lb, listenerIds: [] };
    } else if (kind === 'pool') {
      const attrs = parseBody(call.body, bodies.poolPost);
      let listener: ListenerRecord | undefined;
      let lbId = attrs.loadbalancer_id as string | undefined;
      if (!lbId && attrs.listener_id) {
        listener = s.listeners.get(attrs.listener_id as string);
        if (!listener) throw serverError("'NoneType' object has no attribute 'load_balancer_id'");
        lbId = listener.loadbalancer_id;
      }
      if (!lbId) throw validationFailure('Must provide at least one of: loadbalancer_id, listener_id');
      const lb = findObject(call, s.loadbalancers, lbId, 'Load Balancer');
      if (listener) {
        if (listener.protocol === 'PROMETHEUS')
          throw octaviaError(400, 'Protocol PROMETHEUS listeners cannot have child objects.');
        checkPoolProtocol(listener.protocol, attrs.protocol as string);
      }
      const target = attrs.listener_id ? s.listeners.get(attrs.listener_id as string) : undefined;
      if (target?.default_pool_id) throw octaviaError(409, 'This listener already has a default pool');
      checkPoolOptions(lb.provider, attrs.protocol as string, attrs);
      checkChildMutable(lb);
      o = newPool(call, lb, attrs);
      if (lb.provider === 'ovn') {
        ovnDriver.protocol(attrs.protocol as string);
        ovnDriver.algorithm(attrs.lb_algorithm as string);
      }
      if (target) target.default_pool_id = o.id;
      scope = { lb, listenerIds: target ? [target.id] : [] };
    } else {
      const attrs =
        kind === 'member' ? parseBody(call.body, bodies.memberPost) : parseBody(call.body, bodies.healthmonitorPost);
      const pool =
        kind === 'member'
          ? memberPool(call, poolIdFromPath!)
          : findObject(call, s.pools, attrs.pool_id as string, 'Pool');
      scope = { ...scopeOf(call, 'pool', pool), pool };
      if (kind === 'healthmonitor' && scope.lb.provider === 'ovn') scope.listenersUnreported = true;
      if (kind === 'member' && attrs.subnet_id && !call.neutron.store.subnets.has(attrs.subnet_id as string))
        throw octaviaError(400, `Subnet ${attrs.subnet_id as string} not found.`);
      checkChildMutable(scope.lb, pool);
      o = kind === 'member' ? newMember(call, pool, attrs) : newMonitor(call, pool, attrs);
      if (scope.lb.provider === 'ovn') {
        if (kind === 'member') ovnDriver.member(attrs, scope.lb.vip_address, vipCidr(call, scope.lb));
        else ovnDriver.monitorType(attrs.type as string);
      }
    }
    mapOf(call, kind).set(o.id, o);
    const body = { [kind]: serialize(call, kind, o) };
    const ovn = scope.lb.provider === 'ovn';
    startChildChange(call, scope, () => {
      activate(call, kind, o);
      if (ovn) ovnCreated(call, kind, o);
    });
    return { status: 201, body };
  },

  update(call: OctaviaCall, kind: Kind, id: string, poolId?: string) {
    const attrs = parseBody(call.body, putBodies[kind]);
    const o =
      kind === 'member' ? children.member(call, poolId!, id) : findObject(call, mapOf(call, kind), id, names[kind]);
    const s = call.store;
    const scope = scopeOf(call, kind, o);
    if (kind === 'listener' && attrs.default_pool_id) {
      const pool = s.pools.get(attrs.default_pool_id as string);
      if (!pool || pool.loadbalancer_id !== scope.lb.id) throw notFound('Pool', attrs.default_pool_id as string);
      checkPoolProtocol((o as ListenerRecord).protocol, pool.protocol);
    }
    if (kind === 'listener') checkListenerOptions((o as ListenerRecord).protocol, scope.lb.vip_address, attrs);
    if (kind === 'pool') checkPoolOptions(scope.lb.provider, (o as PoolRecord).protocol, attrs);
    checkChildMutable(scope.lb, scope.pool);
    if (scope.lb.provider === 'ovn') ovnUpdate(call, kind, o, attrs, scope.lb);
    checkTags(o.id, attrs.tags);
    const record = o as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'tags') o.tags = sortTags((v as string[] | null) ?? []);
      else if (k in record && k !== 'extra') record[k] = v ?? resetTo[k] ?? null;
      else if (v === null) delete (record.extra as Record<string, unknown>)[k];
      else (record.extra as Record<string, unknown>)[k] = v;
    }
    o.provisioning_status = 'PENDING_UPDATE';
    s.touch(o);
    const body = { [kind]: serialize(call, kind, o) };
    // The OVN driver reports a listener's or pool's operating status when the PUT carried admin_state_up.
    const reportsUp = scope.lb.provider === 'ovn' && attrs.admin_state_up !== undefined;
    startChildChange(call, scope, () => {
      activate(call, kind, o);
      if (reportsUp && (kind === 'listener' || kind === 'pool'))
        o.operating_status = o.admin_state_up ? 'ONLINE' : 'OFFLINE';
    });
    return { status: 200, body };
  },

  delete(call: OctaviaCall, kind: Kind, id: string, poolId?: string) {
    const s = call.store;
    const o =
      kind === 'member' ? children.member(call, poolId!, id) : findObject(call, mapOf(call, kind), id, names[kind]);
    const scope = scopeOf(call, kind, o);
    checkChildMutable(scope.lb, scope.pool);
    o.provisioning_status = 'PENDING_DELETE';
    s.touch(o);
    startChildChange(
      call,
      { ...scope, ...(kind === 'listener' ? { listenerStatus: 'PENDING_DELETE' as const } : {}) },
      () => {
        mapOf(call, kind).delete(id);
        if (kind === 'member' && scope.lb.provider === 'ovn') ovnMembersChanged(call, scope.pool!.id);
        // The OVN driver leaves the members' operating statuses as the last health check set them.
        if (kind === 'healthmonitor' && scope.lb.provider !== 'ovn')
          for (const m of s.membersOf((o as HealthMonitorRecord).pool_id)) m.operating_status = 'NO_MONITOR';
        if (kind === 'pool') {
          for (const l of s.listenersOfPool(id)) {
            l.default_pool_id = null;
            s.touch(l);
          }
          for (const m of s.membersOf(id)) s.members.delete(m.id);
          const hm = s.monitorOf(id);
          if (hm) s.healthmonitors.delete(hm.id);
        }
      },
    );
    return { status: 204 };
  },

  /** A member below its pool: pecan's 404 for a missing pool, Octavia's for a member of another pool. */
  member(call: OctaviaCall, poolId: string, id: string): MemberRecord {
    memberPool(call, poolId);
    const m = findObject(call, call.store.members, id, 'Member');
    if (m.pool_id !== poolId) throw notFound('Member', id);
    return m;
  },

  /**
   * `PUT /pools/{id}/members {"members": [...]}`: the pool's members become exactly these (or only these are added):
   * matched on address + port, new ones created, matched ones updated, the rest deleted. 202, no body.
   */
  batch(call: OctaviaCall, poolId: string) {
    const s = call.store;
    const wanted = parseMemberList(call.body, memberPost);
    const pool = memberPool(call, poolId);
    const additive = ['1', 't', 'true', 'on', 'y', 'yes'].includes(
      (call.query.get('additive_only') ?? '').toLowerCase(),
    );
    const scope: ChangeScope = { ...scopeOf(call, 'pool', pool), pool };
    checkChildMutable(scope.lb, pool);
    const existing = s.membersOf(poolId);
    const key = (m: { address?: unknown; protocol_port?: unknown }) =>
      `${String(m.address)}|${String(m.protocol_port)}`;
    const byKey = new Map(existing.map((m) => [key(m), m]));
    const keep = new Set(wanted.map(key));
    const removed = additive ? [] : existing.filter((m) => !keep.has(key(m)));
    const fresh = wanted.filter((w) => !byKey.has(key(w)));
    // Nothing new, nothing matched, nothing to delete: Octavia rolls back and changes nothing.
    if (wanted.length === 0 && existing.length === 0) return { status: 202 };
    for (const attrs of fresh) {
      if (attrs.subnet_id && !call.neutron.store.subnets.has(attrs.subnet_id as string))
        throw notFound('Subnet', attrs.subnet_id as string);
    }
    const created: MemberRecord[] = [];
    for (const attrs of fresh) created.push(newMember(call, pool, attrs, created));
    const updated: [MemberRecord, Record<string, unknown>][] = wanted
      .filter((w) => byKey.has(key(w)))
      .map((w) => [byKey.get(key(w))!, w]);
    if (scope.lb.provider === 'ovn') {
      // The driver is handed the new members, then the updated ones, then (additive) those left as they are.
      const untouched = additive ? existing.filter((m) => !updated.some(([x]) => x === m)) : [];
      const refusal = ovnDriver.batch(
        [...created, ...updated.map(([m, attrs]) => ({ ...attrs, id: m.id, subnet_id: m.subnet_id })), ...untouched],
        scope.lb.vip_address,
        vipCidr(call, scope.lb),
      );
      if (refusal) {
        // Octavia rolls its own records back, but the driver has already deleted the members left out of the batch
        // in OVN, and its status report (DELETED) removes them from Octavia too (measured on Zed). The members it
        // created are in OVN only: Octavia never hears of them.
        for (const m of removed) s.members.delete(m.id);
        ovnMembersChanged(call, pool.id);
        throw refusal;
      }
    }
    for (const m of created) s.members.set(m.id, m);
    for (const [m, attrs] of updated) {
      for (const k of ['name', 'admin_state_up', 'weight', 'backup', 'monitor_address', 'monitor_port']) {
        const v = attrs[k];
        if (v !== undefined)
          (m as unknown as Record<string, unknown>)[k] = v ?? (k === 'weight' ? 1 : k === 'backup' ? false : null);
      }
      if (attrs.tags !== undefined) m.tags = sortTags((attrs.tags as string[] | null) ?? []);
      m.provisioning_status = 'PENDING_UPDATE';
      s.touch(m);
    }
    for (const m of removed) {
      m.provisioning_status = 'PENDING_DELETE';
      s.touch(m);
    }
    // An existing member listed twice makes Zed's worker fail to build its flow (duplicate task names): nothing is
    // reverted and the load balancer, listeners, pool and members stay PENDING_UPDATE for good.
    const twice = updated.some(([m], i) => updated.findIndex(([x]) => x === m) !== i);
    startChildChange(
      call,
      scope,
      () => {
        for (const m of [...created, ...updated.map(([x]) => x)]) activate(call, 'member', m);
        for (const m of removed) s.members.delete(m.id);
        if (scope.lb.provider === 'ovn') {
          for (const m of created) ovnCreated(call, 'member', m);
          ovnMembersChanged(call, pool.id);
        }
      },
      twice,
    );
    return { status: 202 };
  },
};
