import { octaviaError } from '../http.ts';
import { validationFailure, type OctaviaCall } from './common.ts';
import { checkPoolProtocol, newListener, newMember, newMonitor, newPool } from './children.ts';
import type { HealthMonitorRecord, ListenerRecord, LoadBalancerRecord, MemberRecord, PoolRecord } from './store.ts';

/**
 * A fully populated load balancer (`LoadBalancersController._graph_create`): listeners with default pools given in
 * full or by name, pools with members and a health monitor. The request types were checked by wsme already; this is
 * the controller's part, which runs after the VIP port exists (so a failure here leaves that port behind, as real
 * Octavia does).
 *
 * On Zed the children never go ACTIVE: the API casts the create to the worker before committing them, the worker
 * reads the load balancer without its listeners and marks only the load balancer ACTIVE. Listeners, pools, members
 * and the monitor stay PENDING_CREATE (10 runs out of 10 against real Octavia); they can still be cascade-deleted.
 */
export interface Graph {
  listeners: ListenerRecord[];
  pools: PoolRecord[];
  members: MemberRecord[];
  monitors: HealthMonitorRecord[];
}

/** Checks and builds the graph below `lb`; nothing is stored until everything passed. */
export function buildGraph(
  call: OctaviaCall,
  lb: LoadBalancerRecord,
  listenersIn: Record<string, unknown>[],
  poolsIn: Record<string, unknown>[],
): Graph {
  const listeners = listenersIn.map((l) => ({ ...l }));
  const pools = poolsIn.map((p) => ({ ...p }));
  const required = new Set<string>();
  for (const l of listeners) {
    const dp = l.default_pool as Record<string, unknown> | null | undefined;
    if (!dp) continue;
    if (typeof dp.name !== 'string' || dp.name === '')
      throw validationFailure('Pools must be named when creating a fully populated loadbalancer.');
    // More than a name is a full definition (Octavia counts the defaults it adds too: "> 3").
    if (Object.keys(dp).length > 1) {
      pools.push(dp);
      l.default_pool = { name: dp.name };
    } else {
      required.add(dp.name);
    }
  }
  const names = pools.map((p) => p.name);
  if (new Set(names).size !== names.length)
    throw validationFailure('Pool names must be unique when creating a fully populated loadbalancer.');
  for (const name of required)
    if (!names.includes(name))
      throw validationFailure(`Pool '${name}' was referenced but no full definition was found.`);

  const graph: Graph = { listeners: [], pools: [], members: [], monitors: [] };
  const byName = new Map<unknown, PoolRecord>();
  for (const p of pools) {
    for (const attr of ['protocol', 'lb_algorithm']) {
      if (p[attr] === undefined || p[attr] === null)
        throw validationFailure(`Pool definition for '${String(p.name)}' missing required attribute: ${attr}`);
    }
    const { members, healthmonitor, ...rest } = p;
    const pool = newPool(call, lb, rest);
    graph.pools.push(pool);
    byName.set(pool.name, pool);
    if (healthmonitor) {
      const hmAttrs = healthmonitor as Record<string, unknown>;
      if (
        ['UDP', 'SCTP'].includes(pool.protocol) === false &&
        ['UDP-CONNECT', 'SCTP'].includes(hmAttrs.type as string)
      ) {
        throw validationFailure(`The ${String(hmAttrs.type)} type is only supported for pools of type UDP/SCTP.`);
      }
      graph.monitors.push(newMonitor(call, pool, hmAttrs));
    }
    const made: MemberRecord[] = [];
    for (const m of (members as Record<string, unknown>[] | null | undefined) ?? [])
      made.push(newMember(call, pool, m, made));
    // A member's operating status comes from whether its pool has a monitor (real Zed is not consistent here: it
    // answers NO_MONITOR or OFFLINE depending on what SQLAlchemy loaded; OFFLINE is what the data says).
    for (const m of made)
      m.operating_status = graph.monitors.some((h) => h.pool_id === pool.id) ? 'OFFLINE' : 'NO_MONITOR';
    graph.members.push(...made);
  }
  for (const l of listeners) {
    const { default_pool, l7policies: _l7, ...rest } = l;
    const pool = default_pool ? byName.get((default_pool as { name: string }).name) : undefined;
    if (pool) {
      if (rest.protocol === 'PROMETHEUS')
        throw octaviaError(400, 'Protocol PROMETHEUS listeners cannot have child objects.');
      checkPoolProtocol(rest.protocol as string, pool.protocol);
    }
    const listener = newListener(call, lb, { ...rest, default_pool_id: pool?.id ?? null }, graph.listeners);
    // Linking the default pool writes the listener row again.
    listener.updated_at = listener.created_at;
    graph.listeners.push(listener);
  }
  return graph;
}

/** Stores a built graph. */
export function commitGraph(call: OctaviaCall, graph: Graph): void {
  const s = call.store;
  for (const p of graph.pools) s.pools.set(p.id, p);
  for (const h of graph.monitors) s.healthmonitors.set(h.id, h);
  for (const m of graph.members) s.members.set(m.id, m);
  for (const l of graph.listeners) s.listeners.set(l.id, l);
}
