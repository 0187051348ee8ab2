import { errorMessage, realClock, type Clock, type Logger } from '../core/index.ts';
import { Controller, type EventRecorder, type MetricsProvider, type Runnable } from '../controller/index.ts';
import type { KubeObject } from '../kube/api/index.ts';
import { Backoff, indexByNamespace, type SharedInformer, type SharedInformerFactory } from '../kube/cache/index.ts';
import { resources, type KubeClient } from '../kube/client/index.ts';
import { ensureClusterNetwork } from './cluster/bootstrap.ts';
import type { ClusterNetwork, Cloud, ReconcilerConfig } from './common/types.ts';
import { GarbageCollector, ownersIn, uidIndexers } from './gc/collector.ts';
import { networkReadySeconds, type RavenMetrics } from './metrics.ts';
import { NamespaceReconciler } from './namespace/reconciler.ts';
import { NamespaceSubnetStrategy, SharedSubnetStrategy, type SubnetStrategy } from './namespace/strategy.ts';
import { PodReconciler } from './pod/reconciler.ts';
import { trimPod } from './pod/trim.ts';
import { podsWithMissingPorts, portClaims } from './pod/verify.ts';
import {
  endpointsToService,
  ServiceReconciler,
  serviceSliceIndexers,
  sliceToService,
  trimEndpoints,
} from './service/index.ts';

/** What Raven translates, and how hard it works (the daemon's config, mapped). */
export interface RavenOptions {
  client: KubeClient;
  cloud: Cloud;
  informers: SharedInformerFactory;
  config: ReconcilerConfig;
  translations: { namespaces: boolean; pods: boolean; services: boolean };
  workers: { namespaces: number; pods: number; services: number };
  resyncPeriodSeconds: number;
  gcIntervalSeconds: number;
  recorder?: EventRecorder | undefined;
  metrics?: MetricsProvider | undefined;
  /** Raven's own metrics: pod network-ready latency, garbage collection. */
  ravenMetrics?: RavenMetrics | undefined;
  clock?: Clock;
  logger: Logger;
}

/**
 * Raven's translation as one leader-only {@link Runnable}: it ensures the cluster network (router, shared and
 * service subnets; retried with back-off until it succeeds), then runs the namespace, pod and service controllers
 * and the garbage collector until stopped. The informers it needs are registered at construction, so the manager
 * starts and syncs them before any of this runs — on a standby too.
 */
export class Raven implements Runnable {
  readonly name = 'raven';
  readonly #o: RavenOptions;
  readonly #clock: Clock;
  readonly namespaces: SharedInformer<KubeObject>;
  readonly pods: SharedInformer<KubeObject>;
  readonly services: SharedInformer<KubeObject>;
  readonly endpointSlices: SharedInformer<KubeObject>;
  /** core/v1 Endpoints, trimmed: members of a Service that has no EndpointSlices. */
  readonly endpoints: SharedInformer<KubeObject>;
  #controllers: Controller<KubeObject>[] = [];
  #cluster: ClusterNetwork | undefined;
  #gc: GarbageCollector | undefined;
  #podReconciler: PodReconciler | undefined;
  #podController: Controller<KubeObject> | undefined;

  constructor(options: RavenOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    const f = options.informers;
    this.namespaces = f.informerFor<KubeObject>(resources.namespaces);
    this.pods = f.informerFor<KubeObject>(resources.pods, { transform: trimPod });
    this.services = f.informerFor<KubeObject>(resources.services);
    this.endpointSlices = f.informerFor<KubeObject>(resources.endpointslices);
    this.endpoints = f.informerFor<KubeObject>(resources.endpoints, { transform: trimEndpoints });
    for (const inf of [this.namespaces, this.pods, this.services]) inf.addIndexers(uidIndexers);
    this.pods.addIndexers({ byNamespace: indexByNamespace });
    this.endpointSlices.addIndexers(serviceSliceIndexers);
  }

  /** The cluster network once ensured (for tests and `raven plan`). */
  get cluster(): ClusterNetwork | undefined {
    return this.#cluster;
  }

  /** The garbage collector once the cluster network is known. */
  get gc(): GarbageCollector | undefined {
    return this.#gc;
  }

  health(): string | undefined {
    for (const c of this.#controllers) {
      const problem = c.health();
      if (problem) return problem;
    }
    return undefined;
  }

