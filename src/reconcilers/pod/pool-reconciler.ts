import { realClock, type Clock, type Logger } from '../../core/index.ts';
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
import type { RecordedPort } from './port-record.ts';
import type { PodPorts } from './ports.ts';
import type { PortPools } from './pools.ts';

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
  clock?: Clock;
  logger: Logger;
}

/** What one pool needs now: ports to make, ports to delete (surplus, or all of a pool that goes). */
export interface PoolChange {
  key: string;
  make: number;
  remove: RecordedPort[];
  why: string;
  /** The namespace whose pool-port share cut this refill short (or left it out). */
  capped?: string;
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
 * `raven/<cluster>/pool/<node>` until a pod's claim renames it.
 */
export class PoolReconciler {
  readonly #o: PoolReconcilerOptions;
  readonly #clock: Clock;
  /** Ports of refills in flight, by namespace: counted against its share (two nodes refill at once). */
  readonly #making = new Map<string, number>();

  constructor(options: PoolReconcilerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  readonly reconcile = async (node: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    let recheck: number | undefined;
    for (const change of this.changes(node)) {
      if (change.capped !== undefined)
        this.#o.onShareReached?.(change.capped, this.#o.config.quotas?.poolPortsPerNamespace ?? 0);
      if (change.remove.length > 0) await this.#remove(node, change, signal);
      if (change.make > 0) await this.#fill(node, change, signal);
    }
    // An idle pool is emptied once its time is up: look again then.
    const idleMs = this.#o.config.portPools.idleSeconds * 1000;
    for (const pool of this.#o.pools.poolsOf(node)) {
      const left = idleMs - (this.#clock.now() - pool.lastActivity);
      if (pool.free > 0 && left > 0) recheck = Math.min(recheck ?? left, left);
    }
    return recheck === undefined ? undefined : { requeueAfterMs: recheck + 1_000 };
  };

  /** What the node's pools need now (also `raven plan`'s answer). Changes nothing. */
  changes(node: string): PoolChange[] {
    const { portPools } = this.#o.config;
    const nodeExists = this.#o.nodes.get(node) !== undefined;
    const now = this.#clock.now();
    const out: PoolChange[] = [];
    const share = this.#shares();
    for (const pool of this.#o.pools.poolsOf(node)) {
      const owners = pool.subnetIds.map((id) => this.#o.subnets.ownerOf(id));
      const free = this.#o.pools.free(pool.key);
      const gone = owners.includes('gone');
      // A subnet not known yet (Raven has just started): the pool is left as it is until it is.
      if (nodeExists && !gone && owners.includes(undefined)) continue;
      const owner = owners.find((o) => typeof o === 'object');
      const idle =
        now - pool.lastActivity >= portPools.idleSeconds * 1000 &&
        !this.#o.inUse(node, owner?.namespace, this.#o.groupsWanted ? pool.securityGroups : undefined);
      const stale = this.#o.groupsWanted?.(pool.securityGroups) === false;
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
        if (free.length > 0) out.push({ key: pool.key, make: 0, remove: free, why });
        continue;
      }
      const sizes = this.sizes(owner?.namespace);
      if (free.length > sizes.max)
        out.push({ key: pool.key, make: 0, remove: free.slice(sizes.max), why: `above max ${sizes.max}` });
      else if (free.length < sizes.min) {
        const wanted = Math.min(sizes.max - free.length, Math.max(sizes.batch, sizes.min - free.length));
        const { make, capped } = share.take(pool.securityGroups, wanted);
        if (make > 0 || capped !== undefined)
          out.push({ key: pool.key, make, remove: [], why: `below min ${sizes.min}`, ...(capped ? { capped } : {}) });
      }
    }
    return out;
  }

  /**
   * The room left in each namespace's pool-port share: its policy sets' free ports on every node, and its refills in
   * flight, against `quotas.poolPortsPerNamespace`. `take` hands out what fits.
   */
  #shares(): { take(groups: readonly string[], wanted: number): { make: number; capped?: string } } {
    const limit = this.#o.config.quotas?.poolPortsPerNamespace ?? 0;
    const namespaceOf = this.#o.setNamespace;
    if (limit === 0 || !namespaceOf) return { take: (_, wanted) => ({ make: wanted }) };
    const held = new Map(this.#making);
    for (const node of this.#o.pools.nodes())
      for (const pool of this.#o.pools.poolsOf(node)) {
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

  /** A namespace's pool sizes: its own where configured, else the global ones. */
  sizes(namespace: string | undefined): PoolSizes {
    const { min, max, batch, namespaces } = this.#o.config.portPools;
    const own = namespace === undefined ? undefined : namespaces.find((n) => n.namespace === namespace);
    return { min: own?.min ?? min, max: own?.max ?? max, batch: own?.batch ?? batch };
  }

  async #fill(node: string, change: PoolChange, signal: AbortSignal): Promise<void> {
    const pool = this.#o.pools.poolsOf(node).find((p) => p.key === change.key);
    if (!pool) return;
    const { clusterId } = this.#o.config;
    const { securityGroups } = pool;
    const spec = {
      network_id: pool.networkId,
      fixed_ips: pool.subnetIds.map((subnet_id) => ({ subnet_id })),
      name: resourceName(clusterId, 'pool', node),
      description: podPortMark(clusterId),
      device_owner: POD_DEVICE_OWNER,
      device_id: '',
      'binding:host_id': node,
      ...(securityGroups.length > 0 ? { security_groups: [...securityGroups] } : {}),
      tags: [clusterTag(clusterId), `${TAG_KIND}=pod`],
    };
    const started = this.#clock.now();
    const namespace = this.#o.setNamespace?.(securityGroups);
    if (namespace !== undefined) this.#making.set(namespace, (this.#making.get(namespace) ?? 0) + change.make);
    let created;
    try {
      created = await this.#o.ports.createBulk(
        Array.from({ length: change.make }, () => spec),
        // No pod waits for a refill (its tag PUTs included): behind claims and cold creates in Neutron's limit.
        { signal, priority: 'background' },
      );
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
      if (namespace !== undefined) {
        const left = (this.#making.get(namespace) ?? 0) - change.make;
        if (left > 0) this.#making.set(namespace, left);
        else this.#making.delete(namespace);
      }
    }
    for (const port of created) this.#o.pools.add(port);
    const seconds = (this.#clock.now() - started) / 1000;
    this.#o.onRefill?.(seconds, created.length);
    this.#o.logger.info(
      { node, pool: change.key, ports: created.length, seconds, why: change.why },
      'port pool refilled',
    );
    this.#o.pools.refilled.send({ node });
  }

  async #remove(node: string, change: PoolChange, signal: AbortSignal): Promise<void> {
    // Out of the pool first (synchronously), so no pod takes a port being deleted.
    for (const port of change.remove) this.#o.pools.remove(port.id);
    for (const port of change.remove) {
      await this.#o.ports.delete(port.id, { signal, priority: 'background' });
    }
    if (this.#o.pools.free(change.key).length === 0 && change.why !== '' && !change.why.startsWith('above'))
      this.#o.pools.forget(change.key);
    this.#o.logger.info(
      { node, pool: change.key, ports: change.remove.length, why: change.why },
      'port pool ports deleted',
    );
  }
}
