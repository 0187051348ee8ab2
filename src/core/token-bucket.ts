import { realClock, type Clock } from './clock.ts';

export interface TokenBucketOptions {
  /** Tokens added per second. */
  qps: number;
  /** Most tokens held at once (and the size of a burst). */
  burst: number;
  clock?: Clock;
}

/**
 * A token bucket like golang.org/x/time/rate's Limiter, which client-go's rate limiters wrap: `qps` tokens a second,
 * at most `burst` held. `reserve()` takes a token now and says how long to wait before using it; `take()` waits.
 */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.qps > 0) || !(options.burst >= 1)) throw new RangeError('qps must be > 0 and burst >= 1');
    this.#qps = options.qps;
    this.#burst = options.burst;
    this.#clock = options.clock ?? realClock;
    this.#tokens = options.burst;
    this.#last = this.#clock.now();
  }

  #refill(): void {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
  }

  /** Takes a token if one is there now. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Takes a token (the balance may go negative) and returns the milliseconds until it is due. */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }

  /** Waits for a token. */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.#clock.sleep(wait, signal);
  }
}
