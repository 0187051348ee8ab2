import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to wait (default 10 s); with `progress`, how long to wait without any. */
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * What the awaited thing depends on, as a value that changes while it is moving (e.g. how many answers Neutron
   * gave Raven so far). Each change starts `timeoutMs` over, up to `maxMs` in all: a slow but working cloud on a
   * busy machine gets the time it needs, and a stuck one still fails after `timeoutMs`.
   */
  progress?: () => unknown;
  /** The longest wait in all with `progress` (default 4 × `timeoutMs`). */
  maxMs?: number;
  /** What was there instead, for the timeout's message (the load balancer's status, the object's Events). */
  explain?: () => string | Promise<string>;
}

/**
 * Polls `check` every `intervalMs` until it returns a value other than `undefined`/`false`, and returns it; rejects
 * after `timeoutMs` (without progress, see {@link WaitOptions.progress}) naming `what`, so a test that waits for
 * something that never happens fails instead of hanging.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 50, progress, maxMs = 4 * timeoutMs, explain }: WaitOptions = {},
): Promise<T> {
  const start = Date.now();
  const cap = start + (progress ? maxMs : timeoutMs);
  let deadline = start + timeoutMs;
  let seen = progress?.();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    const now = Date.now();
    if (progress) {
      const current = progress();
      if (current !== seen) {
        seen = current;
        deadline = Math.min(cap, now + timeoutMs);
      }
    }
    if (now > deadline) {
      const why = progress ? `, ${now >= cap ? 'its limit in all' : `with no progress for ${timeoutMs} ms`}` : '';
      const instead = explain
        ? `; instead: ${await Promise.resolve(explain()).catch((err: Error) => err.message)}`
        : '';
      throw new Error(`timed out after ${now - start} ms${why} waiting for ${what}${instead}`);
    }
    await sleep(intervalMs);
  }
}