  async start(signal: AbortSignal, options: { hardStop: AbortSignal }): Promise<void> {
    const { config, cloud, client, logger } = this.#o;
    const cluster = await this.#bootstrap(signal);
    if (!cluster) return;
    this.#cluster = cluster;
    const strategy: SubnetStrategy =
      config.subnets.strategy === 'shared'
        ? new SharedSubnetStrategy(cluster.podSubnet!)
        : new NamespaceSubnetStrategy(this.namespaces.lister());
    const common = {
      ...(this.#o.recorder ? { recorder: this.#o.recorder } : {}),
      ...(this.#o.metrics ? { metrics: this.#o.metrics } : {}),
      clock: this.#clock,
      logger,
      resyncEveryMs: this.#o.resyncPeriodSeconds * 1000,
    };
    const controllers: Controller<KubeObject>[] = [];
    if (this.#o.translations.namespaces && config.subnets.strategy === 'namespace') {
      const reconciler = new NamespaceReconciler({
        cloud,
        config,
        cluster,
        client,
        namespaces: this.namespaces.lister(),
        logger: logger.child({ reconciler: 'namespace' }),
      });
      controllers.push(
        new Controller({
          ...common,
          name: 'namespace',
          for: this.namespaces,
          reconcile: reconciler.reconcile,
          workers: this.#o.workers.namespaces,
        }),
      );
    }
    if (this.#o.translations.pods) {
      const reconciler = new PodReconciler({
        cloud,
        config,
        client,
        pods: this.pods.lister(),
        subnets: strategy,
        recorder: this.#o.recorder,
        requeue: (key) => pods.enqueue(key),
        logger: logger.child({ reconciler: 'pod' }),
        onNetworkReady: (pod) => this.#networkReady(pod),
      });
      const pods: Controller<KubeObject> = new Controller({
        ...common,
        name: 'pod',
        for: this.pods,
        reconcile: reconciler.reconcile,
        workers: this.#o.workers.pods,
      });
      this.#podReconciler = reconciler;
      this.#podController = pods;
      // A namespace's subnet appearing (namespace strategy) lets its waiting pods go on.
      if (config.subnets.strategy === 'namespace')
        pods.watches(this.namespaces, (ns) =>
          this.pods
            .lister()
            .byIndex('byNamespace', ns.metadata.name ?? '')
            .map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
        );
      controllers.push(pods);
    }
    if (this.#o.translations.services) {
      if (!cluster.serviceSubnet) logger.warn({}, 'services are not translated: no serviceSubnet is configured');
      else {
        const reconciler = new ServiceReconciler({
          cloud,
          config,
          cluster,
          client,
          services: this.services.lister(),
          endpointSlices: this.endpointSlices.lister(),
          endpoints: this.endpoints.lister(),
          subnets: strategy,
          recorder: this.#o.recorder,
          clock: this.#clock,
          logger: logger.child({ reconciler: 'service' }),
        });
        const services = new Controller({
          ...common,
          name: 'service',
          for: this.services,
          reconcile: reconciler.reconcile,
          workers: this.#o.workers.services,
        });
        services.watches(this.endpointSlices, sliceToService);
        services.watches(this.endpoints, endpointsToService(this.endpointSlices.lister()));
        controllers.push(services);
      }
    }
    this.#controllers = controllers;
    this.#gc = new GarbageCollector({
      cloud,
      config,
      routerId: cluster.routerId,
      logger: logger.child({ component: 'gc' }),
      clock: this.#clock,
      ownerExists: ownersIn({
        pod: this.pods.lister(),
        namespace: this.namespaces.lister(),
        service: this.services.lister(),
      }),
      onDeleted: (orphan) => this.#o.ravenMetrics?.gcDeleted?.(orphan),
    });
    await Promise.all([...controllers.map((c) => c.start(signal, options)), this.#gcLoop(signal)]);
  }

  #networkReady(pod: KubeObject): void {
    const seconds = networkReadySeconds(pod, this.#clock.now());
    if (seconds !== undefined) this.#o.ravenMetrics?.podNetworkReady?.(seconds);
  }

  /** Ensures the cluster network, retrying with back-off (OpenStack may be down at start); undefined if stopped first. */
  async #bootstrap(signal: AbortSignal): Promise<ClusterNetwork | undefined> {
    const backoff = new Backoff(this.#clock);
    while (!signal.aborted) {
      try {
        return await ensureClusterNetwork(this.#o.cloud, this.#o.config, { signal, logger: this.#o.logger });
      } catch (err) {
        if (signal.aborted) break;
        const wait = backoff.next();
        this.#o.logger.error(
          { err: errorMessage(err), retryInMs: wait },
          'cannot ensure the cluster network; retrying',
        );
        await this.#clock.sleep(wait, signal).catch(() => undefined);
      }
    }
    return undefined;
  }

  /**
   * One round of the GC loop: the garbage collection, then the port verification on the ports its sweep saw — the pods
   * whose annotated port is gone are queued for a reconcile that does not trust the annotation. Resolves those keys.
   */
  async collectAndVerify(signal?: AbortSignal): Promise<string[]> {
    const claims = this.#podReconciler ? portClaims(this.pods.lister()) : [];
    const report = await this.#gc!.collect({ signal });
    this.#o.ravenMetrics?.gcRun?.(report);
    const keys = podsWithMissingPorts(claims, report.podPortIds);
    for (const key of keys) {
      this.#podReconciler!.distrust(key);
      this.#podController!.enqueue(key);
    }
    if (keys.length > 0)
      this.#o.logger.warn(
        { pods: keys.length, sample: keys.slice(0, 5) },
        'pods whose annotated port is gone from Neutron: reconciling them again',
      );
    return keys;
  }

  /** GC and the port verification once the caches are synced (they are: the manager waited), then every interval. */
  async #gcLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.collectAndVerify(signal);
      } catch (err) {
        if (!signal.aborted) {
          this.#o.ravenMetrics?.gcRun?.(undefined);
          this.#o.logger.warn({ err: errorMessage(err) }, 'garbage collection failed; next round');
        }
      }
      await this.#clock.sleep(this.#o.gcIntervalSeconds * 1000, signal).catch(() => undefined);
    }
  }
}
