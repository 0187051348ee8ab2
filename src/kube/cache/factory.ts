import type { KubeObject } from '../api/index.ts';
import type { ResourceRef } from '../client/index.ts';
import { SharedInformer, type SharedInformerOptions } from './informer.ts';
import type { ReflectorHealth } from './reflector.ts';

/** What every informer of a factory shares: the client and the tuning (clock, logger, backoff, page size…). */
export type InformerDefaults = Omit<
  SharedInformerOptions<KubeObject>,
  'resource' | 'namespace' | 'labelSelector' | 'fieldSelector' | 'transform' | 'indexers'
>;

/** One informer's health, named by what it watches: `pods`, `configmaps in default`, `pods (labels app=web)`. */
export interface InformerHealth extends ReflectorHealth {
  informer: string;
}

export interface InformerScope<W extends KubeObject, T extends KubeObject> {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /**
   * Trims each object of the resource (`W`) to what the cache keeps (`T`). Only the consumer that creates the
   * informer may set it; a different one later is an error (it would be silently ignored).
   */
  transform?: (obj: W) => T;
}

/**
 * client-go's `SharedInformerFactory`: one informer per resource + namespace + selectors, however many consumers
 * ask for it. {@link start} runs every informer not yet running (call it again after asking for more).
 *
 * @example
 * const factory = new SharedInformerFactory({ client });
 * const pods = factory.informerFor(resources.pods); // SharedInformer<Pod>
 * void factory.start(signal);
 * if (!(await factory.waitForCacheSync(signal))) return;
 */
export class SharedInformerFactory {
  readonly #defaults: InformerDefaults;
  readonly #informers = new Map<
    string,
    { informer: SharedInformer<KubeObject>; name: string; transform: unknown; run?: Promise<void> }
  >();

  constructor(defaults: InformerDefaults) {
    this.#defaults = defaults;
  }

  /** The shared informer for this resource and scope, created on first use. */
  informerFor<W extends KubeObject, T extends KubeObject = W>(
    resource: ResourceRef<W>,
    scope: InformerScope<W, T> = {},
  ): SharedInformer<T> {
    const { namespace, labelSelector, fieldSelector, transform } = scope;
    const key = JSON.stringify([
      resource.group,
      resource.version,
      resource.resource,
      namespace ?? '',
      labelSelector ?? '',
      fieldSelector ?? '',
    ]);
    const existing = this.#informers.get(key);
    if (existing) {
      if (transform && transform !== existing.transform)
        throw new Error(`informer for ${resource.resource} already exists with another transform`);
      return existing.informer as unknown as SharedInformer<T>;
    }
    const informer = new SharedInformer<T>({
      ...(this.#defaults as unknown as Omit<SharedInformerOptions<T>, 'resource'>),
      resource,
      namespace,
      labelSelector,
      fieldSelector,
      // The reflector hands the transform objects of `resource`, which are `W`s.
      ...(transform ? { transform: transform as (obj: KubeObject) => T } : {}),
    });
    const name = [
      resource.group ? `${resource.resource}.${resource.group}` : resource.resource,
      namespace ? ` in ${namespace}` : '',
      labelSelector ? ` (labels ${labelSelector})` : '',
      fieldSelector ? ` (fields ${fieldSelector})` : '',
    ].join('');
    this.#informers.set(key, { informer: informer as unknown as SharedInformer<KubeObject>, name, transform });
    return informer;
  }

  /** Runs every informer not yet started; resolves when all of them have stopped (after `signal` aborts). */
  async start(signal: AbortSignal): Promise<void> {
    const runs: Promise<void>[] = [];
    for (const entry of this.#informers.values()) runs.push((entry.run ??= entry.informer.run(signal)));
    await Promise.all(runs);
  }

  /** Each informer's health (see `Reflector.health`): the manager's readiness reads it. */
  health(): InformerHealth[] {
    return [...this.#informers.values()].map(({ informer, name }) => ({ informer: name, ...informer.health() }));
  }

  /** Resolves true when every informer asked for so far has synced, false if `signal` aborts first. */
  async waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#informers.values()].map((e) => e.informer.waitForSync(signal)));
    return results.every(Boolean);
  }
}
