import type { Logger } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import { keyOf } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { CachedPod } from './trim.ts';
import { ownVif, wantsPort } from './wiring.ts';

/** A pod whose `raven.openstack.org/vif` names a port: the port must exist. */
export interface PortClaim {
  key: string;
  portId: string;
}

/** "The port verification found this pod's port gone from Neutron": a claim that failed, sent to the pod controller. */
export type PortGone = PortClaim;

/**
 * The ports the cached pods' annotations name. Take them BEFORE listing the ports they are checked against: a pod
 * annotated by then had its port created before the list began, so a port missing from the list is really gone (a pod
 * annotated later is simply not checked this time).
 */
export function portClaims(pods: Lister<CachedPod>): PortClaim[] {
  const claims: PortClaim[] = [];
  for (const pod of pods.list()) {
    const vif = ownVif(pod);
    if (vif && wantsPort(pod)) claims.push({ key: keyOf(pod), portId: vif.portId });
  }
  return claims;
}

/**
 * The claims whose port Neutron no longer has (deleted by hand, or by another tool): the drift the pod reconciler's
 * annotation fast path cannot see. `present` is this cluster's pod port ids from one list (the garbage collector's
 * sweep), however many pods.
 */
export function missingPorts(claims: readonly PortClaim[], present: ReadonlySet<string>): PortGone[] {
  return claims.filter((c) => !present.has(c.portId));
}

/**
 * The ports the last verification proved gone: the pod reconciler does not trust an annotation that names one. It is
 * Raven's view of Neutron (like an informer's cache), not per-pod memory: replaced by every verification, so it holds
 * at most one round's findings, and a port id is never reused.
 */
export class GonePorts {
  #ids: ReadonlySet<string> = new Set();

  has(portId: string): boolean {
    return this.#ids.has(portId);
  }

  replace(gone: readonly PortGone[]): void {
    this.#ids = new Set(gone.map((g) => g.portId));
  }
}

export interface PortVerificationOptions {
  pods: Lister<CachedPod>;
  gonePorts: GonePorts;
  /** Where each pod whose port is gone is announced (the pod controller watches it). */
  portsGone: EventChannel<PortGone>;
  logger: Logger;
}

/**
 * The port verification as a check around the garbage collector's sweep: the claims are taken before the sweep lists
 * the ports, then checked against the ports it saw. Pods whose port is gone are recorded in `gonePorts` (so their
 * reconcile looks in Neutron despite the annotation) and sent on `portsGone` (so it happens now); their keys are
 * what the check found.
 */
export function portVerification(options: PortVerificationOptions): {
  before(): (report: { podPortIds: ReadonlySet<string> }) => string[];
} {
  return {
    before() {
      const claims = portClaims(options.pods);
      return (report) => {
        const gone = missingPorts(claims, report.podPortIds);
        options.gonePorts.replace(gone);
        for (const g of gone) options.portsGone.send(g);
        if (gone.length > 0) {
          const sample = gone.slice(0, 5).map((g) => g.key);
          options.logger.warn({ pods: gone.length, sample }, 'pods whose annotated port is gone from Neutron');
        }
        return gone.map((g) => g.key);
      };
    },
  };
}
