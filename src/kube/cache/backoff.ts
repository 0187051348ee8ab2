import type { Clock } from '../../core/index.ts';

export interface BackoffOptions {
  /** The first wait. Default 800 ms. */
  initialMs?: number;
  /** The longest wait. Default 30 s. */
  maxMs?: number;
  /** After this long without a backoff, the next one starts again from `initialMs`. Default 2 min. */
  resetAfterMs?: number;
  /** Each wait is stretched by up to this fraction at random. Default 1.0 (client-go's reflector). */
  jitter?: number;
}

/**
 * client-go's `exponentialBackoffManager` as the reflector uses it: 0.8 s doubling to 30 s with jitter, reset after
 * 2 minutes without a failure. Time is the injected clock, so the rules are tested without sleeping.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #resetAfter: number;
  readonly #jitter: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #step = 0;
  #lastAt: number | undefined;

  constructor(clock: Clock, options: BackoffOptions = {}, random: () => number = Math.random) {
    this.#initial = options.initialMs ?? 800;
    this.#max = options.maxMs ?? 30_000;
    this.#resetAfter = options.resetAfterMs ?? 120_000;
    this.#jitter = options.jitter ?? 1.0;
    this.#clock = clock;
    this.#random = random;
  }

  /** The next wait in ms (and counts it as a failure). */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastAt !== undefined && now - this.#lastAt >= this.#resetAfter) this.#step = 0;
    this.#lastAt = now;
    const base = Math.min(this.#max, this.#initial * 2 ** this.#step);
    if (base < this.#max) this.#step++;
    return Math.min(this.#max, Math.round(base * (1 + this.#jitter * this.#random())));
  }

  /** Sleeps for {@link next}; rejects when `signal` aborts. */
  wait(signal: AbortSignal): Promise<void> {
    return this.#clock.sleep(this.next(), signal);
  }
}
