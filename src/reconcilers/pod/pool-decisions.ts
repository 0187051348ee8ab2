import type { PoolSizes, ReconcilerConfig } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';
import { DEFAULT_REFILL_SECONDS, poolTarget } from './pool-sizing.ts';
import type { PoolPlace, PoolState } from './pools.ts';

/**
 * What one pool needs now — one action on one pool, never two: `refill` makes `make` ports at `place`; `trim` deletes
 * the surplus above `max`; `drain` deletes every free port of a pool that goes (it is forgotten once empty).
 */
export interface PoolChange {
  kind: 'refill' | 'trim' | 'drain';
  key: string;
  /** Ports to make (a refill): 0 when the namespace's share left no room (`capped` says whose). */
  make: number;
  /** Free ports to delete (trim, drain). */
  remove: RecordedPort[];
  why: string;
  /** The namespace whose pool-port share cut this refill short (or left it out). */
  capped?: string;
  /** The ports of this refill counted against a namespace's share (while in flight too). */
  charge?: { namespace: string; ports: number };
  /** Where a refill's ports are made: the pool's network, subnets, node and groups. */
  place: PoolPlace;
}

/** Everything a node's pool decision reads. Lookups are reads of caches that are current when it is made. */
export interface PoolWorld {
  node: string;
  /** Whether the Node exists (a gone node's pools are drained). */
  nodeExists: boolean;
  /** The node's pools. */
  pools: readonly PoolState[];
  /** Every node's pools, sets and free counts (the namespace shares count them all); read only when a share applies. */
  everyPool: () => Iterable<{ securityGroups: readonly string[]; subnetIds: readonly string[]; free: number }>;
  /** Ports of refills in flight, by namespace: counted against its share (two nodes refill at once). */
  making: ReadonlyMap<string, number>;
  /** Who a subnet is for: a namespace (or the cluster, `{}`), `'gone'`, or undefined while not known yet. */
  subnetOwner: (subnetId: string) => { namespace?: string } | 'gone' | undefined;
  /** Whether a pod that wants a port runs on the node (of that namespace, with those groups, when given). */
  inUse: (node: string, namespace: string | undefined, groups?: readonly string[]) => boolean;
  /** With the NetworkPolicy translation: whether every group of a set is still wanted. */
  groupsWanted?: ((groups: readonly string[]) => boolean) | undefined;
  /** With the NetworkPolicy translation: the namespace whose policies made a set (its share counts the set's ports). */
  setNamespace?: ((groups: readonly string[]) => string | undefined) | undefined;
  config: Pick<ReconcilerConfig, 'portPools' | 'quotas'>;
  /** How long a refill took lately (s; adaptive sizing): undefined before the first. */
  refillSeconds?: number | undefined;
  /** The clock's now (ms). */
  now: number;
}

/**
 * The pool decision for one node: what each of its pools needs now, in the order of its pools. Reads only its
 * argument, so `raven plan` and the reconcile that acts on it cannot disagree. A pool goes (drain) when its node is
 * gone, its subnet is no pod subnet now, a group of its set is no longer wanted, or it is idle (no take or give for
 * `idleSeconds`, and no pod of its subnet's namespace — of its set, with the translation — on the node); a pool whose
 * subnet is not known yet is left as it is. Otherwise, with static sizes: above `max` → the free ports past the first
 * `max` are deleted (those that joined last); below `min` → one refill of at least `batch`, never past `max` nor the
 * namespace's share. With adaptive sizes ({@link poolTarget}): above `max` → trimmed to `max`; above its target and
 * idle for `trimIdleSeconds` → trimmed to the target; below its target → one refill of the deficit (at least `batch`,
 * never past `max`), never past the namespace's share (which counts, for a pool of a namespace's subnet, its ports
 * above `min`).
 */
