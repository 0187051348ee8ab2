import type { DeepReadonly, Logger } from '../../core/index.ts';
import { RetryableError, TerminalError, type ReconcileResult } from '../../controller/index.ts';
import type { Namespace } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { resources, type KubeClient } from '../../kube/client/index.ts';
import { OpenStackError, type Network } from '../../openstack/index.ts';
import {
  ensureRouterInterface,
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
  type NamespaceSubnetConfig,
  type ReconcilerConfig,
  type SubnetInfo,
} from '../network/index.ts';
import { carveSubnet } from './carve.ts';

export interface NamespaceReconcilerOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  /** Where namespace subnets come from: a Neutron subnet pool, or blocks carved from a range. */
  subnets: NamespaceSubnetConfig;
  cluster: ClusterNetworkSource;
  client: KubeClient;
  namespaces: Lister<Namespace>;
  logger: Logger;
}

const TEARDOWN_RETRY_MS = 2_000;

/**
 * Namespace → network + subnet + router interface (the `namespace` strategy), published on the Namespace as
 * `raven.openstack.org/network`. The network is found by name (`raven/<cluster>/<namespace>`) and its owner tag, so a
 * crash anywhere is repaired by the next reconcile. A namespace that is gone or terminating has its network torn
 * down once no pod ports remain on it (the pod reconciler deletes those); a network left by an earlier namespace of
 * the same name (another uid) is torn down the same way.
 */
export class NamespaceReconciler {
  readonly #o: NamespaceReconcilerOptions;
  /** Carving a CIDR and creating the subnet are serialised, so two namespaces never pick the same block. */
  #carving: Promise<unknown> = Promise.resolve();

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
    // By name alone (it carries the cluster id): a network whose tags were lost to a crash between create and tag is
    // found too, and adopted rather than duplicated.
    const networks = await neutron.networks.list({ name: resourceName(clusterId, name) }, { signal });
    const live = ns && !ns.metadata.deletionTimestamp ? ns : undefined;
    const uid = live?.metadata.uid;
    const mine = uid
      ? (networks.find((n) => ownerOf(n.tags)?.uid === uid) ?? networks.find((n) => !ownerOf(n.tags)))
      : undefined;
    let pending = false;
    for (const network of networks) {
      if (network === mine) continue;
      if (!(await teardownNamespaceNetwork(this.#o.cloud, cluster.routerId, network, this.#o.logger, signal)))
        pending = true;
    }
    if (live && uid) await this.#ensure(live, name, uid, mine, cluster, signal);
    return pending ? { requeueAfterMs: TEARDOWN_RETRY_MS } : undefined;
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
    const network = existing ?? (await this.#createNetwork(name, uid, signal));
    if (ownerOf(network.tags)?.uid !== uid) await neutron.tags.replace('networks', network.id, tags, { signal });
    let [subnet] = await neutron.subnets.list({ network_id: network.id }, { signal });
    if (!subnet) subnet = await this.#createSubnet(name, uid, network.id, signal);
    else if (ownerOf(subnet.tags)?.uid !== uid) await neutron.tags.replace('subnets', subnet.id, tags, { signal });
    if (cluster.routerId) await ensureRouterInterface(neutron, cluster.routerId, subnet.id, signal);
    const info: SubnetInfo = subnetInfo(subnet, network);
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
        { namespace: name, networkId: info.networkId, subnetId: info.subnetId, cidr: info.cidr },
        'namespace network ready',
      );
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

  #createSubnet(name: string, uid: string, networkId: string, signal: AbortSignal) {
    const run = this.#carving.then(async () => {
      const { neutron } = this.#o.cloud;
      const { config } = this.#o;
      const { subnetPoolId, cidr: range, prefixLength } = this.#o.subnets;
      const common = { network_id: networkId, ip_version: 4 as const, name: resourceName(config.clusterId, name) };
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
          const cidr = carveSubnet(range, prefixLength, used);
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
