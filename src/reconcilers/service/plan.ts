import type { HealthMonitor, Listener, Member, MemberCreate, Pool } from '../../openstack/index.ts';
import type { DesiredListener, ListenerFields, PoolFields } from './desired.ts';

/** What exists below one load balancer. */
export interface LbChildren {
  listeners: readonly Listener[];
  pools: readonly Pool[];
  /** Members by pool id (pools that are the default pool of a wanted listener). */
  members: ReadonlyMap<string, readonly Member[]>;
  /** Health monitors by pool id (the same pools). */
  monitors: ReadonlyMap<string, HealthMonitor>;
}

export type MonitorFields = Pick<HealthMonitor, 'delay' | 'timeout' | 'max_retries' | 'max_retries_down'>;

/**
 * The next change that brings a load balancer's children to what the Service wants. Octavia takes one change at a
 * time (the load balancer is `PENDING_UPDATE` after each), so a reconcile applies one and looks again later.
 * Removals come first (a port that changes protocol frees its number), then listeners, their pools, and members.
 */
export type Step =
  | { kind: 'deletePool'; pool: Pool }
  | { kind: 'deleteListener'; listener: Listener }
  | { kind: 'deleteMonitor'; monitor: HealthMonitor; desired: DesiredListener }
  | { kind: 'createListener'; desired: DesiredListener }
  /** `changes`: only the fields that differ. */
  | { kind: 'updateListener'; listener: Listener; desired: DesiredListener; changes: Partial<ListenerFields> }
  | { kind: 'createPool'; listener: Listener; desired: DesiredListener }
  | { kind: 'updatePool'; pool: Pool; desired: DesiredListener; changes: Partial<PoolFields> }
  | { kind: 'createMonitor'; pool: Pool; desired: DesiredListener }
  | { kind: 'updateMonitor'; monitor: HealthMonitor; desired: DesiredListener; changes: Partial<MonitorFields> }
  /** `members`: the pool's new member list (see {@link memberUpdate}). */
  | { kind: 'updateMembers'; pool: Pool; desired: DesiredListener; members: MemberCreate[] };

export const listenerKey = (l: Pick<Listener, 'protocol' | 'protocol_port'>): string =>
  `${l.protocol}:${l.protocol_port}`;

const memberKey = (m: Pick<MemberCreate, 'address' | 'protocol_port' | 'subnet_id'>): string =>
  `${m.address}|${m.protocol_port}|${m.subnet_id ?? ''}`;

/** Whether a pool's members are the wanted ones (address, port, subnet; weights and names are not Raven's). */
export function sameMembers(actual: readonly Member[], wanted: readonly MemberCreate[]): boolean {
  const have = new Set(actual.map((m) => memberKey({ ...m, subnet_id: m.subnet_id ?? undefined })));
  return have.size === wanted.length && wanted.every((m) => have.has(memberKey(m)));
}

/**
 * The member list to send in a batch update. Octavia matches members on address + port and never changes a matched
 * member's `subnet_id`, so a member whose subnet must change is left out of this batch (deleted) and comes back in
 * the next one.
 */
export function memberUpdate(actual: readonly Member[], wanted: readonly MemberCreate[]): MemberCreate[] {
  const subnetOf = new Map(actual.map((m) => [`${m.address}|${m.protocol_port}`, m.subnet_id ?? undefined]));
  return wanted.filter((m) => {
    const key = `${m.address}|${m.protocol_port}`;
    return !subnetOf.has(key) || subnetOf.get(key) === m.subnet_id;
  });
}

/**
 * Every step, in the order they would be applied, that brings the children to the desired listeners. A listener yet
 * to be made is one step (its pool and members come after it, as later steps).
 */
