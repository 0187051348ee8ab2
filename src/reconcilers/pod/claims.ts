import type { DeepReadonly, Logger } from '../../core/index.ts';
import { EventChannel, type ReconcileResult } from '../../controller/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { isNotFound, OpenStackError, type Port } from '../../openstack/index.ts';
import type { Cloud } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';
import type { PodPorts } from './ports.ts';
import type { CachedPod } from './trim.ts';
import type { PortGone } from './verify.ts';
import { wantsPort } from './wiring.ts';

/** A pool port handed to a pod, whose `device_id` Neutron does not say yet. */
export interface PendingClaim {
  uid: string;
  /** The port as Neutron had it when it was taken: the claim is a compare-and-swap on its revision. */
  from: RecordedPort;
  /** The port as the record holds it meanwhile: the pod's (its uid, its name). */
  reserved: RecordedPort;
}

/** "This pod was given a pool port": the claim reconciler writes it to Neutron. */
export interface PortClaimed {
  key: string;
}

/**
 * The assignments Raven has made but Neutron has not recorded yet: pool ports published in a pod's VIF before the
 * port's `device_id` says so (the pod's start must not wait for Neutron). In memory only, on purpose: a claim lost to
 * a crash was never in Neutron, so after a restart the record says the port is free and the pod's annotation, which
 * names a port that is not its own, is rewritten — no port is ever claimed twice, because the only claim that counts
 * is Neutron's `device_id`, and a CNI plugin plugs a port only once its `device_id` is the pod's uid.
 */
export class PendingClaims {
  /** Where the pod reconciler says it handed out a pool port. */
  readonly claimed = new EventChannel<PortClaimed>('port-claimed');
  /** Where the claim reconciler says a claim landed: the pod's groups may have changed meanwhile. */
  readonly settled = new EventChannel<PortClaimed>('port-claim-settled');
  readonly #byPort = new Map<string, PendingClaim>();

  add(portId: string, claim: PendingClaim, podKey: string): void {
    this.#byPort.set(portId, claim);
    this.claimed.send({ key: podKey });
  }

  get(portId: string): PendingClaim | undefined {
    return this.#byPort.get(portId);
  }

  delete(portId: string): void {
    this.#byPort.delete(portId);
  }

  get size(): number {
    return this.#byPort.size;
  }

  /** Every pending claim (a record replaced by a list older than a claim must get the claim back). */
  all(): PendingClaim[] {
    return [...this.#byPort.values()];
  }
}

export interface PortClaimReconcilerOptions {
  cloud: Cloud;
  pods: Lister<CachedPod>;
  /** Raven's pod ports in Neutron, written through. */
  ports: PodPorts;
  claims: PendingClaims;
  /** A claim that lost (another pod's, or the port is gone): that pod takes another port. */
  portsGone: EventChannel<PortGone>;
  /** Whether a pod with this uid exists (a port whose `device_id` names none is free to take). */
  podExists: (uid: string) => boolean;
  /** Whether Neutron changed the port since it was recorded (`PortPools.isStale`): the claim reads it first. */
  stale?: ((portId: string) => boolean) | undefined;
  /** That first read: with the node's other ports not read since, or from such a read under way (`PortRefresh.read`). */
  readStale?: ((port: RecordedPort, signal: AbortSignal) => Promise<Port | undefined>) | undefined;
  logger: Logger;
}

/**
 * Writes each pod's pending claim to Neutron: one port update (`device_id` = pod uid, the pod's port name) guarded by
 * `If-Match` on the revision the port had when it was taken, so two leaders (one stale) can never both win a port.
 * Keyed by pod, level-triggered: the pod's recorded port and its pending claim decide; a pod without one is done.
 *
 * - Success: the record takes Neutron's answer; the claim is done. A port pods gave back whose record Neutron changed
 *   since (`stale`: the agent set it DOWN) is read first, as after a 412.
 * - 412 (the port changed since): read it. Already the pod's (an earlier try landed) → done. Still free (the same
 *   previous owner, or one that no longer exists) → the update is tried again on the fresh revision. Another live
 *   pod's → the claim lost: the record takes what Neutron says and the pod is sent on `portsGone`, to take another.
 * - 404: the port is gone; likewise.
 */
export class PortClaimReconciler {
  readonly #o: PortClaimReconcilerOptions;

  constructor(options: PortClaimReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const pod = this.#o.pods.get(key);
    if (!wantsPort(pod)) return;
    const uid = pod.metadata.uid;
    const port = this.#o.ports.record.forPod(uid);
    const claim = port && this.#o.claims.get(port.id);
    if (!port || !claim || claim.uid !== uid) return;
    let revision = claim.from.revision;
    // A port whose record is known to be behind Neutron's (given back, not read since) is read before its update, which
    // would be answered 412; any other is read only after a 412.
    const stale = this.#o.stale?.(port.id) === true;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (stale || attempt > 0) {
        const now =
          attempt === 0 && this.#o.readStale
            ? await this.#o.readStale(claim.from, signal)
            : (await this.#o.cloud.neutron.ports.list({ id: port.id }, { signal, priority: 'critical' }))[0];
        if (!now) return this.#lost(pod, port.id, undefined, 'gone from Neutron');
        if (now.device_id === uid) return this.#settle(port.id, now);
        if (now.device_id && now.device_id !== claim.from.deviceId && this.#o.podExists(now.device_id))
          return this.#lost(pod, port.id, now, `taken by pod ${now.device_id}`);
        revision = now.revision_number;
      }
      try {
        // A port taken from another set's pool gets the pod's groups in the same update: one request, and the port
        // is the pod's (raven-cni plugs it) only once its groups are too.
        const groups = claim.reserved.securityGroups;
        const regroup = groups.join(',') !== claim.from.securityGroups.join(',');
        await this.#o.ports.update(
          port.id,
          { device_id: uid, name: port.name, ...(regroup ? { security_groups: [...groups] } : {}) },
          // Ahead of refills in Neutron's limit: raven-cni waits for this (10 s at most) once it has the VIF.
          { ifRevision: revision, signal, priority: 'critical' },
        );
        this.#o.claims.delete(port.id);
        this.#o.claims.settled.send({ key });
        return;
      } catch (err) {
        if (isNotFound(err)) return this.#lost(pod, port.id, undefined, 'gone from Neutron');
        if (!(err instanceof OpenStackError && err.status === 412)) throw err;
      }
    }
    throw new Error(`port ${port.id} kept changing while it was claimed for pod ${key}`);
  };

  #settle(portId: string, port: Port): void {
    this.#o.claims.delete(portId);
    this.#o.ports.seen(port);
  }

  #lost(pod: DeepReadonly<CachedPod>, portId: string, now: Port | undefined, why: string): void {
    this.#o.claims.delete(portId);
    if (now) this.#o.ports.seen(now);
    else this.#o.ports.gone(portId);
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    this.#o.logger.warn(
      { pod: key, portId, why },
      'a pool port given to the pod could not be claimed; another follows',
    );
    this.#o.portsGone.send({ key, uid: pod.metadata.uid!, portId });
  }
}
