import { realClock, type Clock, type Logger } from '../../core/index.ts';
import { EventChannel, type Runnable } from '../../controller/index.ts';
import { retryUntilDone } from './retry.ts';

/** Where a full list goes: a record of Neutron objects (client-go's store, as its reflector fills it). */
export interface ListedInto<T> {
  /** Taken before listing, handed back with the list: what was written since wins over it. */
  mark(): number;
  replace(items: readonly T[], mark: number): void;
}

export interface RecordLoaderOptions<T> {
  /** The runnable's name (`pod-port-record`, `security-group-record`). */
  name: string;
  /** What is listed, for logs (`pod ports`, `security groups`). */
  what: string;
  /** One full list: every page, and the adoption of what a crash left untagged. */
  list: (signal: AbortSignal) => Promise<readonly T[]>;
  into: ListedInto<T>;
  clock?: Clock;
  logger: Logger;
}

/**
 * Fills one of Raven's records of its Neutron objects when Raven starts leading — one full list, retried with back-off
 * until it succeeds — and then sends one event on {@link loaded}: the controllers that wait for the record look at
 * everything. {@link reload} lists again when a caller found the record stale.
 */
export class RecordLoader<T> implements Runnable {
  readonly name: string;
  readonly loaded: EventChannel<{ count: number }>;
  readonly #o: RecordLoaderOptions<T>;
  readonly #clock: Clock;
  #signal: AbortSignal | undefined;
  #reloading: Promise<void> | undefined;
  #loaded = false;

  constructor(options: RecordLoaderOptions<T>) {
    this.#o = options;
    this.name = options.name;
    this.loaded = new EventChannel<{ count: number }>(`${options.name}-loaded`);
    this.#clock = options.clock ?? realClock;
  }

  /** 1 until a list is stored (or while one is taken again), then 0: the manager's view of its work (`raven plan`). */
  pending(): number {
    return this.#loaded && !this.#reloading ? 0 : 1;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    await this.#load(signal);
  }

  /**
   * Lists again and replaces the record (then `loaded` again): Neutron said something the record holds does not exist
   * (the cloud lost its state, or someone deleted it), so everything is looked at anew. One at a time; a call while
   * one runs does nothing.
   */
  reload(): void {
    const signal = this.#signal;
    if (!signal || signal.aborted || this.#reloading) return;
    this.#o.logger.info({}, `listing the ${this.#o.what} again`);
    this.#reloading = this.#load(signal).finally(() => (this.#reloading = undefined));
  }

  async #load(signal: AbortSignal): Promise<void> {
    const { into, logger, what } = this.#o;
    await retryUntilDone(
      `list the ${what}`,
      async () => {
        const mark = into.mark();
        const items = await this.#o.list(signal);
        into.replace(items, mark);
        this.#loaded = true;
        logger.info({ count: items.length }, `${what} record loaded`);
        this.loaded.send({ count: items.length });
      },
      { clock: this.#clock, logger, signal },
    );
  }
}
