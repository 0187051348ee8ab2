import type { Clock, TimerHandle } from '../../../../src/core/index.ts';

/**
 * What Octavia's worker does in the background: a change leaves its objects `PENDING_*`, and after a delay the
 * worker finishes it (objects go `ACTIVE`, or away). Time comes from a Clock so tests step it; a load balancer
 * marked stuck (fault injection) keeps its pending state until released.
 */
export class Provisioner {
  readonly #clock: Clock;
  readonly #delayMs: number;
  readonly #isStuck: (lbId: string) => boolean;
  readonly #pending = new Map<string, { timer: TimerHandle | undefined; due: boolean; finish: () => void }>();

  constructor(clock: Clock, delayMs: number, isStuck: (lbId: string) => boolean) {
    this.#clock = clock;
    this.#delayMs = delayMs;
    this.#isStuck = isStuck;
  }

  /** Finishes a load balancer's pending change after the delay (at once for 0; the caller has built its response). */
  schedule(lbId: string, finish: () => void): void {
    const entry = { timer: undefined as TimerHandle | undefined, due: false, finish };
    this.#pending.set(lbId, entry);
    const fire = (): void => {
      entry.timer = undefined;
      entry.due = true;
      if (!this.#isStuck(lbId)) this.#run(lbId);
    };
    if (this.#delayMs <= 0) fire();
    else entry.timer = this.#clock.setTimeout(fire, this.#delayMs);
  }

  /** A stuck load balancer was released: finish its change if its time has come. */
  release(lbId: string): void {
    if (this.#pending.get(lbId)?.due) this.#run(lbId);
  }

  #run(lbId: string): void {
    const entry = this.#pending.get(lbId);
    if (!entry) return;
    this.#pending.delete(lbId);
    entry.finish();
  }

  /** Changes not finished yet. */
  get pending(): number {
    return this.#pending.size;
  }

  close(): void {
    for (const entry of this.#pending.values()) if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    this.#pending.clear();
  }
}
