import { realClock, type Clock } from '../../core/index.ts';
import { EventChannel } from '../../controller/index.ts';
import type { SubnetInfo } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';

/** Where a pool's ports are made: on this network, with an address on each of these subnets, in these groups. */
export interface PoolPlace {
  node: string;
  networkId: string;
  subnetIds: readonly string[];
  /** Neutron ids, sorted; empty: none given (the project's default group), when groups are not Raven's to choose. */
  securityGroups: readonly string[];
}

/**
 * A pool's demand, as its takes showed it: what adaptive sizing reads (`pool-sizing.ts`). Written only by
 * {@link PortPools} (a take, a port given back, a rebuild), read by the pool decision.
 */
export interface Demand {
  /** Takes per second at {@link lastTake}: a count of takes decayed with the window's time constant. */
  rate: number;
  /** When a pod last took from the pool (or found it empty); the pool's creation before any. */
  lastTake: number;
  /** Ports its pods hold now: taken (or made cold for a pod of this pool) and not given back. */
  held: number;
  /** The most ports its pods held at once since the pool last idled. */
  peak: number;
}

/** One pool as the pool decision reads it: its place, its free ports (in the order they joined), its last use. */
export interface PoolState extends PoolPlace {
  key: string;
  free: readonly RecordedPort[];
  lastActivity: number;
  demand: Readonly<Demand>;
}

interface Pool extends PoolPlace {
  free: Map<string, RecordedPort>;
  /** The last time a pod took a port from it or gave one back (or it was found at a restart). */
  lastActivity: number;
  demand: Demand;
}

/** How a pool's demand is recorded: the take rate's time constant, and the idle time after which its peak restarts. */
export interface DemandWindow {
  windowMs: number;
  idleMs: number;
}

/** Who may own a recorded port, for {@link PortPools.rebuild}: what is not owned is free. */
export interface FreeRule {
  /** Whether a pod with this uid exists and wants a port. */
  portWanted: (uid: string) => boolean;
  /** Whether a claim of this process is on the port. */
  claimed: (portId: string) => boolean;
  /** `gc.graceSeconds` in ms: how long a port of a pod this process never saw stays that pod's. */
  graceMs: number;
  /**
   * Whether a live pod's own VIF, signed by Raven, names the port (a claim a crash lost after the VIF was written):
   * its node may have plugged it, so it is kept for that pod alone ({@link takePort}), never handed to another.
   */
  signedFor?: ((portId: string) => boolean) | undefined;
  /**
   * Whether a port of this name is a live pod's own, to be (the name the pod's cold path gives the port it makes). A
   * port with that name and no `device_id` is that pod's, mid-way: a VM's subport is made without one and claimed only
   * after its add to the trunk, so between the two it looks free. Never free, whatever its age.
   */
  named?: ((portName: string) => boolean) | undefined;
}

/** "A pool was touched" (a pod found it empty or low, or gave a port back): its node's pools are looked at. */
export interface PoolActivity {
  node: string;
}

/**
 * The warm port pools: free ports by pool, as Raven sees them. A pool is keyed by what a port must match to be handed
 * to a pod — the node it is bound to (`binding:host_id`), the subnets it has addresses on, its security groups — so a
 * port is never re-bound or re-addressed when taken, and re-grouped only when its own set's pool is empty.
 *
 * A free port is a pod port of this cluster (its tags) whose `device_id` names no pod that exists: one made for a
 * pool (`device_id` empty) or one a deleted pod left. Freeing a port costs no Neutron request: its `device_id` and
 * name keep the old pod's until the next pod's assignment overwrites them (`PortClaims`). The pools are therefore
 * derived state — {@link rebuild} recomputes them from the record and the pod cache at every sweep — and the
 * in-between updates ({@link take}, {@link give}) only keep them current meanwhile.
 */
