import type { DeepReadonly, Logger } from '../../core/index.ts';
import { RetryableError, TerminalError, type ReconcileResult } from '../../controller/index.ts';
import type { Namespace } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { resources, type KubeClient } from '../../kube/client/index.ts';
import { OpenStackError, type Network, type Subnet } from '../../openstack/index.ts';
import {
  ensureRouterInterface,
  familyOf,
  familySubnets,
  isOwned,
  rangesOf,
  namePrefix,
  NETWORK_ANNOTATION,
  ownerOf,
  ownerTags,
  parseNetworkAnnotation,
  resourceName,
  subnetInfo,
  teardownNamespaceNetwork,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
  type ClusterNetwork,
  type ClusterNetworkSource,
  type NamespaceNetworks,
  type NamespaceSubnetConfig,
  type ReconcilerConfig,
  type SubnetInfo,
  type IpFamily,
} from '../network/index.ts';
import { carveSubnet } from './carve.ts';

export interface NamespaceReconcilerOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  /** Where namespace subnets come from: a Neutron subnet pool, or blocks carved from a range. */
  subnets: NamespaceSubnetConfig;
  cluster: ClusterNetworkSource;
  /** Raven's record of each namespace's network: written here, read by the subnet strategy. */
  networks: NamespaceNetworks;
  client: KubeClient;
  namespaces: Lister<Namespace>;
  logger: Logger;
}

/** While this cluster's ports are still leaving a namespace's network. */
const TEARDOWN_RETRY_MS = 2_000;

/**
 * Namespace → network + subnet + router interface (the `namespace` strategy), recorded in {@link NamespaceNetworks}
 * and projected on the Namespace as `raven.openstack.org/network`. Every reconcile verifies the network in Neutron, so
 * one deleted by hand (or lost with the cloud's state) is rebuilt — with its former CIDR when that is still free, so
 * its pods can keep their addresses.
 *
 * - The network is `raven/<cluster>/<namespace>`, found by that name: the one tagged for this namespace's uid, else
 *   an untagged one (its tags were lost to a crash between create and tag), which is adopted. A network of that name
 *   tagged for anyone else is never touched.
 * - A namespace that is gone or terminating has its network torn down once this cluster's ports have left it; so is
 *   a network of this cluster left by an earlier namespace of the same name (another uid). A port Raven does not own
 *   blocks that, and is named in a log line (the namespace is gone: no object is left to carry an Event).
 */
export class NamespaceReconciler {
  readonly #o: NamespaceReconcilerOptions;
  /** Carving a CIDR and creating the subnet are serialised, so two namespaces never pick the same block. */
  #carving: Promise<unknown> = Promise.resolve();
  /** Each subnet pool's family, once read, by pool id. */
  readonly #poolFamilies = new Map<string, IpFamily>();

