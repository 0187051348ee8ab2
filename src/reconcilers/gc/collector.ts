import { errorMessage, realClock, type Clock, type Logger } from '../../core/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { isNotFound, isOpenStackError, type Port, type SecurityGroup } from '../../openstack/index.ts';
import {
  type Cloud,
  clusterTag,
  adoptPodPorts,
  deleteTrunkAndPodSubports,
  heldUntil,
  holdKindOf,
  detachSubport,
  isDetachedSubport,
  listUntaggedPodPorts,
  namePrefix,
  ownerOf,
  podPortMark,
  podPortTags,
  POD_DEVICE_OWNER,
  type ReconcilerConfig,
  resourceName,
  SUBPORT_DEVICE_OWNER,
  TAG_KIND,
  teardownNamespaceNetwork,
} from '../network/index.ts';

/** Answers whether an owner (by kind and uid) still exists: the informers' caches, indexed by uid. */
export type OwnerExists = (kind: 'pod' | 'namespace' | 'service', uid: string) => boolean;

/** The `uid` index {@link ownersIn} reads; add it to the pod, namespace and service informers. */
export const uidIndexers = {
  uid: (o: { metadata: { uid?: string | undefined } }): string[] => (o.metadata.uid ? [o.metadata.uid] : []),
};

/** {@link OwnerExists} over listers carrying {@link uidIndexers}. */
export function ownersIn(listers: Record<'pod' | 'namespace' | 'service', Lister<unknown>>): OwnerExists {
  return (kind, uid) => listers[kind].byIndex('uid', uid).length > 0;
}

/**
 * {@link CollectorOptions.trunks} over the Node lister (carrying {@link uidIndexers}): a trunk's Node exists by the uid
 * in its tags, or by its name (a Node deleted and registered again has a new uid and the same trunk).
 */
export function trunkNodesIn(nodes: Lister<unknown>): NonNullable<CollectorOptions['trunks']> {
  return {
    nodeExists: (uid, name) =>
      nodes.byIndex('uid', uid).length > 0 || (name !== undefined && nodes.get(name) !== undefined),
  };
}

export interface Orphan {
  type: 'port' | 'network' | 'loadbalancer' | 'floatingip' | 'securitygroup' | 'trunk';
  id: string;
  name: string;
  ownerKind: string;
  ownerUid: string;
  ageSeconds: number;
}

/** An orphan network a port Raven does not own holds: Raven never deletes that port, so a person must. */
export interface Blocked {
  resource: 'network';
  id: string;
  name: string;
  blockingPort: { id: string; name: string; deviceOwner: string; deviceId: string };
}

export interface GcReport {
  orphans: Orphan[];
  /** Deletes that deleted something (a resource found already gone is not counted). */
  deleted: number;
  /** Orphans left for the next round (a network whose ports are still going, a failed delete). */
  deferred: number;
  /** Orphan networks held by a port Raven does not own (also in `deferred`). */
  blocked: Blocked[];
  /**
   * Pod ports that look like this cluster's (its name prefix, `compute:raven`) but carry none of its tags: never
   * touched, reported so that a person can look (a crash between a port's create and its tagging leaves one).
   */
  untagged: { id: string; name: string }[];
  /** Every pod port of this cluster the sweep saw, orphan or not (the port verification reads it: no second list). */
  podPorts: readonly Port[];
  /** Every security group of this cluster the sweep saw, with its rules (the group verification reads it). */
  securityGroups: readonly SecurityGroup[];
  /**
   * The uids of the Services whose load balancer the sweep listed (undefined when it did not look at Octavia): the
   * load balancer verification reads it, so a Service whose load balancer was deleted out of band is rebuilt.
   */
  loadBalancerOwners?: ReadonlySet<string> | undefined;
  /**
   * The ids of every part of the cluster's load balancers the sweep saw (the load balancers, their listeners, pools
   * and members, VIP ports and floating IPs); undefined when it did not look at Octavia.
   */
  loadBalancerParts?: ReadonlySet<string> | undefined;
  /**
   * With `networks` on: the ids of the cluster's networks and subnets the sweep listed, and the subnets with an
   * interface on the cluster router — the namespace network verification reads them.
   */
  networks?:
    | {
        networks: ReadonlySet<string>;
        subnets: ReadonlySet<string>;
        /** Undefined without a cluster router. */
        routed: ReadonlySet<string> | undefined;
      }
    | undefined;
}

