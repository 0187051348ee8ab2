/**
 * reconcilers/namespace: Namespace → network + subnet + router interface, with the `namespace` subnet strategy.
 *
 * Contract: {@link NamespaceReconciler} reconciles namespace names; the network is `raven/<cluster>/<namespace>`,
 * found by name and owner tag (adopted when its tags were lost), its subnet from a Neutron subnet pool or carved
 * from a range ({@link carveSubnet}), attached to the cluster router; the result is published on the Namespace as
 * `raven.openstack.org/network`. A namespace gone or terminating has its network torn down once no pod port
 * remains on it.
 */
export { NamespaceReconciler, type NamespaceReconcilerOptions } from './reconciler.ts';
export { carveSubnet } from './carve.ts';
export { setupNamespaces, type NamespaceModule, type NamespaceModuleInputs } from './module.ts';
export { namespaceNetworkVerification } from './verify.ts';
