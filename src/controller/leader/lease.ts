/**
 * The Lease wire shape leader election reads and writes (coordination.k8s.io/v1), and the rules that decide whether
 * a record has expired. Pure, so the expiry rules are unit-tested with plain numbers.
 */
import type { Lease, LeaseSpec } from '../../kube/api/index.ts';

export type { Lease, LeaseSpec };

/** A `metav1.MicroTime` string (RFC 3339 with microseconds), as the Lease fields carry. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** The record's fields client-go compares to notice that the holder wrote something (its "observed raw record"). */
export function recordKey(spec: LeaseSpec | undefined): string {
  const s = spec ?? {};
  return JSON.stringify([
    s.holderIdentity ?? '',
    s.leaseDurationSeconds ?? 0,
    s.acquireTime ?? '',
    s.renewTime ?? '',
    s.leaseTransitions ?? 0,
  ]);
}

/**
 * True while another holder's lease still counts as held: its holder is set and `observedTime + leaseDurationSeconds`
 * (the duration the record declares) has not passed by the LOCAL clock. The remote timestamps are never compared with
 * the local clock (client-go's `isLeaseValid`), so clock skew between replicas cannot shorten a lease.
 */
export function isHeldByOther(
  spec: LeaseSpec | undefined,
  identity: string,
  observedTime: number,
  now: number,
): boolean {
  const holder = spec?.holderIdentity ?? '';
  if (!holder || holder === identity) return false;
  const durationMs = (spec?.leaseDurationSeconds ?? 0) * 1000;
  return observedTime + durationMs > now;
}

/**
 * Whole seconds for `leaseDurationSeconds`, rounded up so a replica never declares less than it was configured with.
 */
export function leaseSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
