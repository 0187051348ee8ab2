/**
 * kube/client: Raven's Kubernetes client: kubeconfig and in-cluster configuration, and (to come) the typed REST client
 * over undici with watch streams and typed errors. Imports core and kube/api.
 */
export type { ClusterConnection, Credentials } from './connection.ts';
