import { errorMessage, realClock, type Clock, type Logger } from '../../core/index.ts';
import { EventChannel, type Runnable } from '../../controller/index.ts';
import { Backoff } from '../../kube/cache/index.ts';
import type { NeutronClient, Port } from '../../openstack/index.ts';
import { listPodPorts } from '../network/index.ts';

/** What Raven knows of one of its pod ports: the fields a VIF is built from, and the owner. */
export interface RecordedPort {
  id: string;
  /** The pod uid (`device_id`). */
  deviceId: string;
  networkId: string;
  mac: string;
  fixedIps: readonly { subnetId: string; address: string }[];
  active: boolean;
}

export function recordedPort(port: Port): RecordedPort {
  return {
    id: port.id,
    deviceId: port.device_id,
    networkId: port.network_id,
    mac: port.mac_address,
    fixedIps: port.fixed_ips.map((ip) => ({ subnetId: ip.subnet_id, address: ip.ip_address })),
    active: port.status === 'ACTIVE',
  };
}

/**
 * Raven's record of its pod ports in Neutron, the way an informer's cache is Kubernetes': filled by paginated lists
 * (once when Raven starts leading, then by every garbage-collection sweep) and written through by the pod reconciler
 * on each create, adoption and delete. It is what a pod's VIF annotation is checked against, so that the annotation —
 * which any user who may patch the pod can rewrite — is never an input: an annotation that does not match the record
 * is rewritten, and the normal path still costs no OpenStack call.
 *
 * A list races with the writes made while it runs. {@link mark} before listing and {@link replace} with the mark after:
 * entries put or removed after the mark win over the list, so a port created during a sweep is not forgotten and a
 * port deleted during it does not come back.
 */
export class PodPortRecord {
  #ports = new Map<string, { port: RecordedPort; seq: number }>();
  /** Pod uid → its port's id. */
  #byDevice = new Map<string, string>();
  /** Ports removed since the last replace, with when (for the race above). */
  #removed = new Map<string, number>();
  #seq = 0;
  #synced = false;

  /** True once a full list has been stored: before that, a missing port means "not known yet", not "gone". */
  synced(): boolean {
    return this.#synced;
  }

  get(portId: string): RecordedPort | undefined {
    return this.#ports.get(portId)?.port;
  }

  /** The recorded port of the pod with this uid. */
  forPod(podUid: string): RecordedPort | undefined {
    const id = this.#byDevice.get(podUid);
    return id === undefined ? undefined : this.get(id);
  }

  get size(): number {
    return this.#ports.size;
  }

  put(port: RecordedPort): void {
    this.#removed.delete(port.id);
    this.#ports.set(port.id, { port, seq: ++this.#seq });
    this.#byDevice.set(port.deviceId, port.id);
  }

  remove(portId: string): void {
    const deviceId = this.get(portId)?.deviceId;
    if (deviceId !== undefined && this.#byDevice.get(deviceId) === portId) this.#byDevice.delete(deviceId);
    this.#ports.delete(portId);
    this.#removed.set(portId, ++this.#seq);
  }

  /** Take before listing; hand to {@link replace} with the list. */
  mark(): number {
    return this.#seq;
  }

  /** Replaces the record with a full list taken after `mark`, keeping what was written since. */
  replace(ports: readonly RecordedPort[], mark: number): void {
    const next = new Map<string, { port: RecordedPort; seq: number }>();
    for (const port of ports) if (!((this.#removed.get(port.id) ?? 0) > mark)) next.set(port.id, { port, seq: mark });
    for (const [id, entry] of this.#ports) if (entry.seq > mark) next.set(id, entry);
    for (const [id, seq] of this.#removed) if (seq <= mark) this.#removed.delete(id);
    this.#ports = next;
    this.#byDevice = new Map([...next.values()].map(({ port }) => [port.deviceId, port.id]));
    this.#synced = true;
  }
}

export interface PodPortRecordLoaderOptions {
  neutron: NeutronClient;
  clusterId: string;
  record: PodPortRecord;
  clock?: Clock;
  logger: Logger;
}

/**
 * Fills the {@link PodPortRecord} when Raven starts leading — one paginated list, however many pods, retried with
 * back-off until it succeeds — and sends one event on {@link loaded}: the pod controller then looks at every pod
 * (until then a reconcile waits, as it does for the cluster network).
 */
export class PodPortRecordLoader implements Runnable {
  readonly name = 'pod-port-record';
  readonly loaded = new EventChannel<{ ports: number }>('pod-port-record-loaded');
  readonly #o: PodPortRecordLoaderOptions;
  readonly #clock: Clock;

  constructor(options: PodPortRecordLoaderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { neutron, clusterId, record, logger } = this.#o;
    const backoff = new Backoff(this.#clock);
    while (!signal.aborted) {
      const mark = record.mark();
      try {
        const ports = await listPodPorts(neutron, clusterId, signal);
        record.replace(ports.map(recordedPort), mark);
        logger.info({ ports: ports.length }, 'pod port record loaded');
        this.loaded.send({ ports: ports.length });
        return;
      } catch (err) {
        if (signal.aborted) return;
        const wait = backoff.next();
        logger.warn({ err: errorMessage(err), retryInMs: wait }, 'cannot list the pod ports; retrying');
        await this.#clock.sleep(wait, signal).catch(() => undefined);
      }
    }
  }
}
