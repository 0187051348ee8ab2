/**
 * reconcilers/cluster: the cluster-level network — the router (a configured one, or `raven/<cluster>/router`), the
 * shared pod subnet and the service subnet — ensured by the leader at start ({@link ClusterNetworkBootstrap}), and
 * torn down by `raven gc --teardown` ({@link teardownClusterNetwork}).
 */
export {
  ClusterNetworkBootstrap,
  ensureClusterNetwork,
  type ClusterNetworkBootstrapOptions,
  type BootstrapOptions,
} from './bootstrap.ts';
export { clusterResources, teardownClusterNetwork, type ClusterResource } from './teardown.ts';
export { setupClusterNetwork } from './module.ts';
export { clusterNetworkVerification } from './verify.ts';