export class PortPools {
  /** Sent when a pool was taken from or given to: its node's pool reconcile refills or trims it. */
  readonly activity = new EventChannel<PoolActivity>('port-pool-activity');
  /** Sent after a refill: pods of that node that waited for a port look again. */
  readonly refilled = new EventChannel<PoolActivity>('port-pool-refilled');
  readonly #clock: Clock;
  /** Whether a port's groups are left out of its pool's key (see the constructor). */
  readonly #anyGroups: boolean;
  readonly #pools = new Map<string, Pool>();
  /** Port id → its pool's key. */
  readonly #where = new Map<string, string>();
  /** Ports this process saw their pod leave ({@link give}): free whatever their age. */
  readonly #released = new Set<string>();
  /**
   * Ports given back whose record Neutron has changed since (port id → when given back): the node's agent set the port
   * ACTIVE when its pod was plugged and DOWN when it left, and a port made on the cold path was tagged after its
   * create's answer. Each change is a revision, so a claim on the recorded one would be answered 412 and cost a re-read
   * and a second update: `PortRefresh` reads them again, batched, before a pod takes them.
   */
  readonly #stale = new Map<string, number>();
  /** Free by Neutron, but named by a pod's signed VIF (`FreeRule.signedFor`): port id → its pool's key, and the port. */
  readonly #reserved = new Map<string, { key: string; port: RecordedPort }>();
  readonly #window: DemandWindow;
  /** The node a port waits on: its host, or (nested mode) its trunk's node; `''` when not known (yet). */
  readonly #nodeOf: (port: RecordedPort) => string;
  /**
   * Free ports of no known node at the last {@link rebuild}: subports whose trunk was not read yet (Raven starting).
   * They join their pools once it is ({@link placeUnplaced}).
   */
  #unplaced: RecordedPort[] = [];

  /**
   * `anyGroups`: every pod port gets the same groups, none of them given (no NetworkPolicy translation and no
   * configured `securityGroups`: Neutron puts each port in the project's default group), so a port's groups do not
   * key its pool. Otherwise the key holds the groups, and a pod takes a port of its own set. `nodeOf`: the node a port
   * waits on (default: its `binding:host_id`; nested mode: a subport's trunk's node).
   */
  constructor(
    options: { anyGroups: boolean; demand: DemandWindow; nodeOf?: ((port: RecordedPort) => string) | undefined },
    clock: Clock = realClock,
  ) {
    this.#clock = clock;
    this.#anyGroups = options.anyGroups;
    this.#nodeOf = options.nodeOf ?? ((port) => port.hostId);
    // From `portPools.demandWindowSeconds` and `trimIdleSeconds`, as the decision reads the record: no default of its
    // own, which could disagree with the decision's.
    this.#window = options.demand;
  }

  /** The key of the pool a pod on `node` with `subnet` (each of its families') and these groups (Neutron ids, sorted) takes from. */
  keyFor(node: string, subnet: SubnetKey, groups: readonly string[]): string {
    return `${node}|${subnetIdsOf(subnet).join(',')}|${this.#anyGroups ? '' : groups.join(',')}`;
  }

  /** The node a port waits on (the `nodeOf` the pools were made with); `''` when none is known. */
  nodeOf(port: RecordedPort): string {
    return this.#nodeOf(port);
  }

  /** The key of the pool a port belongs to. */
  keyOf(port: RecordedPort): string {
    const subnets = [...new Set(port.fixedIps.map((ip) => ip.subnetId))].sort().join(',');
    return `${this.#nodeOf(port)}|${subnets}|${this.#anyGroups ? '' : port.securityGroups.join(',')}`;
  }

  /** Ports pods took from a pool and still hold (the topology view's warm/cold); pruned at each {@link rebuild}. */
  readonly #takenWarm = new Set<string>();

  /** Refills in flight and the last one's duration, by pool key (what the topology view shows). */
  readonly #refills = new Map<string, { inFlight: number; lastMs?: number }>();

  /** A refill of the pool `key` starts. */
  refillStarted(key: string): void {
    const r = this.#refills.get(key) ?? { inFlight: 0 };
    this.#refills.set(key, { ...r, inFlight: r.inFlight + 1 });
  }

  /** A refill of the pool `key` ended: it took `ms` when it made its ports, undefined when it failed. */
  refillEnded(key: string, ms: number | undefined): void {
    const r = this.#refills.get(key) ?? { inFlight: 1 };
    this.#refills.set(key, { inFlight: Math.max(0, r.inFlight - 1), ...(ms !== undefined ? { lastMs: ms } : {}) });
  }

  /** Whether a refill of the pool is in flight, and how long the last one took (ms). */
  refillOf(key: string): { refilling: boolean; lastMs?: number | undefined } {
    const r = this.#refills.get(key);
    return { refilling: (r?.inFlight ?? 0) > 0, lastMs: r?.lastMs };
  }

  /** Whether a pod took this port from a pool (rather than had it made for it), as far as this process saw. */
  tookWarm(portId: string): boolean {
    return this.#takenWarm.has(portId);
  }

  /** Ports taken from a pool (`hits`), and pods that found their pool empty (`misses`). */
  readonly stats = { hits: 0, misses: 0 };