  constructor(options: NamespaceReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (name: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    // The bootstrap's `ready` event queues every namespace again once the router is known.
    const cluster = this.#o.cluster.current();
    if (!cluster) return;
    const { neutron } = this.#o.cloud;
    const { clusterId } = this.#o.config;
    const ns = this.#o.namespaces.get(name);
    const networks = await neutron.networks.list({ name: resourceName(clusterId, name) }, { signal });
    const live = ns && !ns.metadata.deletionTimestamp ? ns : undefined;
    const uid = live?.metadata.uid;
    const mine = uid
      ? (networks.find((n) => isOwned(n.tags, clusterId, 'namespace', uid)) ?? networks.find((n) => !ownerOf(n.tags)))
      : undefined;
    let next: ReconcileResult | undefined;
    for (const network of networks) {
      if (network === mine || !isOwned(network.tags, clusterId, 'namespace')) continue;
      // Its namespace is gone (or was replaced): its pools drain. Known by the network's owner tag, not the cache: a
      // namespace can leave the cache before any reconcile saw it Terminating.
      this.#o.networks.delete(name, ownerOf(network.tags)!.uid, network.subnets ?? []);
      const result = await teardownNamespaceNetwork(
        this.#o.cloud,
        clusterId,
        cluster.routerId,
        network,
        this.#o.logger,
        signal,
      );
      if (result.state === 'waiting') next = { requeueAfterMs: TEARDOWN_RETRY_MS };
      if (result.state === 'blocked') {
        const context = { namespace: name, network: network.id, blockingPort: result.port };
        this.#o.logger.warn(context, 'a port Raven does not own blocks the teardown of a namespace network');
        next ??= { requeueAfterMs: WAIT_FOR_OUTSIDE_FIX_MS };
      }
    }
    const gone = ns?.metadata.uid;
    if (!live && gone) this.#o.networks.delete(name, gone);
    if (live && uid) await this.#ensure(live, name, uid, mine, cluster, signal);
    return next;
  };

  async #ensure(
    ns: DeepReadonly<Namespace>,
    name: string,
    uid: string,
    existing: Network | undefined,
    cluster: ClusterNetwork,
    signal: AbortSignal,
  ): Promise<void> {
    const { neutron } = this.#o.cloud;
    const tags = ownerTags(this.#o.config.clusterId, 'namespace', uid);
    // The families first: a configuration they refuse makes nothing.
    const families = await this.#families(signal);
    const network = existing ?? (await this.#createNetwork(name, uid, signal));
    if (!isOwned(network.tags, this.#o.config.clusterId, 'namespace', uid))
      await neutron.tags.replace('networks', network.id, tags, { signal });
    const onNetwork = await neutron.subnets.list({ network_id: network.id }, { signal });
    // The CIDRs the namespace had: Raven's record, else the annotation (only a preference for a free block of the
    // configured range; a forged one can name nothing else).
    const had = this.#o.networks.get(uid) ?? parseNetworkAnnotation(ns);
    const before = had ? familySubnets(had).map((s) => s.cidr) : [];
    // A subnet per family (dual-stack: the primary first).
    const subnets: Subnet[] = [];
    for (const family of families) {
      let subnet = onNetwork.find((s) => familyOf(s.cidr) === family);
      const preferred = before.find((c) => familyOf(c) === family);
      if (!subnet) subnet = await this.#createSubnet(name, uid, network.id, family, preferred, signal);
      else if (!isOwned(subnet.tags, this.#o.config.clusterId, 'namespace', uid))
        await neutron.tags.replace('subnets', subnet.id, tags, { signal });
      subnets.push(subnet);
    }
    if (cluster.routerId) for (const subnet of subnets) await this.#attach(cluster.routerId, subnet, signal);
    const info: SubnetInfo = subnetInfo(subnets[0]!, network, subnets[1]);
    this.#o.networks.set(name, uid, info, existing === undefined);
    const current = parseNetworkAnnotation(ns);
    if (!current || JSON.stringify(current) !== JSON.stringify(info)) {
      await this.#o.client.patch(
        resources.namespaces,
        name,
        undefined,
        { metadata: { annotations: { [NETWORK_ANNOTATION]: JSON.stringify(info) } } },
        'merge',
        { signal },
      );
      this.#o.logger.info(
        { namespace: name, networkId: info.networkId, subnets: familySubnets(info).map((f) => f.cidr) },
        'namespace network ready',
      );
    }
  }

  /** The router interface; a router found gone asks the bootstrap to rebuild it, and this namespace waits for it. */
  async #attach(routerId: string, subnet: Subnet, signal: AbortSignal): Promise<void> {
    try {
      await ensureRouterInterface(this.#o.cloud.neutron, routerId, subnet.id, signal);
    } catch (err) {
      if (!(err instanceof OpenStackError && err.type === 'RouterNotFound')) throw err;
      this.#o.cluster.recheck();
      throw new RetryableError('RouterMissing', `the cluster router ${routerId} is gone from Neutron; rebuilding it`, {
        cause: err,
      });
    }
  }

  async #createNetwork(name: string, uid: string, signal: AbortSignal): Promise<Network> {
    const { neutron } = this.#o.cloud;
    const network = await neutron.networks.create(
      { name: resourceName(this.#o.config.clusterId, name), description: `Raven: pods of namespace ${name}` },
      { signal },
    );
    await neutron.tags.replace('networks', network.id, ownerTags(this.#o.config.clusterId, 'namespace', uid), {
      signal,
    });
    return network;
  }

  /**
   * The IP families of a namespace's network, the primary first: those of the configured ranges, or the subnet pools'
   * (each read from Neutron once). Two pools of one family cannot be: a configuration error.
   */
  async #families(signal: AbortSignal): Promise<IpFamily[]> {
    const pools = this.#pools();
    if (pools.length > 0) {
      const families: IpFamily[] = [];
      for (const id of pools) {
        let family = this.#poolFamilies.get(id);
        if (!family) {
          const pool = await this.#o.cloud.neutron.subnetPools.get(id, { signal });
          family = pool.ip_version === 6 ? 'IPv6' : 'IPv4';
          this.#poolFamilies.set(id, family);
        }
        families.push(family);
      }
      if (families[0] === families[1])
        throw new TerminalError(
          `subnets.namespace.subnetPoolIds: subnet pools ${pools.join(' and ')} are both ${families[0]}: give one pool per IP family`,
          { reason: 'InvalidConfiguration' },
        );
      return families;
    }
    const families = rangesOf(this.#o.subnets).flatMap((r) => familyOf(r) ?? []);
    return families.length > 0 ? families : ['IPv4'];
  }

  /** The configured subnet pools (one per family), none when subnets are carved from ranges. */
  #pools(): readonly string[] {
    const { subnetPoolId, subnetPoolIds } = this.#o.subnets;
    return subnetPoolIds ?? (subnetPoolId ? [subnetPoolId] : []);
  }

  #createSubnet(
    name: string,
    uid: string,
    networkId: string,
    family: IpFamily,
    preferred: string | undefined,
    signal: AbortSignal,
  ) {
    const run = this.#carving.then(async () => {
      const { neutron } = this.#o.cloud;
      const { config } = this.#o;
      const subnetPoolId = this.#pools().find((id) => this.#poolFamilies.get(id) === family);
      const range = rangesOf(this.#o.subnets).find((r) => familyOf(r) === family);
      const prefixLength = family === 'IPv6' ? (this.#o.subnets.ipv6PrefixLength ?? 64) : this.#o.subnets.prefixLength;
      const v6 = { ip_version: 6 as const, ipv6_ra_mode: 'dhcpv6-stateful', ipv6_address_mode: 'dhcpv6-stateful' };
      const common = {
        network_id: networkId,
        ...(family === 'IPv6' ? v6 : { ip_version: 4 as const }),
        name: resourceName(config.clusterId, name),
      };
      let subnet;
      try {
        if (subnetPoolId)
          subnet = await neutron.subnets.create(
            { ...common, subnetpool_id: subnetPoolId, prefixlen: prefixLength },
            { signal },
          );
        else if (range) {
          // Every subnet of this cluster by name (tagged or not: an untagged one still holds its range).
          const prefix = namePrefix(config.clusterId);
          const used = (await neutron.subnets.list({}, { fields: ['cidr', 'name'], signal }))
            .filter((s) => s.name.startsWith(prefix))
            .map((s) => s.cidr);
          const cidr = carveSubnet(range, prefixLength, used, preferred);
          if (!cidr)
            throw new RetryableError(
              'SubnetExhausted',
              `no free /${prefixLength} left in ${range} for namespace ${name}`,
              { maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
            );
          subnet = await neutron.subnets.create({ ...common, cidr }, { signal });
        } else {
          throw new TerminalError('subnets.namespace has neither subnetPoolId nor cidr', {
            reason: 'InvalidConfiguration',
          });
        }
      } catch (err) {
        if (err instanceof OpenStackError && (err.type === 'SubnetAllocationError' || err.type === 'OverQuota')) {
          throw new RetryableError(
            err.type === 'OverQuota' ? 'QuotaExceeded' : 'SubnetExhausted',
            `cannot create the subnet of namespace ${name}: ${err.message}`,
            { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
          );
        }
        throw err;
      }
      await neutron.tags.replace('subnets', subnet.id, ownerTags(config.clusterId, 'namespace', uid), { signal });
      return subnet;
    });
    this.#carving = run.catch(() => undefined);
    return run;
  }
}
