/**
 * controller/leader: leader election on a coordination.k8s.io/v1 Lease, with client-go `tools/leaderelection`
 * semantics, for running Raven active/passive.
 *
 * Contract:
 * - Acquire: create the Lease if it is missing; otherwise take it over only when its holder is empty or the record
 *   has not changed for its `leaseDurationSeconds` as measured by THIS replica's clock since it last saw the record
 *   change (client-go's observedTime; remote timestamps are never compared with the local clock). Every write is a
 *   compare-and-swap on the resourceVersion read: a 409 means another replica won, so wait and retry.
 * - Acquire attempts are spaced retryPeriod × [1, 2.2) (client-go JitterFactor 1.2); the leader renews every
 *   retryPeriod. A leader that cannot renew within renewDeadline stops leading AT ONCE: its `leaderSignal` aborts
 *   (even while a renewal request hangs), then `onStoppedLeading` runs and `run` resolves (it does not re-acquire).
 * - When `run`'s signal aborts while leading and `releaseOnCancel` (default), the leader aborts `leaderSignal`, waits
 *   (bounded by renewDeadline) for a promise returned by `onStartedLeading`, then releases the Lease (empty holder,
 *   1 s duration), so a standby takes over at its next attempt rather than after a whole lease duration.
 * - A stop never cuts an acquire or renew attempt in flight (each is bounded by renewDeadline instead): the server may
 *   have applied a write whose response is still on its way, and only that response says we hold the Lease and carries
 *   the resourceVersion to release it against. When stopped while acquiring, `run` still releases a Lease whose last
 *   observed record names this replica (`releaseOnCancel`).
 * - `leaseDurationSeconds` is written in whole seconds, rounded up from `leaseDurationMs`.
 */
export { LeaderElector, JITTER_FACTOR, type LeaderElectorOptions, type LeaderCallbacks } from './elector.ts';
export { type Lease, type LeaseSpec, isHeldByOther, microTime } from './lease.ts';
