/**
 * kube/client/config: where a ClusterConnection comes from, as kubectl and client-go `clientcmd` decide it.
 *
 * Contract:
 * - {@link loadKubeconfig}: `--kubeconfig`, else `KUBECONFIG` (files merged, first wins), else `~/.kube/config`;
 *   `--context` or `current-context`; token, tokenFile, client certificate, basic and exec (v1, v1beta1) users.
 * - {@link inClusterConfig}: the pod's service account; `NOT_IN_CLUSTER` outside a pod.
 * - {@link loadConnection}: a kubeconfig if one is given or found, else in-cluster.
 * - Credentials that change (token files, the service-account token, exec plugins) are produced per request by
 *   `credentials()`: files are re-read when they change, exec output is cached until shortly before it expires.
 * - Every failure is a {@link KubeconfigError} with a stable code and a message naming the file and field; secrets
 *   never appear in messages. Legacy `auth-provider`s and impersonation are refused, not ignored.
 */
export { KubeconfigError, type KubeconfigErrorCode } from './errors.ts';
export {
  loadKubeconfig,
  kubeconfigCandidates,
  type LoadKubeconfigOptions,
  type KubeconfigCandidates,
} from './kubeconfig.ts';
export { inClusterConfig, type InClusterOptions } from './in-cluster.ts';
export { loadConnection, type LoadConnectionOptions } from './load-connection.ts';
export { EXEC_REFRESH_MARGIN_MS } from './exec.ts';
