import { RavenError } from '../../core/index.ts';
import { keyOf, type KubeObject } from '../../kube/api/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';
import { Controller, type ControllerOptions, type KeySpace } from './controller.ts';
import type { Manager } from './manager.ts';
import type { Reconciler } from './result.ts';
import { informerSource, ownerSource, type EventChannel, type MapFunc, type Source } from './source.ts';

/** Everything a controller takes besides its kinds, sources and reconciler. */
export type BuilderOptions = Omit<ControllerOptions<KubeObject>, 'name' | 'for' | 'keys' | 'reconcile' | 'sources'> & {
  /** False for work every replica does, leader or not (a simulator). Default true: only the leader reconciles. */
  needLeaderElection?: boolean;
};

/**
 * controller-runtime's `builder`: the wiring of one controller read as a sentence, and registered with the manager
 * when complete. Nothing about a controller can change once it is complete, so it is never half-built.
 *
 * @example
 * newControllerManagedBy(manager)
 *   .named('service')
 *   .for(services)
 *   .watches(endpointSlices, sliceToService)
 *   .watchesChannel(lbSettled, (e) => [e.key])
 *   .withOptions({ workers: 4, recorder, logger })
 *   .complete(serviceReconciler.reconcile);
 */
export class ControllerBuilder<T extends KubeObject = KubeObject> {
  readonly #manager: Manager | undefined;
  #name: string | undefined;
  #primary: SharedInformer<T> | undefined;
  #keys: (KeySpace & { name: string }) | undefined;
  readonly #sources: Source[] = [];
  #options: BuilderOptions = {};
  #complete = false;

  constructor(manager?: Manager) {
    this.#manager = manager;
  }

  /** The primary kind: each change of one of its objects queues its key; Events are recorded on it. */
  for<U extends KubeObject>(informer: SharedInformer<U>): ControllerBuilder<U> {
    this.#check();
    const next = this as unknown as ControllerBuilder<U>;
    next.#primary = informer;
    return next;
  }

  /**
   * Keys that name no Kubernetes object (controller-runtime's typed controllers over a custom request): they come from
   * the sources only; a resync queues `keys.list()`; failures are logged, with no Event (there is no object to carry
   * it). `keys.name` names the controller unless {@link named} does.
   */
  forKeys(keys: KeySpace & { name: string }): this {
    this.#check();
    this.#keys = keys;
    return this;
  }

  /**
   * Objects of another kind controlled by a primary object (`ownerReferences`, `controller: true`) queue their owner.
   */
  owns<U extends KubeObject>(informer: SharedInformer<U>, ownerKind: string): this {
    this.#check();
    this.#sources.push(ownerSource(informer, ownerKind));
    return this;
  }

  /** Changes of another kind queue the primary keys `map` names (old and new object on an update). */
  watches<U extends KubeObject>(informer: SharedInformer<U>, map: MapFunc<U>): this {
    this.#check();
    this.#sources.push(informerSource(informer, map));
    return this;
  }

  /** Events on a channel (see {@link EventChannel}) queue the primary keys `map` names. */
  watchesChannel<E>(channel: EventChannel<E>, map: (event: E) => Iterable<string>): this {
    this.#check();
    this.#sources.push(channel.source(map));
    return this;
  }

  /** Any other source (controller-runtime's `WatchesRawSource`). */
  watchesSource(source: Source): this {
    this.#check();
    this.#sources.push(source);
    return this;
  }

  /** The controller's name in logs, metrics and Events. Default: the primary resource (`pods`). */
  named(name: string): this {
    this.#check();
    this.#name = name;
    return this;
  }

  withOptions(options: BuilderOptions): this {
    this.#check();
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** Builds the controller around `reconcile`, adds it to the manager (when built with one) and returns it. */
  complete(reconcile: Reconciler): Controller<T> {
    this.#check();
    if (!this.#primary === !this.#keys)
      throw new RavenError('CONTROLLER_CONFIG_INVALID', 'a controller needs for(informer) or forKeys(keys), not both');
    this.#complete = true;
    const { needLeaderElection = true, ...options } = this.#options;
    const controller = new Controller<T>({
      ...options,
      name: this.#name ?? this.#primary?.resource.resource ?? this.#keys!.name,
      for: this.#primary,
      keys: this.#keys,
      reconcile,
      sources: [...this.#sources],
    });
    this.#manager?.add(controller, { leaderOnly: needLeaderElection });
    return controller;
  }

  #check(): void {
    if (this.#complete) throw new RavenError('CONTROLLER_ALREADY_BUILT', 'the controller is complete: build another');
  }
}

/** Starts the wiring of a controller that `manager` will run (controller-runtime's `NewControllerManagedBy`). */
export function newControllerManagedBy(manager: Manager): ControllerBuilder {
  return new ControllerBuilder(manager);
}

/** The keys of every object an informer holds: for a source whose event concerns them all. */
export function allKeys<T extends KubeObject>(informer: SharedInformer<T>): () => string[] {
  return () => informer.lister().list().map(keyOf);
}
