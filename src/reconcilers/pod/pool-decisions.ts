import type { PoolSizes, ReconcilerConfig } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';
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
  everyPool: () => Iterable<{ securityGroups: readonly string[]; free: number }>;
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
  /** The clock's now (ms). */
  now: number;
}

/**
 * The pool decision for one node: what each of its pools needs now, in the order of its pools. Reads only its
 * argument, so `raven plan` and the reconcile that acts on it cannot disagree. A pool goes (drain) when its node is
 * gone, its subnet is no pod subnet now, a group of its set is no longer wanted, or it is idle (no take or give for
 * `idleSeconds`, and no pod of its subnet's namespace — of its set, with the translation — on the node); a pool whose
 * subnet is not known yet is left as it is. Otherwise above `max` → the free ports past the first `max` are deleted
 * (those that joined last); below `min` → one refill of at least `batch`, never past `max` nor the namespace's share.
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
    if (pool.free.length > sizes.max)
      out.push({
        kind: 'trim',
        key: pool.key,
        make: 0,
        remove: pool.free.slice(sizes.max),
        why: `above max ${sizes.max}`,
        place,
      });
    else if (pool.free.length < sizes.min) {
      const wanted = Math.min(sizes.max - pool.free.length, Math.max(sizes.batch, sizes.min - pool.free.length));
      const { make, capped } = share.take(pool.securityGroups, wanted);
      if (make > 0 || capped !== undefined)
        out.push({
          kind: 'refill',
          key: pool.key,
          make,
          remove: [],
          why: `below min ${sizes.min}`,
          ...(capped !== undefined ? { capped } : {}),
          place,
        });
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
 * The room left in each namespace's pool-port share: its policy sets' free ports on every node, and its refills in
 * flight, against `quotas.poolPortsPerNamespace`. `take` hands out what fits (and counts it, for the next pool).
 */
function shares(world: PoolWorld): {
  take(groups: readonly string[], wanted: number): { make: number; capped?: string };
} {
  const limit = world.config.quotas?.poolPortsPerNamespace ?? 0;
  const namespaceOf = world.setNamespace;
  if (limit === 0 || !namespaceOf) return { take: (_, wanted) => ({ make: wanted }) };
  const held = new Map(world.making);
  for (const pool of world.everyPool()) {
    const namespace = namespaceOf(pool.securityGroups);
    if (namespace !== undefined) held.set(namespace, (held.get(namespace) ?? 0) + pool.free);
  }
  return {
    take(groups, wanted) {
      const namespace = namespaceOf(groups);
      if (namespace === undefined) return { make: wanted };
      const room = Math.max(0, limit - (held.get(namespace) ?? 0));
      const make = Math.min(wanted, room);
      held.set(namespace, (held.get(namespace) ?? 0) + make);
      return make < wanted ? { make, capped: namespace } : { make };
    },
  };
}
