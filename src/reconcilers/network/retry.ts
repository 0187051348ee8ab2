import { errorMessage, type Clock, type Logger } from '../../core/index.ts';
import { Backoff } from '../../kube/cache/index.ts';

/**
 * How long at most a key waits between attempts when it fails on something only a person or another owner fixes — a
 * quota raised, addresses or CIDRs freed. Nothing announces the fix, and the default back-off would reach minutes
 * after a dozen tries; 30 s keeps the retries cheap and the wait after the fix short.
 */
export const WAIT_FOR_OUTSIDE_FIX_MS = 30_000;

/**
 * Runs `attempt` until it succeeds or `signal` aborts, with client-go's back-off between failures, each logged as
 * `cannot <what>; retrying`: how a record is first filled when Raven starts leading (OpenStack may be down then).
 */
export async function retryUntilDone(
  what: string,
  attempt: () => Promise<void>,
  o: { clock: Clock; logger: Logger; signal: AbortSignal },
): Promise<void> {
  const backoff = new Backoff(o.clock);
  while (!o.signal.aborted) {
    try {
      return await attempt();
    } catch (err) {
      if (o.signal.aborted) return;
      const wait = backoff.next();
      o.logger.warn({ err: errorMessage(err), retryInMs: wait }, `cannot ${what}; retrying`);
      await o.clock.sleep(wait, o.signal).catch(() => undefined);
    }
  }
}
