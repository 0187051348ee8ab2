import type { DeepReadonly } from '../../core/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { SubnetInfo } from '../common/types.ts';

/** The namespace annotation with the namespace's network (the `namespace` strategy's projection of Neutron). */
export const NETWORK_ANNOTATION = 'raven.openstack.org/network';

/** Where the pods of a namespace get their ports. */
export interface SubnetStrategy {
  readonly name: 'shared' | 'namespace';
  /** The subnet for pods of `namespace`; undefined while it is not ready (the caller requeues). */
  subnetFor(namespace: string): SubnetInfo | undefined;
}

/** `shared`: every namespace uses the cluster's one pod subnet. */
export class SharedSubnetStrategy implements SubnetStrategy {
  readonly name = 'shared';
  readonly #subnet: SubnetInfo;

  constructor(subnet: SubnetInfo) {
    this.#subnet = subnet;
  }

  subnetFor(): SubnetInfo {
    return this.#subnet;
  }
}

/** The annotation parsed, or undefined. */
export function parseNetworkAnnotation(ns: DeepReadonly<KubeObject> | undefined): SubnetInfo | undefined {
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

/** `namespace`: each namespace has its own subnet, published by the namespace reconciler on the Namespace. */
export class NamespaceSubnetStrategy implements SubnetStrategy {
  readonly name = 'namespace';
  readonly #namespaces: Lister<KubeObject>;

  constructor(namespaces: Lister<KubeObject>) {
    this.#namespaces = namespaces;
  }

  subnetFor(namespace: string): SubnetInfo | undefined {
    return parseNetworkAnnotation(this.#namespaces.get(namespace));
  }
}
