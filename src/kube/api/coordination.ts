/** `coordination.k8s.io/v1` Lease: the record leader election writes. */
import type { KubeObject } from './meta.ts';

/** `LeaseSpec` as client-go's LeaseLock maps a LeaderElectionRecord onto it. */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}