export function allSteps(desired: readonly DesiredListener[], actual: LbChildren): Step[] {
  const wanted = new Map(desired.map((d) => [d.key, d]));
  const listeners = new Map<string, Listener>();
  for (const l of actual.listeners) {
    const key = listenerKey(l);
    // A second listener on the same key cannot exist in Octavia; keep the first if it ever does.
    if (wanted.has(key) && !listeners.has(key)) listeners.set(key, l);
  }
  const keptPools = new Map<string, DesiredListener>();
  for (const [key, l] of listeners) {
    const pool = l.default_pool_id ? actual.pools.find((p) => p.id === l.default_pool_id) : undefined;
    const d = wanted.get(key);
    // A pool's protocol cannot change (PUT refuses it): another protocol means another pool.
    if (d && pool && pool.protocol === d.poolProtocol) keptPools.set(pool.id, d);
  }
  const steps: Step[] = [];
  for (const pool of actual.pools) if (!keptPools.has(pool.id)) steps.push({ kind: 'deletePool', pool });
  for (const listener of actual.listeners)
    if (listeners.get(listenerKey(listener)) !== listener) steps.push({ kind: 'deleteListener', listener });
  for (const [poolId, d] of keptPools) {
    const monitor = actual.monitors.get(poolId);
    if (monitor && (!d.monitor || monitor.type !== d.monitor.type))
      steps.push({ kind: 'deleteMonitor', monitor, desired: d });
  }
  for (const d of desired) if (!listeners.has(d.key)) steps.push({ kind: 'createListener', desired: d });
  for (const d of desired) {
    const l = listeners.get(d.key);
    const changes = l && listenerChanges(l, d);
    if (l && changes) steps.push({ kind: 'updateListener', listener: l, desired: d, changes });
  }
  for (const d of desired) {
    const l = listeners.get(d.key);
    if (!l) continue;
    const pool = actual.pools.find((p) => p.id === l.default_pool_id && keptPools.has(p.id));
    if (!pool) {
      steps.push({ kind: 'createPool', listener: l, desired: d });
      continue;
    }
    const poolDiff = poolChanges(pool, d);
    if (poolDiff) steps.push({ kind: 'updatePool', pool, desired: d, changes: poolDiff });
    const monitor = actual.monitors.get(pool.id);
    if (d.monitor && (!monitor || monitor.type !== d.monitor.type))
      steps.push({ kind: 'createMonitor', pool, desired: d });
    else if (d.monitor && monitor) {
      const monitorDiff = changed(monitor, d.monitor, ['delay', 'timeout', 'max_retries', 'max_retries_down']);
      if (monitorDiff) steps.push({ kind: 'updateMonitor', monitor, desired: d, changes: monitorDiff });
    }
    const members = actual.members.get(pool.id) ?? [];
    if (!sameMembers(members, d.members))
      steps.push({ kind: 'updateMembers', pool, desired: d, members: memberUpdate(members, d.members) });
  }
  return steps;
}

/** The fields of `want` (of `keys`) that `have` lacks, or undefined when none differs. */
function changed<T extends object, K extends keyof T>(have: T, want: T, keys: readonly K[]): Pick<T, K> | undefined {
  const diff = keys.filter((k) => JSON.stringify(have[k] ?? null) !== JSON.stringify(want[k] ?? null));
  return diff.length > 0 ? (Object.fromEntries(diff.map((k) => [k, want[k]])) as Pick<T, K>) : undefined;
}

const sortedCidrs = (list: readonly string[] | null | undefined): string[] | null =>
  list && list.length > 0 ? [...list].sort() : null;

/** What an existing listener lacks of the desired fields (Octavia answers `allowed_cidrs: null` for none). */
export function listenerChanges(l: Listener, d: DesiredListener): Partial<ListenerFields> | undefined {
  const have: ListenerFields = {
    connection_limit: l.connection_limit,
    timeout_client_data: l.timeout_client_data,
    timeout_member_connect: l.timeout_member_connect,
    timeout_member_data: l.timeout_member_data,
    timeout_tcp_inspect: l.timeout_tcp_inspect,
    allowed_cidrs: sortedCidrs(l.allowed_cidrs),
    insert_headers: l.insert_headers ?? {},
  };
  const want = { ...d.listener, allowed_cidrs: sortedCidrs(d.listener.allowed_cidrs) };
  const keys = Object.keys(want) as (keyof ListenerFields)[];
  // Only an HTTP listener takes headers (a 400 on TCP): never send the empty set to one that cannot have any.
  return changed(have, want, d.listenerProtocol === 'HTTP' ? keys : keys.filter((k) => k !== 'insert_headers'));
}

/** What an existing pool lacks of the desired algorithm and session persistence. */
export function poolChanges(p: Pool, d: DesiredListener): Partial<PoolFields> | undefined {
  const have: PoolFields = { lb_algorithm: p.lb_algorithm, session_persistence: p.session_persistence };
  return changed(have, d.pool, ['lb_algorithm', 'session_persistence']);
}

/** The next step, or undefined when the load balancer's children match the desired listeners. */
export function nextStep(desired: readonly DesiredListener[], actual: LbChildren): Step | undefined {
  return allSteps(desired, actual)[0];
}

/** The monitor fields Raven sets. */
export const monitorFields = (d: DesiredListener): MonitorFields => {
  const { delay = 0, timeout = 0, max_retries = 1, max_retries_down = 3 } = d.monitor ?? {};
  return { delay, timeout, max_retries, max_retries_down };
};
