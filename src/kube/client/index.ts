/**
 * kube/client: Raven's Kubernetes client: kubeconfig and in-cluster configuration, and the typed REST client
 * over core's HTTP client (node:http) with watch streams and typed errors. Imports core and kube/api.
 */
export type { ClusterConnection, Credentials } from './connection.ts';
export { type ResourceRef, type PathParts, resources, resourcePath, queryString } from './paths.ts';
export {
  KubeClient,
  defaultUserAgent,
  type KubeClientOptions,
  type CallOptions,
  type ListOptions,
  type WriteOptions,
  type PatchType,
  type PatchOptions,
  type DeleteOptions,
  type WatchOptions,
} from './rest.ts';
export {
  KubeStatusError,
  KubeTransportError,
  WatchInterruptedError,
  statusFromResponse,
  statusOfError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isExpired,
  isInvalid,
  isBadRequest,
  isForbidden,
  isUnauthorized,
  isMethodNotAllowed,
  isTooManyRequests,
  isServerTimeout,
  isTimeout,
  isTooLargeResourceVersion,
  isInternalError,
  isServiceUnavailable,
  isUnreachable,
  isWatchInterrupted,
} from './errors.ts';
export {
  type RetryOptions,
  defaultRetry,
  isRetryableStatus,
  isRetryableError,
  parseRetryAfter,
  retryDelay,
} from '../../core/index.ts';
export { ndjson, watchEvents } from './watch.ts';
export { DryRunKubeClient, mergePatch, type PlannedKubeWrite } from './dry-run.ts';
export {
  KubeconfigError,
  type KubeconfigErrorCode,
  loadKubeconfig,
  kubeconfigCandidates,
  type LoadKubeconfigOptions,
  type KubeconfigCandidates,
  inClusterConfig,
  type InClusterOptions,
  loadConnection,
  type LoadConnectionOptions,
  EXEC_REFRESH_MARGIN_MS,
} from './config/index.ts';
