import { randomUUID } from 'node:crypto';
import { realClock, type Clock, type DeepReadonly, type Logger } from '../core/index.ts';
import {
  allKeys,
  EventChannel,
  EventRecorder,
  listeningServer,
  Manager,
  newControllerManagedBy,
  type BuilderOptions,
  type Runnable,
} from '../controller/index.ts';
import { keyOf, objectReference, type Namespace } from '../kube/api/index.ts';
import { indexByNamespace, SharedInformerFactory, trimMetadata, type Lister } from '../kube/cache/index.ts';
import { resources } from '../kube/client/index.ts';
import { NeutronClient, OctaviaClient } from '../openstack/index.ts';
import {
  ClusterNetworkBootstrap,
  endpointsToService,
  GarbageCollectionLoop,
  GarbageCollector,
  NamespaceNetworks,
  NamespaceReconciler,
  NamespaceSubnetStrategy,
  networkReadySeconds,
  ownersIn,
  indexByNode,
  PendingClaims,
  PodPortRecord,
  PodPortRecordLoader,
  PortPools,
  trimNode,
  wantsLoadBalancer,
  wantsPort,
  PodReconciler,
  portVerification,
  ServiceReconciler,
  serviceSliceIndexers,
  SharedSubnetStrategy,
  sliceToService,
  trimEndpoints,
  trimPod,
  uidIndexers,
  podIpIndexers,
  UNWIRED_INDEX,
  unwiredPodIndexers,
  type CachedPod,
  type Cloud,
  type ClusterNetworkSource,
  type PortFreed,
  type PortGone,
  loadBalancerVerification,
  type LoadBalancerGone,
  type SubnetStrategy,
  type SubnetStrategyName,
} from '../reconcilers/index.ts';
import type { RavenConfig } from './config/index.ts';
import { reconcilerConfig, servicesTranslated, type Connections } from './connect.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { OpenStackReadiness } from './openstack-readiness.ts';
import { listenOps } from './ops-server.ts';
import { wireWarmPools } from './compose-pools.ts';
import { wireNetworkPolicies, type NetworkPolicyParts } from './compose-policies.ts';

/** What the warm pools take from the NetworkPolicy translation: each pod's set, and which sets are still wanted. */
function policyTakes(parts: NetworkPolicyParts) {
  return {
    podGroups: (pod: DeepReadonly<CachedPod>) => {
      const groups = parts.podGroups.of(pod);
      return 'ids' in groups ? groups.ids : undefined;
    },
    groupsWanted: parts.groupsWanted,
    changed: parts.status.changed,
    setNamespace: parts.setNamespace,
  };
}

/** What a subnet strategy may be built from. */
interface StrategyDeps {
  cluster: ClusterNetworkSource;
  namespaces: Lister<Namespace>;
  namespaceNetworks: NamespaceNetworks;
}

/** The subnet strategies, by `subnets.strategy`: the one place a strategy is chosen. */
const subnetStrategies = {
  shared: ({ cluster }) => new SharedSubnetStrategy(cluster),
  namespace: ({ namespaces, namespaceNetworks }) => new NamespaceSubnetStrategy(namespaces, namespaceNetworks),
} satisfies Record<SubnetStrategyName, (deps: StrategyDeps) => SubnetStrategy>;

export interface ComposeOptions {
  config: RavenConfig;
  logger: Logger;
  /** Closed when the manager stops (or if composing fails), unless `closeConnections` is false. */
  connections: Connections;
  /** False when the caller keeps using the connections afterwards (tests). Default true. */
  closeConnections?: boolean;
  /** Servers this process also runs (`raven dev`'s API server and OpenStack simulator): stopped last. */
  servers?: readonly Runnable[];
  /** More work for the same manager, run whoever leads (`raven dev`'s cluster simulator and demo). */
  alongside?: readonly Runnable[];
  clock?: Clock;
  /** False: no ops server (`raven plan`, which runs this composition on dry-run connections). Default true. */
  ops?: boolean;
}

/** Raven, composed: start `manager`; the rest is for tests and `raven dev`'s banner. */
export interface ComposedRaven {
  manager: Manager;
  /** The ops server's base URL (`/healthz`, `/readyz`, `/metrics`); empty without one (`ops: false`). */
  opsUrl: string;
  cluster: ClusterNetworkSource;
  /** The sweep alone (`raven gc` runs the same), and the loop that runs it with the port verification. */
  collector: GarbageCollector;
  gc: GarbageCollectionLoop;
  /** Where Events go (the manager flushes it on stop). */
  recorder: EventRecorder;
  metrics: Metrics;
}

/**
 * The composition root: every part of Raven built once, in order, and handed to one manager that owns start and
 * stop — clients and informers, the cluster network bootstrap, the subnet strategy, the namespace, pod and service
 * controllers with the event channels between them, the garbage collector, the ops server, and whatever the caller
 * adds (servers, simulators). Nothing is half-built: once this returns, `manager.start(signal)` runs it all.
 */