  /**
   * A free port for a pod on `node` with `subnet` and `groups`, now no longer free; undefined when there is none. The
   * pod's own pool first; else, with `regroup`, a port of another pool of the node and subnet that was never plugged
   * (its groups are then the claim's to change, in the same update: a port whose agent chains hold other rules is
   * never handed over), so a policy change does not leave pods waiting for a cold create.
   */
  take(
    node: string,
    subnet: SubnetKey & Pick<SubnetInfo, 'networkId'>,
    groups: readonly string[],
    regroup = false,
  ): RecordedPort | undefined {
    const key = this.keyFor(node, subnet, groups);
    const place = { node, networkId: subnet.networkId, subnetIds: subnetIdsOf(subnet), securityGroups: groups };
    const pool = this.#pool(key, place);
    pool.lastActivity = this.#clock.now();
    this.#took(pool);
    let [first] = pool.free.values();
    if (!first && regroup) {
      const prefix = `${node}|${subnetIdsOf(subnet).join(',')}|`;
      first = [...this.#pools.entries()]
        .filter(([k]) => k !== key && k.startsWith(prefix))
        .flatMap(([, p]) => [...p.free.values()])
        .find((p) => !p.active && !this.#released.has(p.id));
    }
    if (first) this.#drop(first.id);
    if (first) this.#takenWarm.add(first.id);
    if (first) this.stats.hits++;
    else this.stats.misses++;
    this.activity.send({ node });
    return first;
  }

  /** That free port, when it is in the pool a pod on `node` and `subnet` takes from (a claim lost to a crash). */
  takePort(portId: string, node: string, subnet: SubnetKey, groups: readonly string[]): RecordedPort | undefined {
    const key = this.keyFor(node, subnet, groups);
    const reserved = this.#reserved.get(portId);
    if (reserved?.key === key) {
      this.#reserved.delete(portId);
      return reserved.port; // already counted as held at the rebuild
    }
    const port = this.#where.get(portId) === key ? this.#pools.get(key)?.free.get(portId) : undefined;
    if (port) this.#drop(portId);
    if (port) this.#takenWarm.add(portId);
    const pool = this.#pools.get(key);
    if (port && pool) pool.demand.held++;
    return port;
  }

  /** A port no pod owns any more joins its pool (and the pool's node is looked at: it may be above `max`). */
  give(port: RecordedPort): void {
    this.add(port);
    this.#released.add(port.id);
    // A subport's record does not change as its pod leaves: no agent binds or unbinds it (the trunk driver wired it
    // once, its status the parent's). Only a bound port is read again before its next claim.
    if (port.hostId) this.#stale.set(port.id, this.#clock.now());
    const pool = this.#pools.get(this.keyOf(port));
    if (pool) pool.lastActivity = this.#clock.now();
    if (pool) pool.demand.held = Math.max(0, pool.demand.held - 1);
    this.activity.send({ node: this.#nodeOf(port) });
  }

  /**
   * Whether the port was given back and not read since: a pod that takes it before {@link refresh} has its claim read
   * it first (one read, rather than an update answered 412 and then the read). Kept while the port is taken.
   */
  isStale(portId: string): boolean {
    return this.#stale.has(portId);
  }

  /** The port is no longer one to read (it is gone from Neutron). */
  forgetStale(portId: string): void {
    this.#stale.delete(portId);
  }

  /** The free ports of `node` given back, each with when, whose record is older than Neutron's (see {@link #stale}). */
  staleOn(node: string): { port: RecordedPort; since: number }[] {
    const out: { port: RecordedPort; since: number }[] = [];
    for (const [id, since] of this.#stale) {
      const key = this.#where.get(id);
      const port = key === undefined ? undefined : this.#pools.get(key)?.free.get(id);
      if (port && this.#nodeOf(port) === node) out.push({ port, since });
    }
    return out;
  }

  /**
   * A free port as Neutron showed it in a read that began after the port was given back. True when the read is newer
   * than the pool's copy (a revision only grows) and the caller is to record it: the pool keeps it, or — when the read
   * shows another live pod's claim (another leader's; `portWanted` of its device) or another pool — the port leaves
   * its pool, and the next rebuild decides whose it is. A claim of a pod that is gone (one deleted while its claim was
   * in flight, which lands after the port was given back) leaves the port free. False when the port is no longer a
   * free port of a pool (taken meanwhile): the record holds the pod's reservation then, which the read must not
   * overwrite.
   */
  refresh(port: RecordedPort, portWanted: (uid: string) => boolean): boolean {
    const key = this.#where.get(port.id);
    const pool = key === undefined ? undefined : this.#pools.get(key);
    const had = pool?.free.get(port.id);
    if (!pool || !had || port.revision < had.revision) return false;
    this.#stale.delete(port.id);
    const claimed = port.deviceId !== had.deviceId && port.deviceId !== '' && portWanted(port.deviceId);
    if (claimed || this.keyOf(port) !== key) this.#drop(port.id);
    else pool.free.set(port.id, port);
    return true;
  }

  /** A port made for a pool joins it. */
  add(port: RecordedPort): void {
    const key = this.keyOf(port);
    this.#takenWarm.delete(port.id);
    this.#drop(port.id);
    this.#pool(key, this.#placeOf(port)).free.set(port.id, port);
    this.#where.set(port.id, key);
  }

  /**
   * Free ports whose node was not known at the last rebuild join their pools, now that it is; their nodes. Not one that
   * joined a pool since (its refill ended after that rebuild), which a pod may have taken already.
   */
  placeUnplaced(): string[] {
    if (this.#unplaced.length === 0) return [];
    this.#unplaced = this.#unplaced.filter((port) => !this.#where.has(port.id) && !this.#takenWarm.has(port.id));
    const placed = this.#unplaced.filter((port) => this.#nodeOf(port) !== '');
    this.#unplaced = this.#unplaced.filter((port) => this.#nodeOf(port) === '');
    for (const port of placed) this.add(port);
    return [...new Set(placed.map((port) => this.#nodeOf(port)))];
  }

  /**
   * A refill's ports join their pools, and the node's pods that waited for a port look again. Not one a pod took
   * meanwhile: a relist of the record while the refill ran (a VM's adds to its trunk, the read after) may have found it
   * free and put it in its pool already, and it is that pod's now.
   */
  refill(node: string, ports: readonly RecordedPort[]): void {
    for (const port of ports) if (!this.#takenWarm.has(port.id)) this.add(port);
    this.refilled.send({ node });
  }

  /** Ports about to be deleted leave their pools first (synchronously), so no pod takes one of them meanwhile. */
  withdraw(ports: readonly RecordedPort[]): void {
    for (const port of ports) this.#drop(port.id);
  }

  /** The place of the pool that holds this free port; undefined when no pool does. */
  holding(portId: string): PoolPlace | undefined {
    const key = this.#where.get(portId);
    return key === undefined ? undefined : this.#pools.get(key);
  }

  /** The free ports of a pool. */
  free(key: string): RecordedPort[] {
    return [...(this.#pools.get(key)?.free.values() ?? [])];
  }

  /** The pools on `node`: where their ports are made, their free ports in the order they joined, their last use. */
  statesOf(node: string): PoolState[] {
    return [...this.#pools.entries()]
      .filter(([, p]) => p.node === node)
      .map(([key, p]) => ({
        key,
        node: p.node,
        networkId: p.networkId,
        subnetIds: p.subnetIds,
        securityGroups: p.securityGroups,
        free: [...p.free.values()],
        lastActivity: p.lastActivity,
        demand: { ...p.demand },
      }));
  }

  /** Every pool's set and free-port count (the namespace shares count them over all nodes). */
  *everyPool(): Iterable<{ securityGroups: readonly string[]; subnetIds: readonly string[]; free: number }> {
    for (const p of this.#pools.values())
      yield { securityGroups: p.securityGroups, subnetIds: p.subnetIds, free: p.free.size };
  }

  /**
   * Makes the pool a pod on `node` with `subnet` and `groups` would take from, if it is not there (a namespace's
   * network was just made: its pools are filled before its first pod). Its node's pools are looked at.
   */
  prepare(node: string, subnet: SubnetKey & Pick<SubnetInfo, 'networkId'>, groups: readonly string[]): void {
    const place = { node, networkId: subnet.networkId, subnetIds: subnetIdsOf(subnet), securityGroups: groups };
    this.#pool(this.keyFor(node, subnet, groups), place);
    this.activity.send({ node });
  }

  /** Every pool's place and free-port count (metrics). */
  sizes(): { place: PoolPlace; free: number }[] {
    return [...this.#pools.values()].map((p) => ({
      place: { node: p.node, networkId: p.networkId, subnetIds: p.subnetIds, securityGroups: p.securityGroups },
      free: p.free.size,
    }));
  }

  /** Nodes that have a pool. */
  nodes(): string[] {
    return [...new Set([...this.#pools.values()].map((p) => p.node))];
  }

  /** Forgets a drained pool; not one that a port joined meanwhile (a pod gave one back): it stays. */
  forgetDrained(key: string): boolean {
    if ((this.#pools.get(key)?.free.size ?? 0) > 0) return false;
    this.#refills.delete(key);
    return this.#pools.delete(key);
  }

  /**
   * Recomputes the free ports from `ports` (the whole record). A port is free when its `device_id` names no pod that
   * wants a port and no claim of this process is on it. A `device_id` this process has not seen may be a pod created a
   * moment ago (another leader's claim): such a port is free only once unchanged for `graceMs`, as the garbage
   * collector waits before it calls anything an orphan — unless this process saw its pod leave ({@link give}). Pools
   * keep their last activity; a pool seen for the first time counts as used now, so a restart does not drain it.
   */
  rebuild(ports: readonly RecordedPort[], owners: FreeRule): void {
    const now = this.#clock.now();
    const recorded = new Set(ports.map((p) => p.id));
    for (const id of this.#takenWarm) if (!recorded.has(id)) this.#takenWarm.delete(id);
    const owned = (port: RecordedPort): boolean =>
      owners.portWanted(port.deviceId) ||
      owners.claimed(port.id) ||
      (port.deviceId === '' && owners.named?.(port.name) === true) ||
      (port.deviceId !== '' && now - port.updatedAt < owners.graceMs && !this.#released.has(port.id));
    for (const pool of this.#pools.values()) pool.free.clear();
    this.#where.clear();
    this.#reserved.clear();
    // What pods hold is counted again from the record (a lost claim, a pod gone unseen: the count stays true).
    const held = new Map<string, number>();
    const present = new Set(ports.map((p) => p.id));
    for (const id of this.#released) if (!present.has(id)) this.#released.delete(id);
    for (const id of this.#stale.keys()) if (!present.has(id)) this.#stale.delete(id);
    this.#unplaced = [];
    for (const port of ports) {
      // A port bound to no node is no pool's (the garbage collector sees to it); a subport whose trunk is not read yet
      // waits for it (free, unless owned).
      if (!this.#nodeOf(port)) {
        if (!owned(port)) this.#unplaced.push(port);
        continue;
      }
      const signed = !owned(port) && owners.signedFor?.(port.id) === true;
      if (owned(port) || signed) {
        const key = this.keyOf(port);
        held.set(key, (held.get(key) ?? 0) + 1);
        if (signed) this.#reserved.set(port.id, { key, port });
        continue;
      }
      const key = this.keyOf(port);
      this.#pool(key, this.#placeOf(port)).free.set(port.id, port);
      this.#where.set(port.id, key);
    }
    for (const [key, pool] of this.#pools) pool.demand.held = held.get(key) ?? 0;
  }

  #pool(key: string, place: PoolPlace): Pool {
    let pool = this.#pools.get(key);
    if (!pool) {
      const now = this.#clock.now();
      pool = { ...place, free: new Map(), lastActivity: now, demand: { rate: 0, lastTake: now, held: 0, peak: 0 } };
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /**
   * A pod takes from the pool (it gets a port of it, or one of its own when the pool is empty: demand either way): the
   * rate decays to now and counts one take; after an idle spell the peak starts again from what pods hold.
   */
  #took(pool: Pool): void {
    const now = this.#clock.now();
    const d = pool.demand;
    const { windowMs, idleMs } = this.#window;
    if (now - d.lastTake >= idleMs) d.peak = d.held;
    d.rate = decayedRate(d, windowMs, now) + 1000 / windowMs;
    d.lastTake = now;
    d.held++;
    d.peak = Math.max(d.peak, d.held);
  }

  #placeOf(port: RecordedPort): PoolPlace {
    return placeOf(port, this.#nodeOf(port));
  }

  #drop(portId: string): void {
    this.#released.delete(portId);
    const key = this.#where.get(portId);
    if (key === undefined) return;
    this.#pools.get(key)?.free.delete(portId);
    this.#where.delete(portId);
  }
}

/** A pool's take rate (per second) decayed from its last take to `now`. */
export function decayedRate(demand: Pick<Demand, 'rate' | 'lastTake'>, windowMs: number, now: number): number {
  return demand.rate * Math.exp(-Math.max(0, now - demand.lastTake) / windowMs);
}

/** What of a pod's subnet keys its pool: the subnet, and on a dual-stack network the other family's. */
type SubnetKey = Pick<SubnetInfo, 'subnetId' | 'secondary'>;

/** A pool's subnets, sorted (as {@link PortPools.keyOf} lists a port's). */
function subnetIdsOf(subnet: SubnetKey): string[] {
  return [subnet.subnetId, ...(subnet.secondary ? [subnet.secondary.subnetId] : [])].sort();
}

function placeOf(port: RecordedPort, node: string): PoolPlace {
  return {
    node,
    networkId: port.networkId,
    subnetIds: [...new Set(port.fixedIps.map((ip) => ip.subnetId))].sort(),
    securityGroups: port.securityGroups,
  };
}
