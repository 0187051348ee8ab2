import type { Listener, Member, MemberCreate, Pool } from '../../openstack/index.ts';
import type { DesiredListener } from './desired.ts';

/** What exists below one load balancer. */
export interface LbChildren {
  listeners: readonly Listener[];
  pools: readonly Pool[];
  /** Members by pool id (pools that are the default pool of a wanted listener). */
  members: ReadonlyMap<string, readonly Member[]>;
}

/**
 * The next change that brings a load balancer's children to what the Service wants. Octavia takes one change at a
 * time (the load balancer is `PENDING_UPDATE` after each), so a reconcile applies one and looks again later.
 * Removals come first (a port that changes protocol frees its number), then listeners, their pools, and members.
 */
export type Step =
  | { kind: 'deletePool'; pool: Pool }
  | { kind: 'deleteListener'; listener: Listener }
  | { kind: 'createListener'; desired: DesiredListener }
  | { kind: 'createPool'; listener: Listener; desired: DesiredListener }
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
    if (d && pool && pool.protocol === d.protocol && pool.lb_algorithm === 'ROUND_ROBIN') keptPools.set(pool.id, d);
  }
  const steps: Step[] = [];
  for (const pool of actual.pools) if (!keptPools.has(pool.id)) steps.push({ kind: 'deletePool', pool });
  for (const listener of actual.listeners)
    if (listeners.get(listenerKey(listener)) !== listener) steps.push({ kind: 'deleteListener', listener });
  for (const d of desired) if (!listeners.has(d.key)) steps.push({ kind: 'createListener', desired: d });
  for (const d of desired) {
    const l = listeners.get(d.key);
    if (!l) continue;
    const pool = actual.pools.find((p) => p.id === l.default_pool_id && keptPools.has(p.id));
    if (!pool) {
      steps.push({ kind: 'createPool', listener: l, desired: d });
      continue;
    }
    const members = actual.members.get(pool.id) ?? [];
    if (!sameMembers(members, d.members))
      steps.push({ kind: 'updateMembers', pool, desired: d, members: memberUpdate(members, d.members) });
  }
  return steps;
}

/** The next step, or undefined when the load balancer's children match the desired listeners. */
export function nextStep(desired: readonly DesiredListener[], actual: LbChildren): Step | undefined {
  return allSteps(desired, actual)[0];
}

/** A step as one line of `raven plan`. */
export function describeStep(step: Step, lbName: string): string {
  const members = (list: readonly Pick<MemberCreate, 'address' | 'protocol_port'>[]) =>
    list.map((m) => `${m.address}:${m.protocol_port}`).join(', ') || 'none';
  switch (step.kind) {
    case 'deletePool':
      return `- pool ${step.pool.name || step.pool.id} of load balancer ${lbName}`;
    case 'deleteListener':
      return `- listener ${listenerKey(step.listener)} of load balancer ${lbName}`;
    case 'createListener':
      return `+ listener ${step.desired.key} of load balancer ${lbName}, its pool and members (${members(step.desired.members)})`;
    case 'createPool':
      return `+ pool ${step.desired.name} and members (${members(step.desired.members)})`;
    case 'updateMembers':
      return `~ members of pool ${step.desired.name}: ${members(step.members)}`;
  }
}
