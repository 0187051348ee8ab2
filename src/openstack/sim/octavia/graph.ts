import { isObject } from '../http.ts';
import { checkFields, validationFailure, type OctaviaCall } from './common.ts';
import { listenerFields, memberFields, monitorFields, newListener, newMember, newMonitor, newPool, poolFields } from './children.ts';
import type { HealthMonitorRecord, ListenerRecord, LoadBalancerRecord, MemberRecord, PoolRecord } from './store.ts';

/**
 * A fully populated load balancer (`_graph_create`): listeners with default pools given in full or by name, pools
 * with members and a health monitor, all created with the load balancer and going ACTIVE with it.
 */
export interface Graph {
  listeners: ListenerRecord[];
  pools: PoolRecord[];
  members: MemberRecord[];
  monitors: HealthMonitorRecord[];
}

const asList = (v: unknown, name: string): Record<string, unknown>[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => !isObject(x))) throw validationFailure(`${name} must be a list of objects.`);
  return v as Record<string, unknown>[];
};

/** Checks the whole graph; `commit()` then creates it (only once the VIP exists). Undefined when there is none. */
export function buildGraph(call: OctaviaCall, lbId: string, project: string, listenersIn: unknown, poolsIn: unknown): { commit(): Graph } | undefined {
  const listeners = asList(listenersIn, 'listeners').map((l) => ({ ...l }));
  const pools = asList(poolsIn, 'pools').map((p) => ({ ...p }));
  if (listeners.length === 0 && pools.length === 0) return undefined;
  const required = new Set<string>();
  for (const l of listeners) {
    const dp = l.default_pool;
    if (dp === undefined || dp === null) continue;
    if (!isObject(dp) || typeof dp.name !== 'string' || dp.name === '') throw validationFailure('Pools must be named when creating a fully populated loadbalancer.');
    if (Object.keys(dp).length > 1) {
      pools.push(dp);
      l.default_pool = { name: dp.name };
    } else required.add(dp.name);
  }
  const names = pools.map((p) => p.name);
  if (new Set(names).size !== names.length) throw validationFailure('Pool names must be unique when creating a fully populated loadbalancer.');
  for (const name of required) if (!names.includes(name)) throw validationFailure(`Pool '${name}' was referenced but no full definition was found.`);
  for (const p of pools) {
    for (const attr of ['protocol', 'lb_algorithm']) if (p[attr] === undefined) throw validationFailure(`Pool definition for '${String(p.name)}' missing required attribute: ${attr}`);
  }
  const poolSpecs = pools.map((p) => {
    const { members, healthmonitor, ...rest } = p;
    return { attrs: checkFields(rest, 'pools', poolFields, ['protocol', 'lb_algorithm']), members: asList(members, 'members').map((m) => checkFields(m, 'members', memberFields, ['address', 'protocol_port'])), monitor: isObject(healthmonitor) ? checkFields(healthmonitor, 'healthmonitor', monitorFields, ['type', 'delay', 'timeout', 'max_retries']) : undefined };
  });
  const listenerSpecs = listeners.map((l) => {
    const { default_pool, l7policies: _l7, ...rest } = l;
    return { attrs: checkFields(rest, 'listeners', listenerFields, ['protocol', 'protocol_port']), pool: (default_pool as { name?: string } | undefined)?.name };
  });
  // A stand-in LB for the checks that need one (duplicate listener ports); the real one is made after the VIP.
  const probe = { id: lbId, project_id: project } as LoadBalancerRecord;
  const dry: ListenerRecord[] = [];
  for (const { attrs } of listenerSpecs) dry.push(newListener(call, probe, attrs, dry));
  for (const spec of poolSpecs) {
    const pool = { id: `probe-${lbId}`, project_id: project } as PoolRecord;
    const members: MemberRecord[] = [];
    for (const attrs of spec.members) members.push(newMember(call, pool, attrs, members));
  }
  return {
    commit(): Graph {
      const lb = call.store.loadbalancers.get(lbId)!;
      const graph: Graph = { listeners: [], pools: [], members: [], monitors: [] };
      const poolIds = new Map<string, string>();
      for (const spec of poolSpecs) {
        const pool = newPool(call, lb, spec.attrs);
        call.store.pools.set(pool.id, pool);
        poolIds.set(pool.name, pool.id);
        graph.pools.push(pool);
        if (spec.monitor) {
          const hm = newMonitor(call, pool, spec.monitor);
          call.store.healthmonitors.set(hm.id, hm);
          graph.monitors.push(hm);
        }
        for (const attrs of spec.members) {
          const m = newMember(call, pool, attrs, graph.members.filter((x) => x.pool_id === pool.id));
          call.store.members.set(m.id, m);
          graph.members.push(m);
        }
      }
      for (const spec of listenerSpecs) {
        const l = newListener(call, lb, { ...spec.attrs, default_pool_id: spec.pool ? poolIds.get(spec.pool) : null });
        call.store.listeners.set(l.id, l);
        graph.listeners.push(l);
      }
      return graph;
    },
  };
}
