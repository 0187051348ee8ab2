import { setMaxListeners } from 'node:events';
import { RavenError, realClock, type Clock, type Logger } from '../../core/index.ts';
import { RetryableError, type ReconcileResult } from '../../controller/index.ts';
import type { Node } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { OpenStackError } from '../../openstack/index.ts';
import {
  clusterTag,
  POD_DEVICE_OWNER,
  podPortMark,
  resourceName,
  TAG_KIND,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
  type PoolSizes,
  type ReconcilerConfig,
  type SubnetStrategy,
} from '../network/index.ts';
import type { PodPorts } from './ports.ts';
import {
  decidePoolChanges,
  isAdaptive,
  leftAlone,
  nextIdleCheck,
  nextStep,
  poolSizes,
  type PoolChange,
} from './pool-decisions.ts';
import type { PortPools } from './pools.ts';
import type { RecordedPort } from './port-record.ts';

/** What the pools take from nested mode: a VM node's trunk, and the adds to it and removes from it. */
export interface PoolTrunks {
  /** The node's trunk when it is a VM with a known one; `pending` for a VM whose trunk is not known; else undefined. */
  trunkOf(node: string): { trunkId: string } | 'pending' | undefined;
  /** Adds the port to the trunk on a free VLAN id (`TrunkSubports.attach`). */
  attach(trunkId: string, portId: string, signal: AbortSignal): Promise<number>;
  /** Adds the ports to the trunk in one request, each on a free VLAN id (`TrunkSubports.attachAll`). */
  attachAll(trunkId: string, portIds: readonly string[], signal: AbortSignal): Promise<Map<string, number>>;
  /** Takes the port off its trunk, if it is a subport (`TrunkSubports.detach`). */
  detach(portId: string, signal: AbortSignal): Promise<void>;
}

export interface PoolReconcilerOptions {
  cloud: Cloud;
  config: Pick<ReconcilerConfig, 'clusterId' | 'portPools' | 'quotas'>;
  nodes: Lister<Node>;
  pools: PortPools;
  /** Raven's pod ports in Neutron, written through. */
  ports: PodPorts;
  subnets: SubnetStrategy;
  /**
   * Whether a pod that wants a port runs on `node` (of `namespace`, when given; whose port carries `groups`, when
   * given): its pool is then never idle.
   */
  inUse: (node: string, namespace: string | undefined, groups?: readonly string[]) => boolean;
  /**
   * With the NetworkPolicy translation: whether every group of a pool's set is one the translation still wants. A
   * pool of a set that lost one is drained (its ports would keep the group from being deleted).
   */
  groupsWanted?: ((groups: readonly string[]) => boolean) | undefined;
  /**
   * With the NetworkPolicy translation: the namespace whose policies made a pool's set (a set holding one
   * namespace's pod-set groups), whose free ports count against its `quotas.poolPortsPerNamespace`.
   */
  setNamespace?: ((groups: readonly string[]) => string | undefined) | undefined;
  /** A refill was cut short by a namespace's share (its Warning Event). */
  onShareReached?: ((namespace: string, share: number) => void) | undefined;
  /** After each refill: how long its bulk create took (metrics). */
  onRefill?: ((seconds: number, ports: number) => void) | undefined;
  /**
   * Nested mode: a VM node's pools hold subports of its trunk (docs/nested.md), never ports bound to it. A VM whose
   * trunk is not known (`pending`) has its pools as a gone node's: none is filled, and one left from before is drained.
   */
  nested?: PoolTrunks | undefined;
  clock?: Clock;
  logger: Logger;
}

/**
 * Keeps the warm port pools of one node (the key is the node's name) within their sizes, level-triggered on the
 * node, the pools and the pods: a pool below `min` gets one bulk create of at least `batch` ports (and never past
 * `max`); a pool above `max` has its surplus deleted; a pool whose node or subnet is gone — or that no pod has used
 * for `idleSeconds`, on a node where none of its subnet's pods runs — is emptied. One reconcile per node at a time
 * (the work queue's rule), so a node never has two refills in flight.
 *
 * Pool ports are made ready for a pod: `device_owner` `compute:raven`, `binding:host_id` = the node, an address on
 * the subnet, the pool's security groups (a set pods of the node have), this cluster's tags, an empty `device_id`, and the name
 * `raven/<cluster>/pool/<node>/<namespace or shared>` until a pod's claim renames it. On a VM node (nested mode) they
 * are bound to no host and added to the node's trunk, each on a free VLAN id: free subports (docs/pools.md).
 */
