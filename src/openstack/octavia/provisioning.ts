import { OpenStackError } from '../errors.ts';

/**
 * Octavia's provisioning status folded into what a reconciler acts on:
 * - `ACTIVE`: the object is configured and may be changed;
 * - `PENDING`: a create, update or delete is in progress; every change is refused with 409 until it ends, so requeue
 *   after a short delay (real Octavia needs 0.25 – 1 s per step);
 * - `ERROR`: the provider failed; the object must be deleted (or failed over) and recreated;
 * - `DELETED`: the object is gone (a 404, or a `DELETED` status seen while it was being removed).
 */
export type ProvisioningPhase = 'ACTIVE' | 'PENDING' | 'ERROR' | 'DELETED';

export interface ProvisioningState {
  state: ProvisioningPhase;
  /** Octavia's own status (`PENDING_UPDATE` …), or `DELETED` for a missing object. */
  status: string;
}

/**
 * Reports where an Octavia object (load balancer, listener, pool, member, health monitor) stands. It never waits: a
 * reconciler returns `{ requeueAfterMs }` for `PENDING` and looks again later. Pass `undefined` for an object that
 * was not found. An unknown status counts as `PENDING` (look again rather than act on a guess).
 *
 * @example
 * const lb = await octavia.loadBalancers.find(id, { signal });
 * const { state } = provisioningState(lb);
 * if (state === 'PENDING') return { requeueAfterMs: 1_000 };
 */
export function provisioningState(obj: { provisioning_status: string } | null | undefined): ProvisioningState {
  if (!obj) return { state: 'DELETED', status: 'DELETED' };
  const status = obj.provisioning_status;
  switch (status) {
    case 'ACTIVE':
      return { state: 'ACTIVE', status };
    case 'ERROR':
      return { state: 'ERROR', status };
    case 'DELETED':
      return { state: 'DELETED', status };
    default:
      return { state: 'PENDING', status };
  }
}

/**
 * The 409 answers that mean "busy with another change, try again later":
 * `Invalid state PENDING_UPDATE of loadbalancer resource <id>` (LBPendingStateError, from load balancer updates and
 * deletes), `Load Balancer <id> is immutable and cannot be updated.` (ImmutableObject, from changes to children) and
 * `Pool <id> is immutable and cannot be updated.` (a member or monitor change while its pool is not ACTIVE; the pool
 * is PENDING_UPDATE during every member and monitor change).
 */
const busyMessage = /Invalid state PENDING_[A-Z_]+ of loadbalancer resource|is immutable and cannot be updated/;

/**
 * True for Octavia's 409 while a load balancer is in a `PENDING_*` state. Other 409s (a duplicate listener port, a
 * pool already in use, a member address taken) are real conflicts and return false.
 *
 * @example
 * try { await octavia.listeners.create(spec, { signal }); }
 * catch (err) { if (isImmutable(err)) return { requeueAfterMs: 1_000 }; throw err; }
 */
export function isImmutable(err: unknown): err is OpenStackError {
  return (
    err instanceof OpenStackError &&
    err.service === 'load-balancer' &&
    err.status === 409 &&
    busyMessage.test(err.message)
  );
}
