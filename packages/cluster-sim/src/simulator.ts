import { realClock, silentLogger, type Clock, type DeepReadonly, type Logger } from '../../../src/core/index.ts';
import { ControllerBuilder, EventRecorder, keysSource, type Runnable } from '../../../src/controller/index.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import {
  indexByNamespace,
  type IndexFunc,
  type SharedInformer,
  type SharedInformerFactory,
} from '../../../src/kube/cache/index.ts';
import { resources, type ClusterConnection, type KubeClient } from '../../../src/kube/client/index.ts';
import { deploymentOf, deploymentReconciler } from './deployments.ts';
import { endpointSliceReconciler, servicesSelecting, slicesByService, slicesByServiceIndex } from './endpointslices.ts';
import { kubeletReconciler } from './kubelet.ts';
import { namespaceReconciler, terminating } from './namespaces.ts';
import { nodeReconciler, simNodes, type SimNode, type SimNodeInput } from './nodes.ts';
import { Scheduler, podsByNode, podsByNodeIndex } from './scheduler.ts';
import { defaultMaxEndpointsPerSlice } from './slices.ts';
import { subresourceWriter, type SubresourceWriter } from './subresource.ts';
import type { Deployment, EndpointSlice, Namespace, Node, Pod, Service } from '../../../src/kube/api/index.ts';
import { byNamespace } from './indexes.ts';
import type { DataplaneRuntime } from './runtime/sandboxes.ts';

export interface ClusterSimulatorOptions {
  /** Plays many kubelets at once: give it a generous QPS. */
  client: KubeClient;
  /**
   * Where the simulator's informers come from. Give it its own factory rather than Raven's: Raven's may trim what
   * it caches (container ports, status) and the simulator reads those.
   */
  informers: SharedInformerFactory;
  /**
   * The connection `client` was built from: the `pods/binding` and `namespaces/finalize` writes go through it, as
   * KubeClient cannot write subresources yet. Without it no pod gets scheduled (each gets a FailedScheduling Event).
   */
  connection?: ClusterConnection;
  /** The nodes to register: names, or names with extra labels. Default `node-1`…`node-3`. */
  nodes?: SimNodeInput[];
  /** The annotation Raven writes the VIF to. Default `raven.openstack.org/vif`. */
  vifAnnotation?: string;
  /**
   * Like a CNI plugin: containers start only once the VIF annotation is there (hostNetwork pods never wait). Default
   * true.
   */
  requireVif?: boolean;
  /** Runs the pods of real-dataplane nodes (network namespaces plugged through CNI); other nodes stay simulated. */
  runtime?: DataplaneRuntime;
  /** The longest a terminating pod's grace period is honoured before the kubelet removes it. Default 2000. */
  deleteGraceMs?: number;
  /** Endpoints per EndpointSlice before another is made. Default 100, as kube-controller-manager. */
  maxEndpointsPerSlice?: number;
  /** Workers of each controller. Default 4. */
  workers?: number;
  clock?: Clock;
  logger?: Logger;
}

/**
 * The rest of a Kubernetes cluster, for `raven dev` and the end-to-end tests: Nodes, a scheduler, a kubelet stand-in,
 * the EndpointSlice controller, the namespace finaliser and a Deployment controller, each a level-triggered {@link Controller} that is a client
 * of the API like any other (see the folder's `index.ts` for the contract).
 *
 * @example
 * const sim = new ClusterSimulator({ client, connection, informers: new SharedInformerFactory({ client }), logger });
 * await sim.run(signal); // or: for (const r of sim.controllers()) manager.add(r, { leaderOnly: false });
 */
export class ClusterSimulator {
  /** The simulated nodes, with their InternalIPs. */
  readonly nodes: readonly SimNode[];
  readonly #informers: SharedInformerFactory;
  readonly #recorder: EventRecorder;
  readonly #subresources: SubresourceWriter | undefined;
  readonly #runnables: Runnable[];
  #running = 0;

