import { errorMessage, RavenError, realClock, type Clock, type Logger } from '../../core/index.ts';
import { EventChannel, type Runnable } from '../../controller/index.ts';
import { Backoff } from '../../kube/cache/index.ts';
import { isNotFound, type NeutronClient, type Subnet } from '../../openstack/index.ts';
import {
  canonicalCidr,
  ensureRouterInterface,
  familySubnets,
  lastHost,
  rangesOf,
  subnetFamilyAttrs,
  ownerTags,
  resourceName,
  subnetInfo,
  TAG_CLUSTER,
  TAG_KIND,
  type ClusterNetwork,
  type Cloud,
  type ClusterNetworkSource,
  type ReconcilerConfig,
  type SubnetInfo,
  type SubnetRanges,
} from '../network/index.ts';

export interface BootstrapOptions {
  signal?: AbortSignal | undefined;
  logger: Logger;
}

/** The cluster's own resource of a kind, by its tags (cluster + kind=cluster) and name. */
function clusterTags(config: ReconcilerConfig): string[] {
  return ownerTags(config.clusterId, 'cluster', config.clusterId);
}

/**
 * A network Raven owns for the cluster (`raven/<cluster>/<role>`) with a subnet per range (one per IP family, the
 * primary first), found by name and tags, created when missing. IPv6 subnets are `dhcpv6-stateful`.
 */
async function ensureOwnSubnets(
  cloud: Cloud,
  config: ReconcilerConfig,
  role: 'pods' | 'services',
  cidrs: readonly string[],
  signal?: AbortSignal,
): Promise<SubnetInfo> {
  const { neutron } = cloud;
  const name = resourceName(config.clusterId, role);
  const tags = clusterTags(config);
  let [network] = await neutron.networks.list({ name, tags: [`${TAG_CLUSTER}=${config.clusterId}`] }, { signal });
  const existing = network ? await neutron.subnets.list({ network_id: network.id }, { signal }) : [];
  const find = (cidr: string) => existing.find((s) => canonicalCidr(s.cidr) === canonicalCidr(cidr));
  if (!network) {
    network = await neutron.networks.create(
      { name, description: `Raven ${role} network of cluster ${config.clusterId}` },
      { signal },
    );
    await neutron.tags.replace('networks', network.id, tags, { signal });
  }
  const subnets = [];
  for (const cidr of cidrs) {
    let subnet = find(cidr);
    if (!subnet) {
      // The service subnet's gateway goes to the last address, not the first: Kubernetes gives the first one to the
      // `kubernetes` Service, and every clusterIP must stay free for an Octavia VIP.
      const gateway = role === 'services' ? { gateway_ip: lastHost(cidr) } : {};
      subnet = await neutron.subnets.create(
        { network_id: network.id, ...subnetFamilyAttrs(cidr), cidr, name, ...gateway },
        { signal },
      );
      await neutron.tags.replace('subnets', subnet.id, tags, { signal });
    }
    subnets.push(subnet);
  }
  return subnetInfo(subnets[0]!, network, subnets[1]);
}

/** The configured existing subnet, or the one(s) Raven owns on the configured range(s) (the configuration names one). */
async function ownOrExisting(
  cloud: Cloud,
  config: ReconcilerConfig,
  role: 'pods' | 'services',
  from: SubnetRanges & { field: string },
  signal?: AbortSignal,
): Promise<SubnetInfo> {
  const ids = from.subnetIds ?? (from.subnetId ? [from.subnetId] : []);
  if (ids.length > 0) return existingSubnets(cloud.neutron, ids, from, signal);
  const cidrs = rangesOf(from);
  if (cidrs.length > 0) return ensureOwnSubnets(cloud, config, role, cidrs, signal);
  throw new RavenError('CONFIG_INVALID', `${from.field} needs subnetId, cidr or cidrs`);
}

/**
 * The configured existing subnet(s) (and their network's MTU): one, or (dual-stack) one per IP family on one network,
 * the primary first. A missing subnet, two on different networks or of one family are configuration errors.
 */
