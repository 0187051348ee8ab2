/**
 * Time as a dependency: everything that waits or measures takes a Clock, so tests drive time with {@link FakeClock}
 * instead of sleeping (client-go's `clock`, client-node's `delayFn`).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` after `ms`; returns a handle for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol };

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The wall clock and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as TimerHandle,
  clearTimeout: (handle) => clearTimeout(handle as unknown as NodeJS.Timeout),
  sleep: (ms, signal) => sleepWith(realClock, ms, signal),
};

interface FakeTimer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to. `advance(ms)` fires every timer that falls due, in due order (ties in the
 * order they were set), with `now()` equal to each timer's due time while it runs.
 *
 * @example
 * const clock = new FakeClock();
 * const slept = clock.sleep(1000);
 * clock.advance(1000); // slept resolves
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, due: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer.id as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== (handle as unknown as number));
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing what falls due on the way. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.#timers)
        if (t.due <= until && (!next || t.due < next.due || (t.due === next.due && t.id < next.id))) next = t;
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.due;
      next.fn();
    }
    this.#now = until;
  }
}
