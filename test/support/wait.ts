import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` every `intervalMs` until it returns a value other than `undefined`/`false`, and returns it; rejects
 * after `timeoutMs` naming `what`, so a test that waits for something that never happens fails instead of hanging.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