async function existingSubnets(
  neutron: NeutronClient,
  ids: readonly string[],
  from: { field: string; subnetIds?: readonly string[] | undefined },
  signal?: AbortSignal,
): Promise<SubnetInfo> {
  const what = `${from.field}.${from.subnetIds ? 'subnetIds' : 'subnetId'}`;
  const subnets = await Promise.all(
    ids.map((id) =>
      neutron.subnets.get(id, { signal }).catch((err: unknown) => {
        if (isNotFound(err))
          throw new RavenError('CONFIG_INVALID', `${what}: subnet ${id} does not exist in Neutron`, { cause: err });
        throw err;
      }),
    ),
  );
  const [primary, secondary] = subnets as [Subnet, Subnet | undefined];
  if (secondary && secondary.network_id !== primary.network_id)
    throw new RavenError(
      'CONFIG_INVALID',
      `${what}: subnets ${primary.id} and ${secondary.id} are on different networks (${primary.network_id}, ${secondary.network_id}); a pod port takes an address of each family on one network`,
    );
  if (secondary && secondary.ip_version === primary.ip_version)
    throw new RavenError(
      'CONFIG_INVALID',
      `${what}: subnets ${primary.id} and ${secondary.id} are both IPv${primary.ip_version}; list one subnet per IP family`,
    );
  const network = await neutron.networks.get(primary.network_id, { signal });
  return subnetInfo(primary, network, secondary);
}

/**
 * Makes the cluster-level network exist, idempotently (run when Raven starts leading, and again on every recheck):
 * the router (a configured one; or `raven/<cluster>/router` with the external gateway, unless `router.create` is
 * false), the shared pod subnet with the `shared` strategy, and the service subnet — both attached to the router when
 * there is one. An operator's existing subnet is attached only to a router that is configured or asked for.
 */
export async function ensureClusterNetwork(
  cloud: Cloud,
  config: ReconcilerConfig,
  options: BootstrapOptions,
): Promise<ClusterNetwork> {
  const { neutron } = cloud;
  const { signal, logger } = options;
  let routerId = config.router.id;
  if (routerId) {
    try {
      await neutron.routers.get(routerId, { fields: ['id'], signal });
    } catch (err) {
      if (isNotFound(err))
        throw new RavenError('CONFIG_INVALID', `router.id ${routerId} does not exist in Neutron`, { cause: err });
      throw err;
    }
  } else if (config.router.create) {
    const name = resourceName(config.clusterId, 'router');
    let [router] = await neutron.routers.list(
      { name, tags: [`${TAG_CLUSTER}=${config.clusterId}`, `${TAG_KIND}=cluster`] },
      { fields: ['id'], signal },
    );
    if (!router) {
      const created = await neutron.routers.create(
        {
          name,
          ...(config.router.externalNetworkId
            ? { external_gateway_info: { network_id: config.router.externalNetworkId } }
            : {}),
        },
        { signal },
      );
      await neutron.tags.replace('routers', created.id, clusterTags(config), { signal });
      router = created;
      logger.info({ routerId: created.id }, 'created the cluster router');
    }
    routerId = router?.id;
  }

  let podSubnet: SubnetInfo | undefined;
  if (config.subnets.strategy === 'shared') {
    const from = { ...config.subnets.shared, field: 'subnets.shared' };
    podSubnet = await ownOrExisting(cloud, config, 'pods', from, signal);
    if (routerId && podSubnet)
      for (const s of familySubnets(podSubnet)) await ensureRouterInterface(neutron, routerId, s.subnetId, signal);
  }
  let serviceSubnet: SubnetInfo | undefined;
  const svc = config.serviceSubnet;
  if (svc.subnetId || rangesOf(svc).length > 0) {
    serviceSubnet = await ownOrExisting(cloud, config, 'services', { ...svc, field: 'serviceSubnet' }, signal);
    const podSubnets = new Set(podSubnet ? familySubnets(podSubnet).map((s) => s.subnetId) : []);
    for (const s of serviceSubnet && routerId ? familySubnets(serviceSubnet) : [])
      if (!podSubnets.has(s.subnetId)) await ensureRouterInterface(neutron, routerId!, s.subnetId, signal);
  }
  return { routerId, podSubnet, serviceSubnet };
}

export interface ClusterNetworkBootstrapOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  /** Verify the cluster network in Neutron this often besides on {@link ClusterNetworkBootstrap.recheck}. 0: never. */
  recheckEveryMs?: number;
  clock?: Clock;
  logger: Logger;
}

/**
 * The leader's cluster network: ensured when Raven starts leading (retrying with back-off: OpenStack may be down),
 * then verified again — and rebuilt where something is gone — every `recheckEveryMs` and whenever a reconciler says
 * part of it is gone ({@link recheck}). It is the {@link ClusterNetworkSource} the reconcilers and the garbage
 * collector read, and sends the network on {@link ready} when it is first known and whenever it changes (a router or
 * subnet rebuilt has a new id), so controllers look at their objects again.
 */
export class ClusterNetworkBootstrap implements Runnable, ClusterNetworkSource {
  readonly name = 'cluster-network';
  /** The cluster network, when first known and on every change. */
  readonly ready = new EventChannel<ClusterNetwork>('cluster-network-ready');
  readonly #o: ClusterNetworkBootstrapOptions;
  readonly #clock: Clock;
  #network: ClusterNetwork | undefined;
  readonly #known: Promise<ClusterNetwork>;
  readonly #resolveKnown: (network: ClusterNetwork) => void;
  /** Set by {@link recheck}; wakes the loop when it waits. */
  #recheckRequested = false;
  #wake: (() => void) | undefined;

  constructor(options: ClusterNetworkBootstrapOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    let resolveKnown: (network: ClusterNetwork) => void = () => undefined;
    this.#known = new Promise((resolve) => (resolveKnown = resolve));
    this.#resolveKnown = resolveKnown;
  }

  current(): ClusterNetwork | undefined {
    return this.#network;
  }

  whenReady(signal: AbortSignal): Promise<ClusterNetwork | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      void this.#known.then((network) => {
        signal.removeEventListener('abort', onAbort);
        resolve(network);
      });
    });
  }

  /** 1 until the cluster network is first known, then 0: the manager's view of this runnable's work. */
  pending(): number {
    return this.#network ? 0 : 1;
  }

  recheck(): void {
    this.#recheckRequested = true;
    this.#wake?.();
  }

  /** Ensures the cluster network, then keeps verifying it until stopped. */
  async start(signal: AbortSignal): Promise<void> {
    const { cloud, config, logger } = this.#o;
    const backoff = new Backoff(this.#clock);
    while (!signal.aborted) {
      this.#recheckRequested = false;
      try {
        const network = await ensureClusterNetwork(cloud, config, { signal, logger });
        const before = this.#network;
        this.#network = network;
        this.#resolveKnown(network);
        if (!before || JSON.stringify(before) !== JSON.stringify(network)) {
          const { routerId, podSubnet, serviceSubnet } = network;
          const ranges = (info: SubnetInfo | undefined) => info && familySubnets(info).map((s) => s.cidr);
          logger.info(
            { routerId, podSubnet: ranges(podSubnet), serviceSubnet: ranges(serviceSubnet), rebuilt: Boolean(before) },
            'cluster network ready',
          );
          this.ready.send(network);
        }
      } catch (err) {
        if (signal.aborted) return;
        // A recheck asked for meanwhile does not cut the back-off short: failing reconcilers ask often.
        const wait = backoff.next();
        logger.error({ err: errorMessage(err), retryInMs: wait }, 'cannot ensure the cluster network; retrying');
        await this.#clock.sleep(wait, signal).catch(() => undefined);
        continue;
      }
      await this.#sleep(this.#o.recheckEveryMs || undefined, signal);
    }
  }

  /** Until `ms` have passed (undefined: for ever), {@link recheck} is called, or `signal` aborts. */
  async #sleep(ms: number | undefined, signal: AbortSignal): Promise<void> {
    if (this.#recheckRequested || signal.aborted) return;
    const woken = new AbortController();
    this.#wake = () => woken.abort();
    const onAbort = (): void => woken.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (ms === undefined)
        await new Promise<void>((resolve) => woken.signal.addEventListener('abort', () => resolve()));
      else await this.#clock.sleep(ms, woken.signal).catch(() => undefined);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#wake = undefined;
    }
  }
}