export function decidePoolChanges(world: PoolWorld): PoolChange[] {
  const { node, nodeExists, config } = world;
  const out: PoolChange[] = [];
  const share = shares(world);
  for (const pool of world.pools) {
    const place: PoolPlace = {
      node: pool.node,
      networkId: pool.networkId,
      subnetIds: pool.subnetIds,
      securityGroups: pool.securityGroups,
    };
    const owners = pool.subnetIds.map((id) => world.subnetOwner(id));
    const gone = owners.includes('gone');
    if (leftAlone(nodeExists, owners)) continue;
    const owner = owners.find((o) => typeof o === 'object');
    const idle =
      world.now - pool.lastActivity >= config.portPools.idleSeconds * 1000 &&
      !world.inUse(node, owner?.namespace, world.groupsWanted ? pool.securityGroups : undefined);
    const stale = world.groupsWanted?.(pool.securityGroups) === false;
    const why = !nodeExists
      ? 'its node is gone'
      : gone
        ? 'its subnet is no pod subnet now'
        : stale
          ? 'a security group of its set is no longer wanted'
          : idle
            ? 'idle'
            : '';
    if (why) {
      if (pool.free.length > 0) out.push({ kind: 'drain', key: pool.key, make: 0, remove: [...pool.free], why, place });
      continue;
    }
    const sizes = poolSizes(config.portPools, owner?.namespace);
    const adaptive = isAdaptive(config.portPools, owner?.namespace);
    const free = pool.free.length;
    const trim = (keep: number, why: string) =>
      out.push({ kind: 'trim', key: pool.key, make: 0, remove: pool.free.slice(keep), why, place });
    const refill = (wanted: number, uncharged: number, why: string) => {
      // A policy set's pools count whole against its namespace's share; a namespace subnet's, their adaptive growth.
      const set = world.setNamespace?.(pool.securityGroups);
      const namespace = set ?? (adaptive ? owner?.namespace : undefined);
      const floor = set === undefined ? uncharged : 0;
      const { make, capped } = share.take(namespace, wanted, floor);
      const charge = namespace !== undefined && make > floor ? { namespace, ports: make - floor } : undefined;
      if (make > 0 || capped !== undefined)
        out.push({
          kind: 'refill',
          key: pool.key,
          make,
          remove: [],
          why,
          ...(capped !== undefined ? { capped } : {}),
          ...(charge ? { charge } : {}),
          place,
        });
    };
    if (free > sizes.max) trim(sizes.max, `above max ${sizes.max}`);
    else if (adaptive) {
      const sizing = { ...config.portPools, ...sizes };
      const t = poolTarget(pool.demand, sizing, world.refillSeconds ?? DEFAULT_REFILL_SECONDS, world.now);
      if (free > t.target && t.idle)
        trim(t.target, `above its target ${t.target}, no take for ${config.portPools.trimIdleSeconds} s`);
      else if (free < t.target) {
        // The deficit, at least a batch: a bulk create is one request whatever its size, and a pool behind a burst
        // (its refills queued behind the cold path's creates) catches up by batches, not a port at a time.
        const wanted = Math.min(sizes.max - free, Math.max(sizes.batch, t.target - free));
        refill(wanted, Math.max(0, sizes.min - free), `below its target ${t.target}`);
      }
    } else if (free < sizes.min) {
      const wanted = Math.min(sizes.max - free, Math.max(sizes.batch, sizes.min - free));
      refill(wanted, 0, `below min ${sizes.min}`);
    }
  }
  return out;
}

/**
 * The most free ports one reconcile deletes (in parallel): a trim or a drain is steps, each well within the reconcile's
 * timeout however slow Neutron is, and each a requeue of the node.
 */
export const DELETE_STEP = 10;

/**
 * What one reconcile of a node applies of its pool changes: the first that has work — a refill (one bulk create and
 * its tagging), or at most {@link DELETE_STEP} of a trim's or drain's deletes — and whether more is left for the next
 * step. A change with no work (a refill the namespace's share left at 0 ports) is no step.
 */
export function nextStep(changes: readonly PoolChange[]): { step: PoolChange | undefined; more: boolean } {
  const work = changes.filter((c) => c.make > 0 || c.remove.length > 0);
  const [first] = work;
  if (!first) return { step: undefined, more: false };
  const step = { ...first, remove: first.remove.slice(0, DELETE_STEP) };
  return { step, more: work.length > 1 || first.remove.length > DELETE_STEP };
}

