import { errorMessage, type DeepReadonly, type Logger } from '../../core/index.ts';
import { keyOf, type KubeObject } from '../../kube/api/index.ts';
import type { SharedInformer } from '../../kube/cache/index.ts';

/** Maps a changed object of a watched kind to the keys of primary objects to reconcile. */
export type MapFunc<U> = (obj: DeepReadonly<U>) => Iterable<string>;

/**
 * Where a controller's keys come from (controller-runtime's `source.Source` with its event handler folded in): an
 * informer's changes mapped to keys, or events some other part of Raven sends on an {@link EventChannel}. A source
 * only ever queues keys; the reconcile reads everything else from caches and the cloud.
 */
export interface Source {
  /** A name for logs (`pods`, `channel ports-freed` …). */
  readonly name: string;
  /** Starts delivering: `enqueue` takes the keys of one event (deduplicated by the controller). Returns the stop. */
  start(enqueue: (keys: Iterable<string>) => void, log: Logger): () => void;
}

/**
 * Changes of `informer`'s objects, mapped to keys by `map` (old and new object on an update, so a label change
 * reaches both the old and the new owner). A throwing map function is logged and its change ignored.
 */
export function informerSource<U extends KubeObject>(informer: SharedInformer<U>, map: MapFunc<U>): Source {
  const name = informer.resource.resource;
  return {
    name,
    start(enqueue, log) {
      // The keys of one change (old and new object) go in one batch, which the controller adds once each: a second
      // add of a key a worker has just taken would park it and reconcile it twice.
      const mapped = (...objs: DeepReadonly<U>[]): void => {
        const keys: string[] = [];
        for (const obj of objs) {
          try {
            keys.push(...map(obj));
          } catch (err) {
            log.error(
              { err: errorMessage(err), object: keyOf(obj), resource: name },
              'map function threw; change ignored',
            );
          }
        }
        enqueue(keys);
      };
      return informer.addEventHandler({
        onAdd: (obj) => mapped(obj),
        onUpdate: (old, obj) => mapped(old, obj),
        onDelete: (obj) => mapped(obj),
      });
    },
  };
}

/** An informer's objects as their own keys: the source of a controller's primary kind. */
export function primarySource<T extends KubeObject>(informer: SharedInformer<T>): Source {
  return informerSource(informer, (obj) => [keyOf(obj)]);
}

/**
 * Objects of `informer` mapped to the key of the owner that controls them (controller-runtime's `Owns`, with
 * `OnlyControllerOwner`): an `ownerReferences` entry of `ownerKind` with `controller: true`, in the same namespace.
 */
export function ownerSource<U extends KubeObject>(informer: SharedInformer<U>, ownerKind: string): Source {
  return informerSource(informer, (obj) => {
    const owner = obj.metadata.ownerReferences?.find((o) => o.controller && o.kind === ownerKind);
    if (!owner) return [];
    return [obj.metadata.namespace ? `${obj.metadata.namespace}/${owner.name}` : owner.name];
  });
}

/** Keys queued once, when the controller starts: objects that may not exist yet, so no informer event names them. */
export function keysSource(name: string, keys: Iterable<string>): Source {
  const fixed = [...keys];
  return {
    name,
    start(enqueue) {
      enqueue(fixed);
      return () => undefined;
    },
  };
}

/**
 * A channel of events from outside the informers (controller-runtime's `source.Channel` + `GenericEvent`): "the port
 * verification found this pod's port gone", "a port was freed". The sender knows nothing of the controllers; each
 * controller that watches the channel maps every event to keys with its own function. Events sent while no
 * controller listens are kept (up to `bufferSize`, the oldest dropped first) and delivered when one starts, so a
 * sender that runs first loses nothing.
 *
 * @example
 * const portsFreed = new EventChannel<{ namespace: string }>('ports-freed');
 * builder.watchesChannel(portsFreed, (e) => waitingPodsIn(e.namespace));
 * portsFreed.send({ namespace: 'shop' });
 */
export class EventChannel<E> {
  readonly name: string;
  readonly #bufferSize: number;
  readonly #buffer: E[] = [];
  #listeners: ((event: E) => void)[] = [];

  constructor(name: string, options: { bufferSize?: number } = {}) {
    this.name = name;
    this.#bufferSize = options.bufferSize ?? 1024;
  }

  /** Delivers `event` to every listening controller, or keeps it until one listens. Never throws, never blocks. */
  send(event: E): void {
    if (this.#listeners.length === 0) {
      this.#buffer.push(event);
      if (this.#buffer.length > this.#bufferSize) this.#buffer.shift();
      return;
    }
    for (const listener of this.#listeners) listener(event);
  }

  /** The channel as a controller's source, each event mapped to keys by `map`. */
  source(map: (event: E) => Iterable<string>): Source {
    return {
      name: `channel ${this.name}`,
      start: (enqueue, log) => {
        const listener = (event: E): void => {
          try {
            enqueue(map(event));
          } catch (err) {
            log.error({ err: errorMessage(err), channel: this.name }, 'map function threw; event ignored');
          }
        };
        this.#listeners = [...this.#listeners, listener];
        for (const event of this.#buffer.splice(0)) listener(event);
        return () => {
          this.#listeners = this.#listeners.filter((l) => l !== listener);
        };
      },
    };
  }
}
