import type { TimerHandle } from '../../core/index.ts';
import { DelayHeap } from './delay-heap.ts';
import { WorkQueue, type DrainOptions } from './queue.ts';

/**
 * A {@link WorkQueue} that can add a key later: client-go `util/workqueue/delaying_queue.go`.
 *
 * - `addAfter(key, ms)` with `ms <= 0` is a plain `add`.
 * - Several `addAfter` calls for one key keep only the earliest due time: a later call can bring a key forward but
 *   never push it back. (A plain `add` meanwhile does not cancel the pending delayed add, as in client-go.)
 * - One timer on the injected clock, set for the earliest due key, drives everything (client-go's waiting loop);
 *   shutting down cancels it and drops the keys still waiting.
 *
 * @example
 * const q = new DelayingQueue({ clock });
 * q.addAfter('default/web', 30_000); // poll again in 30 s
 */
export class DelayingQueue extends WorkQueue {
  readonly #waiting = new DelayHeap();
  #timer: TimerHandle | undefined;
  #timerDue = 0;

  /** Adds `key` once `ms` milliseconds have passed (now, if `ms <= 0`). Ignored after shutdown. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown()) return;
    this.metrics.retries();
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    this.#waiting.insertEarliest(key, this.clock.now() + ms);
    this.#arm();
  }

  /** Keys waiting for their delay to pass (not yet in {@link WorkQueue.len}). */
  waitingLen(): number {
    return this.#waiting.size;
  }

  /** When the earliest waiting key is due (the clock's ms), or undefined when none waits. */
  nextDueAt(): number | undefined {
    return this.#waiting.peekReadyAt();
  }

  override shutDown(): void {
    super.shutDown();
    this.#stop();
  }

  override shutDownWithDrain(options?: DrainOptions): Promise<boolean> {
    const drained = super.shutDownWithDrain(options);
    this.#stop();
    return drained;
  }

  /** Keeps the one timer set for the earliest waiting key. */
  #arm(): void {
    const due = this.#waiting.peekReadyAt();
    if (this.#timer !== undefined) {
      if (due === this.#timerDue) return;
      this.clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (due === undefined) return;
    this.#timerDue = due;
    this.#timer = this.clock.setTimeout(() => this.#fire(), due - this.clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.clock.now();
    for (let key = this.#waiting.popReady(now); key !== undefined; key = this.#waiting.popReady(now)) this.add(key);
    this.#arm();
  }

  #stop(): void {
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#waiting.clear();
  }
}
