import { EventChannel } from '../../controller/index.ts';
import { familySubnets } from './families.ts';
import type { SubnetInfo } from './types.ts';

const holds = (info: SubnetInfo, subnetId: string) => familySubnets(info).some((s) => s.subnetId === subnetId);

/** "This namespace's network changed (made, rebuilt, or found gone)": its pods and services look again. */
export interface NamespaceNetworkChanged {
  namespace: string;
  /** The namespace reconciler has just made the network (not found it): its pools may be filled ahead of its pods. */
  made?: boolean;
}

/**
 * Raven's record of each namespace's network and subnet (the `namespace` strategy), keyed by the namespace's uid —
 * which the API server assigns, so no user can make one namespace's pods land on another's network. The namespace
 * reconciler writes it once it has found or made the network in Neutron (by Raven's name and tags); the
 * `raven.openstack.org/network` annotation is only its projection for people and tools, never read back.
 */
export class NamespaceNetworks {
  /** One event per namespace whose network became known, changed or was dropped. */
  readonly changed = new EventChannel<NamespaceNetworkChanged>('namespace-network-changed');
  /** Asks the namespace controller to verify a namespace's network in Neutron (a port create found it gone). */
  readonly suspect = new EventChannel<NamespaceNetworkChanged>('namespace-network-suspect');
  readonly #byUid = new Map<string, SubnetInfo & { namespace: string }>();
  /** Subnets of namespaces this process saw go (their pools are drained). */
  readonly #gone = new Set<string>();

  get(namespaceUid: string): SubnetInfo | undefined {
    return this.#byUid.get(namespaceUid);
  }

  /**
   * The namespace whose recorded subnet this is (its port pools take that namespace's sizes); `'gone'` when its
   * namespace went while this process watched; undefined when not known (yet: the namespace reconciler has not run).
   */
  namespaceOf(subnetId: string): { namespace: string } | 'gone' | undefined {
    for (const info of this.#byUid.values()) if (holds(info, subnetId)) return { namespace: info.namespace };
    return this.#gone.has(subnetId) ? 'gone' : undefined;
  }

  /**
   * Records the namespace's network (sends {@link changed} when it differs from what was recorded); `made`: the
   * network was just made, not found.
   */
  set(namespace: string, namespaceUid: string, info: SubnetInfo, made = false): void {
    const before = this.#byUid.get(namespaceUid);
    this.#byUid.set(namespaceUid, { ...info, namespace });
    for (const s of familySubnets(info)) this.#gone.delete(s.subnetId);
    const { namespace: _, ...was } = before ?? { namespace };
    if (!before || JSON.stringify(was) !== JSON.stringify(info))
      this.changed.send(made ? { namespace, made } : { namespace });
  }

  /**
   * Forgets a namespace's network (it is being torn down): its pools are drained. `subnetIds`: the network's subnets
   * as Neutron lists them, gone too when this process never recorded the network.
   */
  delete(namespace: string, namespaceUid: string, subnetIds: readonly string[] = []): void {
    const recorded = this.#byUid.get(namespaceUid);
    this.#byUid.delete(namespaceUid);
    const subnets = [...(recorded ? familySubnets(recorded).map((s) => s.subnetId) : []), ...subnetIds];
    const fresh = subnets.filter((id) => !this.#gone.has(id));
    for (const id of fresh) this.#gone.add(id);
    if (recorded || fresh.length > 0) this.changed.send({ namespace });
  }

  /** Every recorded namespace network, with its namespace's name. */
  all(): (SubnetInfo & { namespace: string })[] {
    return [...this.#byUid.values()];
  }

  /** A caller found the recorded network gone: forget it, and have the namespace reconciler look. */
  gone(namespace: string, namespaceUid: string): void {
    this.#byUid.delete(namespaceUid);
    this.suspect.send({ namespace });
  }
}
