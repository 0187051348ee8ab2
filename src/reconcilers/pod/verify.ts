import type { Logger } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import { keyOf } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { Port } from '../../openstack/index.ts';
import type { PodPorts } from './ports.ts';
import type { CachedPod } from './trim.ts';
import { ownVif, wantsPort } from './wiring.ts';

/** A pod whose `raven.openstack.org/vif` names a port as its own: the port must exist, with the pod as its device. */
export interface PortClaim {
  key: string;
  uid: string;
  portId: string;
}

/**
 * "The port verification found this pod's port gone from Neutron, or no longer the pod's, or a second port of the
 * pod's": sent to the pod controller, which looks at the pod again.
 */
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
    if (vif && wantsPort(pod)) claims.push({ key: keyOf(pod), uid: pod.metadata.uid, portId: vif.portId });
  }
  return claims;
}

export interface PortVerificationOptions {
  pods: Lister<CachedPod>;
  /** Raven's pod ports: the sweep's list replaces their record. */
  ports: PodPorts;
  /** Where each pod whose port is gone is announced (the pod controller watches it). */
  portsGone: EventChannel<PortGone>;
  logger: Logger;
}

/**
 * The port verification as a check around the garbage collector's sweep, which lists this cluster's pod ports anyway:
 * the claims and the record's mark are taken before the sweep lists, then the record is replaced with what it saw
 * and every claim is checked against it — the port must exist with the pod's uid as its `device_id`. Pods that fail
 * are sent on `portsGone` (their reconcile finds the port missing from the record and goes to Neutron); their keys
 * are what the check found. Pods with a second port of theirs (a crash's leftover the sweep adopted) are sent too:
 * their reconcile deletes it.
 */
export function portVerification(options: PortVerificationOptions): {
  before(): (report: { podPorts: readonly Port[] }) => string[];
} {
  const { ports } = options;
  const { record } = ports;
  return {
    before() {
      const mark = ports.mark();
      const claims = portClaims(options.pods);
      return (report) => {
        ports.replace(report.podPorts, mark);
        const gone = claims.filter((c) => record.get(c.portId)?.deviceId !== c.uid);
        for (const g of gone) options.portsGone.send(g);
        if (gone.length > 0) {
          const sample = gone.slice(0, 5).map((g) => g.key);
          options.logger.warn(
            { pods: gone.length, sample },
            'pods whose annotated port is gone from Neutron, or not theirs',
          );
        }
        // A second port with the pod's uid (a crash's create, adopted by this sweep): the pod's reconcile deletes it.
        const doubled = claims.filter(
          (c) => record.get(c.portId)?.deviceId === c.uid && record.allForPod(c.uid).length > 1,
        );
        for (const d of doubled) options.portsGone.send(d);
        if (doubled.length > 0)
          options.logger.info(
            { pods: doubled.length, sample: doubled.slice(0, 5).map((d) => d.key) },
            'pods with a second port of theirs: queued to delete it',
          );
        return gone.map((g) => g.key);
      };
    },
  };
}
