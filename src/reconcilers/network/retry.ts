/**
 * How long at most a key waits between attempts when it fails on something only a person or another owner fixes — a
 * quota raised, addresses or CIDRs freed. Nothing announces the fix, and the default back-off would reach minutes
 * after a dozen tries; 30 s keeps the retries cheap and the wait after the fix short.
 */
export const WAIT_FOR_OUTSIDE_FIX_MS = 30_000;