  constructor(options: ClusterSimulatorOptions) {
    const { client, informers } = options;
    const clock = options.clock ?? realClock;
    const logger = (options.logger ?? silentLogger).child({ component: 'cluster-sim' });
    this.nodes = simNodes(options.nodes ?? ['node-1', 'node-2', 'node-3']);
    const byName = new Map(this.nodes.map((n) => [n.name, n]));
    this.#informers = informers;
    this.#recorder = new EventRecorder({
      client,
      component: 'default-scheduler',
      instance: 'raven-cluster-sim',
      clock,
      logger,
    });
    this.#subresources = options.connection
      ? subresourceWriter({ connection: options.connection, qps: 5000, burst: 5000, clock, logger })
      : undefined;

    const pods = informers.informerFor<Pod>(resources.pods);
    const nodes = informers.informerFor<Node>(resources.nodes);
    const services = informers.informerFor<Service>(resources.services);
    const slices = informers.informerFor<EndpointSlice>(resources.endpointslices);
    const namespaces = informers.informerFor<Namespace>(resources.namespaces);
    const deployments = informers.informerFor<Deployment>(resources.deployments);
    addIndex(pods, podsByNode, podsByNodeIndex);
    for (const informer of [pods, services, slices] as SharedInformer<KubeObject>[])
      addIndex(informer, byNamespace, indexByNamespace);
    addIndex(slices, slicesByService, slicesByServiceIndex);

    const common = { workers: options.workers ?? 4, drainTimeoutMs: 5000, reconcileTimeoutMs: 30_000, clock, logger };
    const nodeController = new ControllerBuilder()
      .named('cluster-sim-nodes')
      .for(nodes)
      // A node that does not exist yet has no event to queue it.
      .watchesSource(keysSource('simulated nodes', byName.keys()))
      .withOptions(common)
      .complete(nodeReconciler({ client, nodes: nodes.lister(), byName, clock }));

    const scheduler = new Scheduler({
      client,
      binder: this.#subresources,
      pods: pods.lister(),
      nodes: nodes.lister(),
      recorder: this.#recorder,
      clock,
      logger,
    });
    const schedulerController = new ControllerBuilder()
      .named('cluster-sim-scheduler')
      .for(pods)
      .watches(nodes, () => scheduler.unscheduledPods())
      .withOptions({ ...common, recorder: this.#recorder })
      .complete((key, signal) => scheduler.reconcile(key, signal));

    const kubelet = new ControllerBuilder()
      .named('cluster-sim-kubelet')
      .for(pods)
      // A CNI ADD may wait for Raven's VIF and for the agent's bridge: longer than any simulated step.
      .withOptions(options.runtime ? { ...common, reconcileTimeoutMs: 180_000 } : common)
      .complete(
        kubeletReconciler({
          client,
          pods: pods.lister(),
          byName,
          clock,
          vifAnnotation: options.vifAnnotation ?? 'raven.openstack.org/vif',
          requireVif: options.requireVif ?? true,
          deleteGraceMs: options.deleteGraceMs ?? 2000,
          runtime: options.runtime,
          recorder: this.#recorder,
        }),
      );

    const endpointSlices = new ControllerBuilder()
      .named('cluster-sim-endpointslice')
      .for(services)
      .watches(pods, (pod) => servicesSelecting(services.lister(), pod))
      .watches(slices, slicesByServiceIndex)
      .withOptions(common)
      .complete(
        endpointSliceReconciler({
          client,
          services: services.lister(),
          pods: pods.lister(),
          slices: slices.lister(),
          maxEndpointsPerSlice: options.maxEndpointsPerSlice ?? defaultMaxEndpointsPerSlice,
        }),
      );

    const nsLister = namespaces.lister();
    const whileTerminating = (obj: DeepReadonly<KubeObject>): string[] => {
      const ns = obj.metadata.namespace ?? '';
      return terminating(nsLister.get(ns)) ? [ns] : [];
    };
    const namespaceController = new ControllerBuilder()
      .named('cluster-sim-namespace')
      .for(namespaces)
      .watches(pods, whileTerminating)
      .watches(services, whileTerminating)
      .watches(slices, whileTerminating)
      .withOptions(common)
      .complete(
        namespaceReconciler({
          namespaces: nsLister,
          contents: [pods.lister(), services.lister(), slices.lister()],
          subresources: this.#subresources,
          logger,
        }),
      );

    const deploymentController = new ControllerBuilder()
      .named('cluster-sim-deployment')
      .for(deployments)
      .watches(pods, deploymentOf)
      .withOptions(common)
      .complete(deploymentReconciler({ client, deployments: deployments.lister(), pods: pods.lister() }));

    this.#runnables = [
      nodeController,
      schedulerController,
      kubelet,
      endpointSlices,
      namespaceController,
      deploymentController,
    ].map((c) => this.#wrap(c));
  }

  /**
   * The simulator's controllers, for a Manager to run (`leaderOnly: false`: the simulator is not Raven and runs
   * whoever leads). Run them this way or with {@link run}, once. The manager must not have started yet: the
   * informers they need were asked for when the simulator was built.
   */
  controllers(): Runnable[] {
    return [...this.#runnables];
  }

  /** Runs the informers and the controllers until `signal` aborts; resolves once they have stopped. */
  async run(signal: AbortSignal): Promise<void> {
    const informersStop = new AbortController();
    const informerRuns = this.#informers.start(informersStop.signal);
    const hardStop = new AbortController();
    try {
      if (await this.#informers.waitForCacheSync(signal))
        await Promise.all(this.#runnables.map((r) => r.start(signal, { hardStop: hardStop.signal })));
      else await this.#closeShared(hardStop.signal);
    } finally {
      informersStop.abort();
      await informerRuns;
    }
  }

  /** Counts running controllers, so the shared Event recorder and connection close after the last one stops. */
  #wrap(c: Runnable): Runnable {
    return {
      name: c.name,
      health: () => c.health?.(),
      start: async (signal, options) => {
        this.#running++;
        try {
          await c.start(signal, options);
        } finally {
          if (--this.#running === 0) await this.#closeShared(options.hardStop);
        }
      },
    };
  }

  async #closeShared(hardStop: AbortSignal): Promise<void> {
    await this.#recorder.close(hardStop).catch(() => undefined);
    await this.#subresources?.close();
  }
}

/** Adds an index unless this name is there already (the informer is shared, maybe by another simulator). */
function addIndex<T extends KubeObject>(informer: SharedInformer<T>, name: string, fn: IndexFunc<T>): void {
  try {
    informer.addIndexers({ [name]: fn });
  } catch (err) {
    if (!(err instanceof Error && err.message.includes('already exists'))) throw err;
  }
}
