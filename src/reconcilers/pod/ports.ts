import type { NeutronClient, Port } from '../../openstack/index.ts';
import { recordedPort, type PodPortRecord, type RecordedPort } from './port-record.ts';

type PortsApi = NeutronClient['ports'];

/** What every reader of the record may call: lookups, never writes. */
export type PodPortRecordView = Pick<
  PodPortRecord,
  'synced' | 'get' | 'named' | 'all' | 'allForPod' | 'forPod' | 'size' | 'mark'
>;

/**
 * The one writer of the {@link PodPortRecord}: every Neutron write of a pod port goes through here and the record
 * takes Neutron's answer, so what the record holds is always something Neutron said (client-go's store, written only
 * from what the server returned). The exceptions are named: {@link reserve} (a pool port handed to a pod before its
 * claim lands: the one write Neutron has not answered yet) and {@link replace} (a full list). Everything else reads
 * {@link record}.
 */
export class PodPorts {
  readonly #neutron: NeutronClient;
  readonly #record: PodPortRecord;

  constructor(neutron: NeutronClient, record: PodPortRecord) {
    this.#neutron = neutron;
    this.#record = record;
  }

  /** Raven's record of its pod ports, read-only. */
  get record(): PodPortRecordView {
    return this.#record;
  }

  async create(...args: Parameters<PortsApi['create']>): Promise<RecordedPort> {
    return this.seen(await this.#neutron.ports.create(...args));
  }

  async createBulk(...args: Parameters<PortsApi['createBulk']>): Promise<RecordedPort[]> {
    return (await this.#neutron.ports.createBulk(...args)).map((port) => this.seen(port));
  }

  async update(...args: Parameters<PortsApi['update']>): Promise<RecordedPort> {
    return this.seen(await this.#neutron.ports.update(...args));
  }

  /** Deleted, or already gone (false): either way no longer in the record. */
  async delete(...args: Parameters<PortsApi['delete']>): Promise<boolean> {
    const deleted = await this.#neutron.ports.delete(...args);
    this.#record.remove(args[0]);
    return deleted;
  }

  /** A port as Neutron showed it in a read (a list by name, a claim's re-read): recorded as it is. */
  seen(port: Port): RecordedPort {
    const recorded = recordedPort(port);
    this.#record.put(recorded);
    return recorded;
  }

  /** Neutron said this port is gone (a 404 on a read or an update). */
  gone(portId: string): void {
    this.#record.remove(portId);
  }

  /** A pool port given to a pod, recorded as the pod's before Neutron says so (its claim follows, or is lost). */
  reserve(port: RecordedPort): void {
    this.#record.put(port);
  }

  /** Take before listing; hand to {@link replace} with the list (see {@link PodPortRecord.replace}). */
  mark(): number {
    return this.#record.mark();
  }

  /** A full list of the cluster's pod ports, taken after `mark`. */
  replace(ports: readonly Port[], mark: number): void {
    this.#record.replace(ports.map(recordedPort), mark);
  }

  /** Called after every full list (the warm pools are recomputed from it). */
  set onReplaced(hook: () => void) {
    this.#record.onReplaced = hook;
  }
}