export async function composeRaven(options: ComposeOptions): Promise<ComposedRaven> {
  try {
    return await compose(options);
  } catch (err) {
    // Nothing runs yet: give back what was handed over (connections, listening servers) before failing.
    const now = AbortSignal.abort();
    await Promise.allSettled([
      ...(options.closeConnections === false ? [] : closeAll(options.connections)),
      ...(options.servers ?? []).map((server) => server.start(now, { hardStop: now })),
    ]);
    throw err;
  }
}

async function compose(options: ComposeOptions): Promise<ComposedRaven> {
  const { config, logger, connections } = options;
  const { client, eventsClient, session } = connections;
  const clock = options.clock ?? realClock;
  const rc = reconcilerConfig(config);
  const metrics = createMetrics();
  const informers = new SharedInformerFactory({ client, logger: logger.child({ component: 'informers' }) });
  const recorder = new EventRecorder({ client: eventsClient, component: 'raven', clock, logger });
  const le = config.leaderElection;
  const identity = le.identity || `raven-${randomUUID()}`;
  const leaderElection = {
    client,
    namespace: le.namespace,
    name: le.name,
    identity,
    leaseDurationMs: le.leaseDurationSeconds * 1000,
    renewDeadlineMs: le.renewDeadlineSeconds * 1000,
    retryPeriodMs: le.retryPeriodSeconds * 1000,
  };
  const unreadyAfterMs = config.ops.unreadyAfterSeconds * 1000;
  const manager = new Manager({
    informers,
    recorder,
    logger,
    clock,
    informersUnreadyAfterMs: unreadyAfterMs,
    ...(le.enabled ? { leaderElection } : {}),
  });
  if (le.enabled) metrics.leaderElection(le.name, () => manager.isLeader());
  if (options.closeConnections !== false)
    manager.closeOnStop(async () => void (await Promise.all(closeAll(connections))));
  // Undone at the end also when the session is the caller's: it outlives this run.
  manager.closeOnStop(session.observe(metrics.openstack));
  for (const server of options.servers ?? []) manager.addServer(server);
  for (const runnable of options.alongside ?? []) manager.add(runnable, { leaderOnly: false });

  const cloud: Cloud = { neutron: new NeutronClient(session), octavia: new OctaviaClient(session) };
  const cloudReadiness = new OpenStackReadiness({ neutron: cloud.neutron, unreadyAfterMs, clock });
  manager.closeOnStop(session.observe(cloudReadiness.observe));
  manager.addReadyzCheck('openstack', cloudReadiness.check);

  // The caches: pods and Endpoints trimmed to what the reconcilers read; the others without what only the API server
  // and kubectl read (managedFields, last-applied-configuration).
  const namespaces = informers.informerFor(resources.namespaces, { transform: trimMetadata });
  const pods = informers.informerFor(resources.pods, { transform: trimPod });
  const services = informers.informerFor(resources.services, { transform: trimMetadata });
  const endpointSlices = informers.informerFor(resources.endpointslices, { transform: trimMetadata });
  const endpoints = informers.informerFor(resources.endpoints, { transform: trimEndpoints });
  namespaces.addIndexers(uidIndexers);
  pods.addIndexers({
    ...uidIndexers,
    ...unwiredPodIndexers,
    ...podIpIndexers,
    byNamespace: indexByNamespace,
    byNode: indexByNode,
  });
  services.addIndexers({ ...uidIndexers, byNamespace: indexByNamespace });
  endpointSlices.addIndexers(serviceSliceIndexers);

  const resyncEveryMs = config.resyncPeriodSeconds * 1000;
  const translatesServices = servicesTranslated(config);
  const cluster = new ClusterNetworkBootstrap({ cloud, config: rc, recheckEveryMs: resyncEveryMs, clock, logger });
  manager.add(cluster);
  // Raven's own record of what it made, as the subnet strategy and the pod reconciler read it (never annotations).
  const namespaceNetworks = new NamespaceNetworks();
  const subnets = subnetStrategies[rc.subnets.strategy]({
    cluster,
    namespaces: namespaces.lister(),
    namespaceNetworks,
  });
  const record = new PodPortRecord();
  const portsFreed = new EventChannel<PortFreed>('ports-freed');
  const portsGone = new EventChannel<PortGone>('ports-gone');
  const loadBalancersGone = new EventChannel<LoadBalancerGone>('loadbalancers-gone');
  const controllerOptions = (workers: number): BuilderOptions => ({
    workers,
    recorder,
    metrics: metrics.provider,
    clock,
    logger,
    resyncEveryMs,
  });
  const inNamespace =
    <T extends { metadata: { namespace?: string; name?: string } }>(lister: Lister<T>) =>
    (e: { namespace: string }): string[] =>
      lister.byIndex('byNamespace', e.namespace).map(keyOf);

  if (config.translations.namespaces && rc.subnets.strategy === 'namespace') {
    const reconciler = new NamespaceReconciler({
      cloud,
      config: rc,
      subnets: rc.subnets.namespace,
      cluster,
      networks: namespaceNetworks,
      client,
      namespaces: namespaces.lister(),
      logger: logger.child({ reconciler: 'namespace' }),
    });
    newControllerManagedBy(manager)
      .named('namespace')
      .for(namespaces)
      .watchesChannel(cluster.ready, allKeys(namespaces))
      .watchesChannel(namespaceNetworks.suspect, (e) => [e.namespace])
      .withOptions(controllerOptions(config.workers.namespaces))
      .complete(reconciler.reconcile);
  }

  let podController: { waiting(): Map<string, number> } | undefined;
  const poolsOn = config.translations.pods && rc.portPools.enabled;
  // Without the translation and configured groups, every port gets the project's default group: groups key no pool.
  const anyGroups = !rc.networkPolicies && rc.securityGroups.length === 0;
  const warm = poolsOn ? { pools: new PortPools({ anyGroups }, clock), claims: new PendingClaims() } : undefined;
  const nodes =
    poolsOn || rc.networkPolicies ? informers.informerFor(resources.nodes, { transform: trimNode }) : undefined;
  const policies = rc.networkPolicies
    ? informers.informerFor(resources.networkpolicies, { transform: trimMetadata })
    : undefined;
  policies?.addIndexers({ byNamespace: indexByNamespace });
  let policyParts: NetworkPolicyParts | undefined;
  if (config.translations.pods) {
    const loader = new PodPortRecordLoader({
      neutron: cloud.neutron,
      clusterId: rc.clusterId,
      record,
      clock,
      logger: logger.child({ component: 'pod-port-record' }),
    });
    manager.add(loader);
    if (policies && nodes)
      policyParts = wireNetworkPolicies({
        manager,
        policies,
        namespaces,
        pods,
        nodes,
        ...(translatesServices
          ? { services: { informer: services, balanced: (svc) => wantsLoadBalancer(svc, rc) } }
          : {}),
        cloud,
        rc,
        cluster,
        clusterNetworkReady: cluster.ready,
        podPorts: record,
        recorder,
        controllerOptions,
        metrics,
        clock,
        logger,
      });
    // Whether a pod with this uid exists and wants a port: a port whose device_id names none is free.
    const portWanted = (uid: string): boolean =>
      pods
        .lister()
        .byIndex('uid', uid)
        .some((p) => wantsPort(p));
    const reconciler = new PodReconciler({
      cloud,
      config: rc,
      client,
      pods: pods.lister(),
      subnets,
      record,
      pools: warm,
      groups: policyParts?.podGroups,
      portWanted,
      portsFreed,
      recorder,
      logger: logger.child({ reconciler: 'pod' }),
      onNetworkReady: (pod) => {
        const seconds = networkReadySeconds(pod, clock.now());
        if (seconds !== undefined) metrics.raven.podNetworkReady(seconds);
      },
    });
    const unwired = (): string[] => pods.lister().byIndex(UNWIRED_INDEX, 'unwired').map(keyOf);
    const builder = newControllerManagedBy(manager)
      .named('pod')
      .for(pods)
      // A cluster network first known or rebuilt, and the record loaded: every pod is checked (no OpenStack call for
      // a pod whose annotation matches the record).
      .watchesChannel(cluster.ready, allKeys(pods))
      .watchesChannel(loader.loaded, allKeys(pods))
      .watchesChannel(namespaceNetworks.changed, inNamespace(pods.lister()))
      .watchesChannel(portsGone, (gone) => [gone.key])
      .watchesChannel(portsFreed, unwired);
    if (policies && policyParts) {
      const { model, record: groups, status } = policyParts;
      builder
        // A policy's pods (before and after the change) and those of the sets its rules name: their groups may change.
        .watches(policies, (policy) => model.affectedPods(policy))
        // A namespace's labels move its pods in and out of namespaceSelector sets.
        .watches(namespaces, (ns) =>
          pods
            .lister()
            .byIndex('byNamespace', ns.metadata.name ?? '')
            .map(keyOf),
        )
        // Its record loaded, or a group made: pods waiting for their groups go on.
        .watchesChannel(policyParts.loader.loaded, allKeys(pods))
        .watchesChannel(status.changed, (e) => {
          const key = e.change === 'created' ? model.groups().get(e.id)?.key : undefined;
          return key && groups.get(e.id) ? model.members(key) : [];
        });
    }
    if (warm && nodes) {
      builder.watchesChannel(warm.pools.refilled, unwired);
      // A claim landed: the pod's groups may have changed while it was pending.
      builder.watchesChannel(warm.claims.settled, (e) => [e.key]);
      wireWarmPools({
        manager,
        warm,
        nodes,
        pods,
        record,
        loader,
        cloud,
        rc,
        subnets,
        portsGone,
        namespaceNetworkChanged: namespaceNetworks.changed,
        clusterNetworkReady: cluster.ready,
        portWanted,
        ...(policyParts ? { policies: policyTakes(policyParts) } : {}),
        onShareReached: (name, share) => {
          const ns = namespaces.lister().get(name);
          const message = `the warm pools of its NetworkPolicy sets hold ${share} free port(s), its share (quotas.poolPortsPerNamespace): further pods of those sets get a port of their own when they start`;
          if (ns)
            recorder.record(
              objectReference(ns, { kind: 'Namespace', apiVersion: 'v1' }),
              'Warning',
              'PoolShareReached',
              message,
            );
        },
        controllerOptions,
        workers: config.workers.pods,
        metrics,
        clock,
        logger,
      });
    }
    podController = builder.withOptions(controllerOptions(config.workers.pods)).complete(reconciler.reconcile);
  }

  let serviceController: { waiting(): Map<string, number> } | undefined;
  if (config.translations.services && !translatesServices) {
    logger.warn({}, 'services are not translated: no serviceSubnet is configured');
  } else if (translatesServices) {
    const reconciler = new ServiceReconciler({
      cloud,
      config: rc,
      cluster,
      client,
      services: services.lister(),
      endpointSlices: endpointSlices.lister(),
      endpoints: endpoints.lister(),
      subnets,
      pods: pods.lister(),
      recorder,
      clock,
      logger: logger.child({ reconciler: 'service' }),
    });
    serviceController = newControllerManagedBy(manager)
      .named('service')
      .for(services)
      .watches(endpointSlices, sliceToService)
      .watches(endpoints, endpointsToService(endpointSlices.lister()))
      .watchesChannel(cluster.ready, allKeys(services))
      .watchesChannel(namespaceNetworks.changed, inNamespace(services.lister()))
      .watchesChannel(loadBalancersGone, (gone) => [gone.key])
      .withOptions(controllerOptions(config.workers.services))
      .complete(reconciler.reconcile);
  }

  metrics.raven.waiting({
    pods: () => podController?.waiting(),
    services: () => serviceController?.waiting(),
    records: () =>
      new Map([
        ['pod-ports', record.synced() ? 0 : 1],
        ...(policyParts ? [['security-groups', policyParts.record.synced() ? 0 : 1] as const] : []),
      ]),
  });

  const collector = new GarbageCollector({
    cloud,
    config: rc,
    logger: logger.child({ component: 'gc' }),
    clock,
    ownerExists: ownersIn({ pod: pods.lister(), namespace: namespaces.lister(), service: services.lister() }),
    loadBalancers: config.translations.services,
    pools: warm && nodes ? { nodeExists: (name) => nodes.lister().get(name) !== undefined } : undefined,
    securityGroups: policyParts ? { wanted: policyParts.groupWanted } : undefined,
    releaseGroupsTo: policyParts ? undefined : rc.securityGroups,
    onDeleted: (orphan) => {
      metrics.raven.gcDeleted(orphan);
      if (orphan.type === 'port' && orphan.ownerKind === 'pod') portsFreed.send({ portId: orphan.id });
    },
  });
  const gc = new GarbageCollectionLoop({
    collector,
    cluster,
    intervalMs: config.gc.intervalSeconds * 1000,
    checks: [
      ...(config.translations.pods
        ? [portVerification({ pods: pods.lister(), record, portsGone, logger: logger.child({ component: 'gc' }) })]
        : []),
      ...(policyParts ? [policyParts.verification] : []),
      ...(serviceController
        ? [
            loadBalancerVerification({
              services: services.lister(),
              config: rc,
              loadBalancersGone,
              logger: logger.child({ component: 'gc' }),
            }),
          ]
        : []),
    ],
    onRound: (report) => metrics.raven.gcRun(report),
    clock,
    logger: logger.child({ component: 'gc' }),
  });
  manager.add(gc);

  if (options.ops === false) return { manager, opsUrl: '', cluster, collector, gc, recorder, metrics };
  const ops = await listenOps({
    host: config.ops.host,
    port: config.ops.port,
    health: manager.health,
    registry: metrics.registry,
    logger,
  });
  manager.addServer(listeningServer('ops', () => ops.close()));
  return { manager, opsUrl: ops.url, cluster, collector, gc, recorder, metrics };
}

function closeAll({ client, eventsClient, session }: Connections): Promise<void>[] {
  return [client.close(), ...(eventsClient === client ? [] : [eventsClient.close()]), session.close()];
}
