import { StringPool, StringSetMap, type Clock, type Logger } from '../../core/index.ts';
import type { NeutronClient, Port } from '../../openstack/index.ts';
import { adoptPodPorts, listPodPorts, listUntaggedPodPorts, RecordLoader, type ListedInto } from '../network/index.ts';

/** What Raven knows of one of its pod ports: the fields a VIF is built from, the owner, and its pool. */
export interface RecordedPort {
  id: string;
  /** The pod uid (`device_id`); `''` for a pool port never given to a pod. */
  deviceId: string;
  name: string;
  networkId: string;
  mac: string;
  fixedIps: readonly { subnetId: string; address: string }[];
  active: boolean;
  /** `binding:host_id`: the node a pool port waits on. */
  hostId: string;
  /**
   * How the node plugs it, from `binding:vif_type` (`''`: not bound, or bound in a way raven-cni does not plug, such
   * as an OVS hybrid plug): what a signed VIF tells the node.
   */
  plug: '' | 'bridge' | 'ovs';
  securityGroups: readonly string[];
  /** Neutron's `revision_number` as last read: an assignment is a compare-and-swap on it. */
  revision: number;
  /** Neutron's `updated_at` as last read (ms since the epoch). */
  updatedAt: number;
}

/** The ids every pod port repeats (network, subnets, node, security groups): one copy each, not one per port. */
const shared = new StringPool();

export function recordedPort(port: Port): RecordedPort {
  return {
    id: port.id,
    deviceId: port.device_id,
    name: port.name,
    networkId: shared.intern(port.network_id),
    mac: port.mac_address,
    fixedIps: port.fixed_ips.map((ip) => ({ subnetId: shared.intern(ip.subnet_id), address: ip.ip_address })),
    active: port.status === 'ACTIVE',
    hostId: shared.intern(port['binding:host_id'] ?? ''),
    plug: plugOf(port),
    securityGroups: shared.list([...(port.security_groups ?? [])].sort()),
    revision: port.revision_number,
    updatedAt: Date.parse(port.updated_at) || 0,
  };
}

function plugOf(port: Port): RecordedPort['plug'] {
  const type = port['binding:vif_type'];
  if (type === 'bridge') return 'bridge';
  return type === 'ovs' && port['binding:vif_details']?.ovs_hybrid_plug !== true ? 'ovs' : '';
}

/**
 * Raven's record of its pod ports in Neutron, the way an informer's cache is Kubernetes': filled by paginated lists
 * (once when Raven starts leading, then by every garbage-collection sweep) and written through on each create,
 * adoption, claim and delete — all through its one writer, `PodPorts` (`ports.ts`). It is what a pod's VIF
 * annotation is checked against, so that the annotation — which any user who may patch the pod can rewrite — is
 * never an input: an annotation that does not match the record is rewritten, and the normal path still costs no
 * OpenStack call.
 *
 * A list races with the writes made while it runs. {@link mark} before listing and {@link replace} with the mark after:
 * entries put or removed after the mark win over the list, so a port created during a sweep is not forgotten and a
 * port deleted during it does not come back.
 */
export class PodPortRecord {
  #ports = new Map<string, { port: RecordedPort; seq: number }>();
  /** Pod uid → the ids of the ports whose `device_id` it is (one, unless a crash left a second). */
  #byDevice = new StringSetMap();
  /** Port name → the ids of the ports of that name (a pod's, after a crash or a re-created pod, can be several). */
  #byName = new StringSetMap();
  /** Ports removed since the last replace, with when (for the race above). */
  #removed = new Map<string, number>();
  #seq = 0;
  #synced = false;
  /** Called after every {@link replace} (the pools are recomputed from it). */
  onReplaced: (() => void) | undefined;

  /** True once a full list has been stored: before that, a missing port means "not known yet", not "gone". */
  synced(): boolean {
    return this.#synced;
  }

  get(portId: string): RecordedPort | undefined {
    return this.#ports.get(portId)?.port;
  }

  /** The recorded ports named `name` (a pod's port is named `raven/<cluster>/<namespace>/<pod>`). */
  named(name: string): RecordedPort[] {
    return this.#byName.get(name).flatMap((id) => this.get(id) ?? []);
  }

  /** Every recorded port. */
  all(): RecordedPort[] {
    return [...this.#ports.values()].map((e) => e.port);
  }

  /** Every recorded port whose `device_id` is this pod's uid. */
  allForPod(podUid: string): RecordedPort[] {
    return this.#byDevice.get(podUid).flatMap((id) => this.get(id) ?? []);
  }

  /** The recorded port of the pod with this uid. */
  forPod(podUid: string): RecordedPort | undefined {
    const id = this.#byDevice.first(podUid);
    return id === undefined ? undefined : this.get(id);
  }

  get size(): number {
    return this.#ports.size;
  }

  put(port: RecordedPort): void {
    this.#unindex(port.id);
    this.#removed.delete(port.id);
    this.#ports.set(port.id, { port, seq: ++this.#seq });
    this.#index(port);
  }

  remove(portId: string): void {
    this.#unindex(portId);
    this.#ports.delete(portId);
    this.#removed.set(portId, ++this.#seq);
  }

  #index(port: RecordedPort): void {
    if (port.deviceId) this.#byDevice.add(port.deviceId, port.id);
    this.#byName.add(port.name, port.id);
  }

  #unindex(portId: string): void {
    const old = this.get(portId);
    if (!old) return;
    this.#byDevice.delete(old.deviceId, portId);
    this.#byName.delete(old.name, portId);
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
    this.#byDevice = new StringSetMap();
    this.#byName = new StringSetMap();
    for (const { port } of next.values()) this.#index(port);
    this.#synced = true;
    this.onReplaced?.();
  }
}

export interface PodPortRecordLoaderOptions {
  neutron: NeutronClient;
  clusterId: string;
  /** Where the list goes (the record's one writer). */
  ports: ListedInto<Port>;
  clock?: Clock;
  logger: Logger;
}

/**
 * Fills the {@link PodPortRecord} when Raven starts leading: one paginated list, however many pods, with the ports a
 * crash left untagged between their create and their tagging (Zed tags in a second request; they carry Raven's mark
 * for this cluster in their `description`, set in the create request itself) tagged and recorded — a pod's, or free
 * for a pool — never leaked and never made twice. Then the pod controller looks at every pod (until then a
 * reconcile waits, as it does for the cluster network).
 */
export function podPortRecordLoader(o: PodPortRecordLoaderOptions): RecordLoader<Port> {
  return new RecordLoader({
    name: 'pod-port-record',
    what: 'pod ports',
    list: async (signal) => {
      // The tagged ones first: those adopted below are tagged on the way, and would otherwise be listed twice.
      const tagged = await listPodPorts(o.neutron, o.clusterId, signal);
      const untagged = await listUntaggedPodPorts(o.neutron, o.clusterId, signal);
      const adopted = await adoptPodPorts(o.neutron, o.clusterId, untagged, signal);
      if (adopted.length > 0) o.logger.info({ ports: adopted.length }, 'adopted pod ports a crash left untagged');
      return [...tagged, ...adopted];
    },
    into: o.ports,
    clock: o.clock,
    logger: o.logger,
  });
}