/**
 * Whether the pool decision leaves a pool as it is: its node lives and a subnet of it is not known yet (Raven has just
 * started, or the subnet's namespace went while Raven was down). Every other free pool port is the pool reconciler's
 * to keep or delete, never the garbage collector's (`PoolReconciler.owns`).
 */
export function leftAlone(
  nodeExists: boolean,
  owners: readonly ({ namespace?: string } | 'gone' | undefined)[],
): boolean {
  return nodeExists && !owners.includes('gone') && owners.includes(undefined);
}

/** Whether a namespace's pools take adaptive sizes: `sizing: adaptive`, and no sizes of its own configured. */
export function isAdaptive(portPools: ReconcilerConfig['portPools'], namespace: string | undefined): boolean {
  return portPools.sizing === 'adaptive' && !portPools.namespaces.some((n) => n.namespace === namespace);
}

/** A namespace's pool sizes: its own where configured, else the global ones. */
export function poolSizes(portPools: ReconcilerConfig['portPools'], namespace: string | undefined): PoolSizes {
  const { min, max, batch, namespaces } = portPools;
  const own = namespace === undefined ? undefined : namespaces.find((n) => n.namespace === namespace);
  return { min: own?.min ?? min, max: own?.max ?? max, batch: own?.batch ?? batch };
}

/**
 * When the node's pools should be looked at again: the first that turns idle (the least time left, in ms), or
 * undefined when none holds a free port that may.
 */
export function nextIdleCheck(
  pools: readonly Pick<PoolState, 'free' | 'lastActivity'>[],
  idleSeconds: number,
  now: number,
): number | undefined {
  let next: number | undefined;
  for (const pool of pools) {
    const left = idleSeconds * 1000 - (now - pool.lastActivity);
    if (pool.free.length > 0 && left > 0) next = Math.min(next ?? left, left);
  }
  return next;
}

/**
 * The room left in each namespace's pool-port share, against `quotas.poolPortsPerNamespace`: the free ports of its
 * policy sets' pools on every node, and — adaptive growth — the free ports above `min` of its own subnet's pools
 * (those in `min` are every namespace's floor, not growth), with its refills in flight. `take` hands out what fits
 * (and counts it, for the next pool); `uncharged` ports of a refill (those up to `min`) are not counted.
 */
function shares(world: PoolWorld): {
  take(namespace: string | undefined, wanted: number, uncharged: number): { make: number; capped?: string };
} {
  const limit = world.config.quotas?.poolPortsPerNamespace ?? 0;
  const setNamespace = world.setNamespace;
  if (limit === 0) return { take: (_, wanted) => ({ make: wanted }) };
  const { portPools } = world.config;
  let held: Map<string, number> | undefined;
  // Read once, and only when a refill asks: every node's pools.
  const count = (): Map<string, number> => {
    const out = new Map(world.making);
    for (const pool of world.everyPool()) {
      const set = setNamespace?.(pool.securityGroups);
      const owner = set === undefined ? ownerNamespace(world, pool.subnetIds) : undefined;
      const growth = owner !== undefined && isAdaptive(portPools, owner);
      const namespace = set ?? (growth ? owner : undefined);
      const counted = set !== undefined ? pool.free : Math.max(0, pool.free - poolSizes(portPools, owner).min);
      if (namespace !== undefined) out.set(namespace, (out.get(namespace) ?? 0) + counted);
    }
    return out;
  };
  return {
    take(namespace, wanted, uncharged) {
      if (namespace === undefined) return { make: wanted };
      held ??= count();
      const room = Math.max(0, limit - (held.get(namespace) ?? 0));
      const make = Math.min(wanted, uncharged + room);
      held.set(namespace, (held.get(namespace) ?? 0) + Math.max(0, make - uncharged));
      return make < wanted ? { make, capped: namespace } : { make };
    },
  };
}

/** The namespace whose subnet a pool is on, if any (none: the cluster's shared subnet, or not known). */
function ownerNamespace(world: PoolWorld, subnetIds: readonly string[]): string | undefined {
  for (const id of subnetIds) {
    const owner = world.subnetOwner(id);
    if (typeof owner === 'object' && owner.namespace !== undefined) return owner.namespace;
  }
  return undefined;
}
