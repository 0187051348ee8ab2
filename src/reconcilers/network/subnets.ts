import type { DeepReadonly } from '../../core/index.ts';
import type { Namespace } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { familySubnets } from './families.ts';
import type { NamespaceNetworks } from './namespace-networks.ts';
import type { ClusterNetworkSource, SubnetInfo } from './types.ts';

/** The namespace annotation with the namespace's network (the `namespace` strategy's projection of Neutron). */
export const NETWORK_ANNOTATION = 'raven.openstack.org/network';

export type SubnetStrategyName = 'shared' | 'namespace';

/**
 * Where the pods of a namespace get their ports. The daemon picks one implementation from its registry, once, by
 * `subnets.strategy`, and hands it to the reconcilers that need it.
 */
export interface SubnetStrategy {
  readonly name: SubnetStrategyName;
  /**
   * The subnet for pods of `namespace`; undefined while it is not known yet (the cluster network not ensured, the
   * namespace's subnet not made): the caller waits for the event that makes it known.
   */
  subnetFor(namespace: string): SubnetInfo | undefined;
  /**
   * A Neutron call found the subnet {@link subnetFor} gave gone (`NetworkNotFound`, `SubnetNotFound`): forget it, and
   * have its owner (the cluster bootstrap, the namespace reconciler) verify and rebuild it.
   */
  subnetGone(namespace: string): void;
  /**
   * Whose pod subnet `subnetId` is now: `{ namespace }` for a namespace's (the `namespace` strategy), `{}` for the
   * cluster's shared one; `'gone'` for one that is no pod subnet any more (its pools are drained); undefined when that
   * is not known yet (Raven has just started: its pools are left as they are).
   */
  ownerOf(subnetId: string): { namespace?: string } | 'gone' | undefined;
}

/** `shared`: every namespace uses the cluster's one pod subnet, known once the cluster network is ensured. */
export class SharedSubnetStrategy implements SubnetStrategy {
  readonly name = 'shared';
  readonly #cluster: ClusterNetworkSource;

  constructor(cluster: ClusterNetworkSource) {
    this.#cluster = cluster;
  }

  subnetFor(): SubnetInfo | undefined {
    return this.#cluster.current()?.podSubnet;
  }

  subnetGone(): void {
    this.#cluster.recheck();
  }

  ownerOf(subnetId: string): { namespace?: string } | 'gone' | undefined {
    const current = this.#cluster.current();
    if (!current) return undefined;
    const mine = current.podSubnet && familySubnets(current.podSubnet).some((s) => s.subnetId === subnetId);
    return mine ? {} : 'gone';
  }
}

/** The annotation parsed, or undefined (the namespace reconciler compares it with the record; nothing else reads it). */
export function parseNetworkAnnotation(ns: DeepReadonly<Namespace> | undefined): SubnetInfo | undefined {
  const value = ns?.metadata.annotations?.[NETWORK_ANNOTATION];
  if (!value) return undefined;
  try {
    const info = JSON.parse(value) as Partial<SubnetInfo>;
    return typeof info.subnetId === 'string' && typeof info.networkId === 'string' && typeof info.cidr === 'string'
      ? (info as SubnetInfo)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `namespace`: each namespace has its own subnet, recorded by the namespace reconciler under the namespace's uid
 * ({@link NamespaceNetworks}). The `raven.openstack.org/network` annotation is not read: a user who may annotate a
 * namespace must not be able to place its pods on another namespace's network.
 */
export class NamespaceSubnetStrategy implements SubnetStrategy {
  readonly name = 'namespace';
  readonly #namespaces: Lister<Namespace>;
  readonly #networks: NamespaceNetworks;

  constructor(namespaces: Lister<Namespace>, networks: NamespaceNetworks) {
    this.#namespaces = namespaces;
    this.#networks = networks;
  }

  subnetFor(namespace: string): SubnetInfo | undefined {
    const uid = this.#namespaces.get(namespace)?.metadata.uid;
    return uid ? this.#networks.get(uid) : undefined;
  }

  subnetGone(namespace: string): void {
    const uid = this.#namespaces.get(namespace)?.metadata.uid;
    if (uid) this.#networks.gone(namespace, uid);
  }

  ownerOf(subnetId: string): { namespace?: string } | 'gone' | undefined {
    return this.#networks.namespaceOf(subnetId);
  }
}