export interface CollectorOptions {
  cloud: Cloud;
  /** `subnets`: the pod subnets Raven was configured with (a pool's ports may sit on an operator's). */
  config: Pick<ReconcilerConfig, 'clusterId' | 'gc'> & Partial<Pick<ReconcilerConfig, 'subnets'>>;
  ownerExists: OwnerExists;
  logger: Logger;
  clock?: Clock;
  /** Called after each orphan is deleted (metrics). */
  onDeleted?: ((orphan: Orphan) => void) | undefined;
  /**
   * With warm port pools on: whether a node exists, and which free pod ports the pools own. A port the pools own (in
   * a pool the pool reconciler decides on, or being given to a pod) is never deleted here: the pool reconciler alone
   * trims and drains it, so the two never race on a port. Of the others, a pod port no pod owns is still a pool's (not
   * an orphan) while its node lives and it sits on a pod network Raven knows: a live namespace's or the cluster's (by
   * their tags), or the subnet Raven was configured with (`subnets.shared.subnetIds`: an operator's network carries
   * none of Raven's tags). What is left — a port on a network whose namespace went while Raven was down, whose pool
   * the pool reconciler leaves alone — is this sweep's.
   */
  pools?: { nodeExists: (name: string) => boolean; owns?: ((portId: string) => boolean) | undefined } | undefined;
  /**
   * With the NetworkPolicy translation on: whether it wants the security group of this id (the group's `raven.uid`)
   * with this Neutron id (a second group of one id, made by a create whose answer was lost, is not wanted). Absent,
   * every security group of the cluster is an orphan (the translation is off, or the cluster is gone).
   */
  securityGroups?: { wanted: (id: string, neutronId: string) => boolean } | undefined;
  /**
   * With the NetworkPolicy translation off: the groups a pod port gets instead of Raven's (the configured
   * `securityGroups`; none: its project's `default` group). A port still in a group of the cluster — the translation
   * was on before — is moved to them, so the group can go and the pod is not left isolated by a policy nobody
   * translates any more.
   */
  releaseGroupsTo?: readonly string[] | undefined;
  /**
   * Whether to look for load balancers. Default true; false when Services are not translated, where the cloud may
   * have no Octavia at all (the real dataplane rig has only Neutron).
   */
  loadBalancers?: boolean;
  /**
   * The cluster is gone (`raven gc --teardown`): floating IPs kept for a Service's name (`keep-floatingip`) and held
   * ones still in quarantine are orphans too.
   */
  teardown?: boolean;
  /** Also list the cluster's subnets and the router's interfaces, for the namespace network verification. */
  networks?: boolean;
  /**
   * With nested mode on: whether the Node a trunk Raven made belongs to exists, by the uid in the trunk's tags or by
   * the name in its own. Absent, trunks are not looked at (the cloud may have no trunk extension).
   */
  trunks?: { nodeExists: (uid: string, name: string | undefined) => boolean } | undefined;
}

export interface CollectOptions {
  routerId: string | undefined;
  /** Report without deleting (`raven gc` without `--yes`, `raven plan`). */
  dryRun?: boolean;
  signal?: AbortSignal | undefined;
}

/** Octavia's timestamps have no zone (`2026-11-22T12:06:15`); they are UTC. */
function parseTime(value: string | null | undefined): number {
  if (!value) return 0;
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
}

/** The Node a trunk Raven made is for, by the trunk's name (`raven/<cluster>/<node>`); undefined for a hashed one. */
function nodeOfTrunk(clusterId: string, name: string): string | undefined {
  const node = name.slice(namePrefix(clusterId).length);
  return name.startsWith(namePrefix(clusterId)) && resourceName(clusterId, node) === name ? node : undefined;
}

/**
 * The garbage collector: finds every cloud resource this cluster owns whose owner no longer exists, and deletes it
 * once older than the grace age (so an object the informers have not seen yet is never swept). Ownership is read
 * only from this cluster's tags (`raven.cluster=<id>` with the kind and the owner's uid), so nothing untagged or from
 * another cluster is ever deleted; untagged look-alikes of pod ports are reported. `dryRun` reports without deleting
 * (`raven gc` without `--yes`).
 */
export class GarbageCollector {
  readonly #o: CollectorOptions;
  readonly #clock: Clock;