export class PoolReconciler {
  readonly #o: PoolReconcilerOptions;
  readonly #clock: Clock;
  /** Ports of refills in flight, by namespace: counted against its share (two nodes refill at once). */
  readonly #making = new Map<string, number>();
  /** How long refills took lately (s, decayed average; this reconciler its one writer): adaptive sizing's lead time. */
  #refillSeconds: number | undefined;

  constructor(options: PoolReconcilerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Decide, then act — one step of the node's pool changes ({@link changes}, {@link nextStep}): one refill, or one
   * bounded batch of a trim's or drain's deletes; the node is requeued at once while more is left, so no reconcile
   * comes near its timeout however slow Neutron is. Then when to look again.
   */
  readonly reconcile = async (node: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    // Subports found at a restart before their trunk was read join their pools (each node's are looked at).
    for (const other of this.#o.pools.placeUnplaced()) if (other !== node) this.#o.pools.activity.send({ node: other });
    const changes = this.changes(node);
    for (const change of changes)
      if (change.capped !== undefined)
        this.#o.onShareReached?.(change.capped, this.#o.config.quotas?.poolPortsPerNamespace ?? 0);
    const { step, more } = nextStep(changes);
    if (step && step.remove.length > 0) await this.#remove(node, step, signal);
    if (step && step.make > 0) await this.#fill(node, step, untilStopped(signal));
    if (more) return { requeueAfterMs: 1 };
    // An idle pool is emptied once its time is up, and an adaptive pool's surplus trimmed: look again then.
    const states = this.#o.pools.statesOf(node);
    const now = this.#clock.now();
    const { idleSeconds, trimIdleSeconds } = this.#o.config.portPools;
    const trimmable = states.filter((p) => this.#trimmable(p.subnetIds, p.free.length));
    const checks = [
      nextIdleCheck(states, idleSeconds, now),
      nextIdleCheck(
        trimmable.map((p) => ({ free: p.free, lastActivity: p.demand.lastTake })),
        trimIdleSeconds,
        now,
      ),
    ].filter((ms) => ms !== undefined);
    return checks.length === 0 ? undefined : { requeueAfterMs: Math.min(...checks) + 1_000 };
  };

  /**
   * What the node's pools need now (also `raven plan`'s answer): {@link decidePoolChanges} on the current state — and
   * first, the free ports no longer of the node (nested mode: subports of a trunk that was replaced, which no list of
   * Raven's finds once Neutron took them off it; ports bound to a node that is a VM now) deleted.
   */
  changes(node: string): PoolChange[] {
    const o = this.#o;
    const states = o.pools.statesOf(node);
    const strays: PoolChange[] = states.flatMap((pool) => {
      const remove = pool.free.filter((port) => o.pools.nodeOf(port) !== node);
      const why = 'no longer of its node';
      return remove.length === 0 ? [] : [{ kind: 'trim', key: pool.key, make: 0, remove, why, place: pool }];
    });
    const changes = decidePoolChanges({
      node,
      nodeExists: this.#hostsPorts(node),
      pools: states.map((pool) => ({ ...pool, free: pool.free.filter((port) => o.pools.nodeOf(port) === node) })),
      everyPool: () => o.pools.everyPool(),
      making: this.#making,
      subnetOwner: (id) => o.subnets.ownerOf(id),
      inUse: o.inUse,
      groupsWanted: o.groupsWanted,
      setNamespace: o.setNamespace,
      config: o.config,
      refillSeconds: this.#refillSeconds,
      now: this.#clock.now(),
    });
    return [...strays, ...changes];
  }

  /** Whether a pool has free ports above its adaptive floor, which an idle spell may trim. */
  #trimmable(subnetIds: readonly string[], free: number): boolean {
    const owner = subnetIds.map((id) => this.#o.subnets.ownerOf(id)).find((o) => typeof o === 'object');
    const { portPools } = this.#o.config;
    return isAdaptive(portPools, owner?.namespace) && free > poolSizes(portPools, owner?.namespace).min;
  }

  /**
   * Whether this reconciler decides the fate of a free port (keeps it, trims it, drains it): it is in a pool the
   * decision does not leave alone ({@link leftAlone}). The garbage collector never deletes such a port, so the two never
   * race on one (docs/pools.md, "Who deletes a free port").
   */
  owns(portId: string): boolean {
    const pool = this.#o.pools.holding(portId);
    if (!pool) return false;
    const owners = pool.subnetIds.map((id) => this.#o.subnets.ownerOf(id));
    return !leftAlone(this.#hostsPorts(pool.node), owners);
  }

  /** Whether the node's pools may hold ports: it exists, and is no VM of nested mode whose trunk is not known. */
  #hostsPorts(node: string): boolean {
    return this.#o.nodes.get(node) !== undefined && this.#o.nested?.trunkOf(node) !== 'pending';
  }

  /** A namespace's pool sizes: its own where configured, else the global ones. */
  sizes(namespace: string | undefined): PoolSizes {
    return poolSizes(this.#o.config.portPools, namespace);
  }

  /**
   * A free pool port's name, for a person reading `openstack port list`: `raven/<cluster>/pool/<node>/<namespace>`
   * (the namespace whose subnet it is on, or whose NetworkPolicies made its group set), or `…/<node>/shared` on the
   * cluster's shared subnet. A label only: Raven never reads it back (a port's pool is its subnets, groups and host;
   * its owner its `device_id`), and a claim renames it to the pod's.
   */
  #portName(node: string, change: PoolChange): string {
    const owners = change.place.subnetIds.map((id) => this.#o.subnets.ownerOf(id));
    const namespace = owners.find((o) => typeof o === 'object' && o.namespace !== undefined);
    const where = (typeof namespace === 'object' ? namespace.namespace : undefined) ?? change.charge?.namespace;
    return resourceName(this.#o.config.clusterId, 'pool', node, where ?? 'shared');
  }

  async #fill(node: string, change: PoolChange, signal: AbortSignal): Promise<void> {
    const { clusterId } = this.#o.config;
    const { networkId, subnetIds, securityGroups } = change.place;
    const trunk = this.#o.nested?.trunkOf(node);
    const trunkId = typeof trunk === 'object' ? trunk.trunkId : undefined;
    const spec = {
      network_id: networkId,
      fixed_ips: subnetIds.map((subnet_id) => ({ subnet_id })),
      name: this.#portName(node, change),
      description: podPortMark(clusterId),
      device_owner: POD_DEVICE_OWNER,
      device_id: '',
      // A VM's subport is bound by the trunk driver, never to a host (docs/nested.md).
      ...(trunkId === undefined ? { 'binding:host_id': node } : {}),
      ...(securityGroups.length > 0 ? { security_groups: [...securityGroups] } : {}),
      tags: [clusterTag(clusterId), `${TAG_KIND}=pod`],
    };
    const started = this.#clock.now();
    const namespace = change.charge?.namespace;
    const charged = change.charge?.ports ?? 0;
    if (namespace !== undefined) this.#making.set(namespace, (this.#making.get(namespace) ?? 0) + charged);
    let created;
    this.#o.pools.refillStarted(change.key);
    try {
      created = await this.#o.ports.createBulk(
        Array.from({ length: change.make }, () => spec),
        // No pod waits for a refill (its tag PUTs included): behind claims and cold creates in Neutron's limit.
        { signal, priority: 'background' },
      );
      if (trunkId !== undefined) created = await this.#attach(trunkId, created, signal);
    } catch (err) {
      if (err instanceof OpenStackError && (err.type === 'OverQuota' || err.type === 'IpAddressGenerationFailure')) {
        const what = err.type === 'OverQuota' ? 'the port quota is full' : 'the subnet has no free address';
        throw new RetryableError(
          err.type === 'OverQuota' ? 'QuotaExceeded' : 'SubnetExhausted',
          `refilling the port pool of node ${node}: ${what}`,
          {
            cause: err,
            maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS,
          },
        );
      }
      throw err;
    } finally {
      this.#o.pools.refillEnded(change.key, created && this.#clock.now() - started);
      if (namespace !== undefined) {
        const left = (this.#making.get(namespace) ?? 0) - charged;
        if (left > 0) this.#making.set(namespace, left);
        else this.#making.delete(namespace);
      }
    }
    const seconds = (this.#clock.now() - started) / 1000;
    this.#refillSeconds = this.#refillSeconds === undefined ? seconds : (this.#refillSeconds + seconds) / 2;
    this.#o.onRefill?.(seconds, created.length);
    this.#o.logger.info(
      { node, pool: change.key, ports: created.length, seconds, why: change.why },
      'port pool refilled',
    );
    this.#o.pools.refill(node, created);
  }

  /**
   * A VM's refill: its new ports onto the node's trunk, each on a free VLAN id (`TrunkSubports` picks them; Neutron's
   * trunk is their only record, so a crash here leaves ports on the trunk — adopted as free at the restart — or off it,
   * bound to nothing: the garbage collector's). Those that could not be added are deleted; the added ones.
   */
  async #attach(trunkId: string, ports: readonly RecordedPort[], signal: AbortSignal): Promise<RecordedPort[]> {
    const nested = this.#o.nested!;
    // One request for the whole refill; refused, one per port, so that only the port Neutron refuses is lost.
    const added = await nested
      .attachAll(
        trunkId,
        ports.map((p) => p.id),
        signal,
      )
      .then(
        () => ports.map(() => ({ status: 'fulfilled' }) as const),
        (err: unknown) => {
          if (signal.aborted) throw err;
          this.#o.logger.info({ trunk: trunkId, err }, 'subports not added in one request: adding them one by one');
          return Promise.allSettled(ports.map((p) => nested.attach(trunkId, p.id, signal)));
        },
      );
    const failed = ports.filter((_, i) => added[i]?.status === 'rejected');
    await Promise.allSettled(failed.map((p) => this.#o.ports.delete(p.id, { signal, priority: 'background' })));
    const error = added.find((r) => r.status === 'rejected');
    if (error && failed.length === ports.length) throw error.reason;
    // Each add changed its port (the trunk driver's owner and binding: a revision): read once, so that a claim's
    // If-Match is on the revision Neutron has, not answered 412.
    const ids = ports.filter((p) => !failed.includes(p)).map((p) => p.id);
    const read = await this.#o.cloud.neutron.ports.list({ id: ids }, { signal, priority: 'background' });
    // A port a pod took meanwhile (a relist put it in its pool early) keeps the pod's record: a read taken before the
    // pod's claim must not undo it.
    return read.filter((p) => !this.#o.pools.tookWarm(p.id)).map((p) => this.#o.ports.seen(p));
  }

  /**
   * Deletes a step's ports at once (a subport taken off its trunk first); one whose delete failed goes back to its
   * pool (else it would hide till a sweep).
   */
  async #remove(node: string, change: PoolChange, signal: AbortSignal): Promise<void> {
    this.#o.pools.withdraw(change.remove);
    const remove = async (port: RecordedPort): Promise<boolean> => {
      await this.#o.nested?.detach(port.id, signal);
      return this.#o.ports.delete(port.id, { signal, priority: 'background' });
    };
    const results = await Promise.allSettled(change.remove.map(remove));
    const failed = change.remove.filter((_, i) => results[i]?.status === 'rejected');
    for (const port of failed) this.#o.pools.add(port);
    const error = results.find((r) => r.status === 'rejected');
    if (error) throw error.reason;
    if (change.kind === 'drain') this.#o.pools.forgetDrained(change.key);
    this.#o.logger.info(
      { node, pool: change.key, ports: change.remove.length, why: change.why },
      'port pool ports deleted',
    );
  }
}

/**
 * The reconcile's signal without its timeout: aborted when the controller stops, not when the reconcile runs long. A
 * refill's bulk create and its tagging are one step: cut between the two (Neutron makes the ports of a POST whose
 * client gave up), its ports would land untagged, with nobody to record them, and be adopted later as a crash's
 * leftovers. Each request still has its own timeout, so the step stays bounded (a stop that comes after the timeout
 * no longer reaches it: the step ends by those timeouts).
 */
function untilStopped(signal: AbortSignal): AbortSignal {
  const own = new AbortController();
  // The refill tags each new port in parallel, each request listening on it (as on the reconcile's own signal).
  setMaxListeners(0, own.signal);
  const follow = (): void => {
    const reason: unknown = signal.reason;
    if (!(reason instanceof RavenError && reason.code === 'RECONCILE_TIMEOUT')) own.abort(reason);
  };
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  return own.signal;
}