  constructor(options: CollectorOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /** One sweep. `routerId` is the cluster router a namespace network is detached from before it goes. */
  async collect(options: CollectOptions): Promise<GcReport> {
    const { neutron, octavia } = this.#o.cloud;
    const { clusterId, gc } = this.#o.config;
    const { signal } = options;
    // Nothing waits for a sweep: behind every other Neutron request in the limit.
    const priority = 'background';
    const now = this.#clock.now();
    const graceMs = gc.graceSeconds * 1000;
    const orphans: Orphan[] = [];
    const consider = (o: Omit<Orphan, 'ageSeconds'>, createdAt: string | null | undefined): void => {
      const ageMs = now - parseTime(createdAt);
      if (ageMs < graceMs) return;
      orphans.push({ ...o, ageSeconds: Math.round(ageMs / 1000) });
    };

    const namespaceNetworks = await neutron.networks.list(
      { tags: [clusterTag(clusterId), `${TAG_KIND}=namespace`] },
      { fields: ['id', 'name', 'tags', 'created_at'], signal, priority },
    );
    // Free pool ports (no pod owns them) belong to their pool while its node and its network live.
    const poolNetworks = this.#o.pools
      ? new Set([
          ...namespaceNetworks.filter((n) => this.#ownerLives('namespace', n.tags)).map((n) => n.id),
          ...(
            await neutron.networks.list(
              { tags: [clusterTag(clusterId), `${TAG_KIND}=cluster`] },
              { fields: ['id'], signal, priority },
            )
          ).map((n) => n.id),
        ])
      : new Set<string>();
    const { subnets } = this.#o.config;
    const poolSubnets = new Set(subnets?.strategy === 'shared' ? (subnets.shared.subnetIds ?? []) : []);
    const prefix = namePrefix(clusterId);
    const mark = podPortMark(clusterId);
    const untaggedPorts = await listUntaggedPodPorts(neutron, clusterId, signal, priority);
    // Untagged ports with Raven's mark: creates whose tagging a crash cut short. The record's load adopts those it
    // finds; one that lands after it (a killed process's request still in flight) is adopted here once older than the
    // grace period, else it would hold a pod's uid (a second port) or a network until the next leader.
    const pastGrace = untaggedPorts.filter((p) => now - parseTime(p.created_at) >= graceMs);
    const adopted = options.dryRun ? [] : await adoptPodPorts(neutron, clusterId, pastGrace, signal, 'background');
    if (adopted.length > 0)
      this.#o.logger.info({ ports: adopted.length }, 'garbage collection: adopted pod ports a crash left untagged');
    // One list by the pod ports' tags: the pod ports, and the subports a trunk let go of (ML2/OVN cleared their owner).
    const tagged = await neutron.ports.list({ tags: podPortTags(clusterId) }, { signal, priority });
    const owners: readonly string[] = [POD_DEVICE_OWNER, SUBPORT_DEVICE_OWNER];
    const podPorts = [...tagged.filter((p) => owners.includes(p.device_owner)), ...adopted];
    for (const port of [...podPorts, ...tagged.filter(isDetachedSubport)]) {
      // A pod port's owner is its `device_id` (empty for a pool port no pod has had yet).
      if (port.device_id && this.#o.ownerExists('pod', port.device_id)) continue;
      if (this.#o.pools?.owns?.(port.id)) continue;
      const host = port['binding:host_id'];
      const onPodNetwork =
        poolNetworks.has(port.network_id) || port.fixed_ips.some((ip) => poolSubnets.has(ip.subnet_id));
      if (onPodNetwork && host && this.#o.pools?.nodeExists(host)) continue;
      consider(
        { type: 'port', id: port.id, name: port.name, ownerKind: 'pod', ownerUid: port.device_id },
        port.created_at,
      );
    }
    // Untagged ports with Raven's mark are a crash's leftovers, adopted (above, or by the next leader): not reported.
    const untagged = untaggedPorts
      .filter((p) => p.name.startsWith(prefix) && p.description !== mark)
      .map(({ id, name }) => ({ id, name }));
    for (const network of namespaceNetworks) {
      const owner = ownerOf(network.tags);
      if (!owner || this.#o.ownerExists('namespace', owner.uid)) continue;
      consider(
        { type: 'network', id: network.id, name: network.name, ownerKind: 'namespace', ownerUid: owner.uid },
        network.created_at,
      );
    }
    const lbs =
      this.#o.loadBalancers === false
        ? []
        : await octavia.loadBalancers.list({ tags: [clusterTag(clusterId)] }, { signal });
    const lbOwners = new Set(lbs.flatMap((lb) => ownerOf(lb.tags)?.uid ?? []));
    // Service VIP ports (Raven creates them and passes vip_port_id): swept once their service and its LB are gone.
    const vipPorts = await neutron.ports.list(
      { tags: [clusterTag(clusterId), `${TAG_KIND}=service`] },
      { fields: ['id', 'name', 'tags', 'created_at'], signal, priority },
    );
    for (const port of vipPorts) {
      const owner = ownerOf(port.tags);
      if (!owner || this.#o.ownerExists('service', owner.uid) || lbOwners.has(owner.uid)) continue;
      consider(
        { type: 'port', id: port.id, name: port.name, ownerKind: 'service', ownerUid: owner.uid },
        port.created_at,
      );
    }
    for (const lb of lbs) {
      const owner = ownerOf(lb.tags);
      if (!owner || owner.kind !== 'service' || this.#o.ownerExists('service', owner.uid)) continue;
      consider(
        { type: 'loadbalancer', id: lb.id, name: lb.name, ownerKind: 'service', ownerUid: owner.uid },
        lb.created_at,
      );
    }
    const fips = await neutron.floatingIps.list({ tags: [clusterTag(clusterId)] }, { signal, priority });
    for (const fip of fips) {
      const owner = ownerOf(fip.tags);
      // Kept (keep-floatingip) for a Service's name until the teardown; held until its quarantine ends.
      const hold = holdKindOf(fip.tags, clusterId);
      if (owner && hold) {
        if (this.#o.teardown || (hold === 'held' && heldUntil(fip.tags) <= now)) {
          const orphan = { type: 'floatingip', id: fip.id, name: fip.floating_ip_address, ownerKind: hold } as const;
          consider({ ...orphan, ownerUid: owner.uid }, fip.created_at);
        }
        continue;
      }
      if (!owner || owner.kind !== 'service' || this.#o.ownerExists('service', owner.uid)) continue;
      consider(
        { type: 'floatingip', id: fip.id, name: fip.floating_ip_address, ownerKind: 'service', ownerUid: owner.uid },
        fip.created_at,
      );
    }

    // With their rules: the group verification compares them with Raven's record.
    const groups = await neutron.securityGroups.list(
      { tags: [clusterTag(clusterId), `${TAG_KIND}=securitygroup`] },
      { signal, priority },
    );
    if (this.#o.releaseGroupsTo && !options.dryRun)
      await this.#releaseGroups(podPorts, new Set(groups.map((g) => g.id)), this.#o.releaseGroupsTo, signal);
    for (const group of groups) {
      const owner = ownerOf(group.tags);
      if (!owner || this.#o.securityGroups?.wanted(owner.uid, group.id)) continue;
      consider(
        { type: 'securitygroup', id: group.id, name: group.name, ownerKind: 'securitygroup', ownerUid: owner.uid },
        group.created_at,
      );
    }

    // Trunks Raven made (nested mode) whose Node is gone, also one deleted while no Raven ran.
    const trunks = this.#o.trunks
      ? await neutron.trunks.list({ tags: [clusterTag(clusterId), `${TAG_KIND}=node`] }, { signal, priority })
      : [];
    for (const trunk of trunks) {
      const owner = ownerOf(trunk.tags);
      if (!owner || this.#o.trunks?.nodeExists(owner.uid, nodeOfTrunk(clusterId, trunk.name))) continue;
      consider(
        { type: 'trunk', id: trunk.id, name: trunk.name, ownerKind: 'node', ownerUid: owner.uid },
        trunk.created_at,
      );
    }

    let deleted = 0;
    let deferred = 0;
    const blocked: Blocked[] = [];
    if (!options.dryRun) {
      // Trunks first (their pod subports with them), then ports, so the networks they sat on and the groups they
      // carried can go in the same round.
      const order = { trunk: 0, port: 1, floatingip: 2, loadbalancer: 3, securitygroup: 4, network: 5 } as const;
      for (const orphan of [...orphans].sort((a, b) => order[a.type] - order[b.type])) {
        // A port may have joined a pool since it was listed (its pod went): the pool's now.
        if (orphan.type === 'port' && orphan.ownerKind === 'pod' && this.#o.pools?.owns?.(orphan.id)) continue;
        try {
          const outcome = await this.#delete(orphan, options.routerId, signal);
          if (outcome === 'deleted') deleted++;
          else if (outcome !== 'gone') {
            deferred++;
            if (outcome !== 'waiting') blocked.push({ resource: 'network', ...outcome });
          }
        } catch (err) {
          deferred++;
          this.#o.logger.warn({ ...orphan, err: errorMessage(err) }, 'garbage collection: delete failed; next round');
        }
      }
    }
    if (orphans.length > 0)
      this.#o.logger.info(
        { orphans: orphans.length, deleted, deferred, dryRun: Boolean(options.dryRun) },
        'garbage collection',
      );
    // One line per round for each: the namespace is gone, so no object is left to carry an Event.
    for (const b of blocked)
      this.#o.logger.warn(
        { network: b.name, networkId: b.id, blockingPort: b.blockingPort },
        'garbage collection: a port Raven does not own blocks the deletion of an orphan network',
      );
    if (untagged.length > 0)
      this.#o.logger.warn(
        { ports: untagged.length, sample: untagged.slice(0, 5) },
        "garbage collection: pod ports named like this cluster's carry none of its tags; not touched",
      );
    const loadBalancerOwners = this.#o.loadBalancers === false ? undefined : lbOwners;
    return {
      orphans,
      deleted,
      deferred,
      blocked,
      untagged,
      podPorts,
      securityGroups: groups,
      loadBalancerOwners,
      loadBalancerParts:
        this.#o.loadBalancers === false
          ? undefined
          : await this.#loadBalancerParts(lbs, [...vipPorts, ...fips], signal),
      networks: this.#o.networks ? await this.#networks(namespaceNetworks, options.routerId, signal) : undefined,
    };
  }

  /**
   * The ids of every part of the cluster's load balancers the sweep saw — listeners and pools (the load balancers
   * name them), members (one list of the project's pools), VIP ports and the cluster's floating IPs (listed above) —
   * for the load balancer verification.
   */
  async #loadBalancerParts(
    lbs: readonly { id: string; listeners?: readonly { id: string }[]; pools?: readonly { id: string }[] }[],
    listed: readonly { id: string }[],
    signal: AbortSignal | undefined,
  ): Promise<ReadonlySet<string>> {
    const ids = new Set<string>(listed.map((r) => r.id));
    const pools = new Set<string>();
    for (const lb of lbs) {
      ids.add(lb.id);
      for (const l of lb.listeners ?? []) ids.add(l.id);
      for (const p of lb.pools ?? []) pools.add(p.id);
    }
    if (pools.size > 0)
      for (const pool of await this.#o.cloud.octavia.pools.list({}, { signal }))
        if (pools.has(pool.id)) for (const id of [pool.id, ...pool.members.map((m) => m.id)]) ids.add(id);
    return ids;
  }

  /**
   * What the namespace network verification reads: the networks listed above, the cluster's subnets, and the subnets
   * the router has an interface on (listed after the deletes, so a network swept this round is not among them).
   */
  async #networks(
    networks: readonly { id: string }[],
    routerId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<NonNullable<GcReport['networks']>> {
    const { neutron } = this.#o.cloud;
    const priority = 'background';
    const subnets = await neutron.subnets.list(
      { tags: [clusterTag(this.#o.config.clusterId)] },
      { fields: ['id'], signal, priority },
    );
    // Every port of the router but its gateway and HA ports: an interface (plain, distributed or HA-replicated).
    const interfaces = routerId
      ? (await neutron.ports.list({ device_id: routerId }, { fields: ['device_owner', 'fixed_ips'], signal, priority }))
          .filter(
            (p) => p.device_owner !== 'network:router_gateway' && p.device_owner !== 'network:router_ha_interface',
          )
          .flatMap((p) => p.fixed_ips.map((ip) => ip.subnet_id))
      : [];
    return {
      networks: new Set(networks.map((n) => n.id)),
      subnets: new Set(subnets.map((s) => s.id)),
      routed: routerId ? new Set(interfaces) : undefined,
    };
  }

  /** Moves every pod port out of the cluster's groups, into `to` (or its project's `default` group). */
  async #releaseGroups(
    ports: readonly Port[],
    clusterGroups: ReadonlySet<string>,
    to: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { neutron } = this.#o.cloud;
    const defaults = new Map<string, string | undefined>();
    for (const port of ports) {
      if (!(port.security_groups ?? []).some((id) => clusterGroups.has(id))) continue;
      let groups = [...to];
      if (groups.length === 0) {
        const project = port.project_id ?? '';
        if (!defaults.has(project)) {
          const [found] = await neutron.securityGroups.list(
            { name: 'default', project_id: project },
            { fields: ['id'], signal, priority: 'background' },
          );
          defaults.set(project, found?.id);
        }
        const fallback = defaults.get(project);
        if (!fallback) continue;
        groups = [fallback];
      }
      try {
        await neutron.ports.update(port.id, { security_groups: groups }, { signal, priority: 'background' });
        this.#o.logger.info(
          { portId: port.id, name: port.name },
          "garbage collection: a pod port left Raven's security groups (NetworkPolicy translation off)",
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  #ownerLives(kind: 'namespace', tags: readonly string[] | undefined): boolean {
    const owner = ownerOf(tags);
    return owner !== undefined && this.#o.ownerExists(kind, owner.uid);
  }

  /** Deletes one orphan: whether it went, was already gone, or is waiting for (or blocked by) ports on it. */
  async #delete(
    orphan: Orphan,
    routerId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<'deleted' | 'gone' | 'waiting' | Omit<Blocked, 'resource'>> {
    const { neutron, octavia } = this.#o.cloud;
    let deleted: boolean;
    switch (orphan.type) {
      case 'port':
        try {
          deleted = await neutron.ports.delete(orphan.id, { signal, priority: 'background' });
        } catch (err) {
          // A nested pod's subport (its pod deleted while no Raven ran): off its trunk first, then deleted.
          if (!isOpenStackError(err, 'PortInUseAsSubPort')) throw err;
          await detachSubport(neutron, orphan.id, signal, 'background');
          deleted = await neutron.ports.delete(orphan.id, { signal, priority: 'background' });
        }
        break;
      case 'trunk': {
        const trunk = await neutron.trunks.get(orphan.id, { signal, priority: 'background' }).catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
        if (!trunk) return 'gone';
        // Its pod subports off and, unless a pod or a pool holds them, deleted: ML2/OVN would leave them ownerless.
        const gone = (p: Port) =>
          !(p.device_id && this.#o.ownerExists('pod', p.device_id)) && !this.#o.pools?.owns?.(p.id);
        const { clusterId } = this.#o.config;
        const ports = await deleteTrunkAndPodSubports(neutron, clusterId, trunk, gone, signal, 'background');
        for (const p of ports) {
          const port = { type: 'port', id: p.id, name: p.name, ownerKind: 'pod', ownerUid: p.device_id } as const;
          this.#o.onDeleted?.({
            ...port,
            ageSeconds: Math.round((this.#clock.now() - parseTime(p.created_at)) / 1000),
          });
        }
        deleted = true;
        break;
      }
      case 'floatingip':
        deleted = await neutron.floatingIps.delete(orphan.id, { signal, priority: 'background' });
        break;
      case 'loadbalancer':
        deleted = await octavia.loadBalancers.delete(orphan.id, { cascade: true, signal });
        break;
      case 'securitygroup':
        try {
          deleted = await neutron.securityGroups.delete(orphan.id, { signal, priority: 'background' });
        } catch (err) {
          // A port still carries it (its pod is being re-grouped, or the pod port goes this round): next round.
          if (isOpenStackError(err, 'SecurityGroupInUse')) return 'waiting';
          throw err;
        }
        break;
      case 'network': {
        const { clusterId } = this.#o.config;
        const network = { id: orphan.id, name: orphan.name };
        const result = await teardownNamespaceNetwork(
          this.#o.cloud,
          clusterId,
          routerId,
          network,
          this.#o.logger,
          signal,
        );
        if (result.state === 'waiting') return 'waiting';
        if (result.state === 'blocked') return { ...network, blockingPort: result.port };
        deleted = true;
        break;
      }
    }
    if (!deleted) return 'gone';
    this.#o.logger.info({ ...orphan }, 'garbage collection: deleted an orphan');
    this.#o.onDeleted?.(orphan);
    return 'deleted';
  }
}
