import type { ClusterConnection } from '../connection.ts';
import { KubeconfigError } from './errors.ts';
import { inClusterConfig, type InClusterOptions } from './in-cluster.ts';
import {
  connectionFrom,
  kubeconfigCandidates,
  notFound,
  readKubeconfigFiles,
  type LoadKubeconfigOptions,
} from './kubeconfig.ts';

export type LoadConnectionOptions = LoadKubeconfigOptions & Pick<InClusterOptions, 'root'>;

/**
 * What `raven run` connects with (client-go's deferred loading): a kubeconfig when `--kubeconfig` is given or one is
 * found (`KUBECONFIG`, `~/.kube/config`), else the pod's service account.
 *
 * @throws {KubeconfigError} as {@link loadKubeconfig}; `KUBECONFIG_NOT_FOUND` when there is neither a kubeconfig nor
 *   an in-cluster environment (or `--context` is given with no kubeconfig).
 * @example
 * const conn = await loadConnection({ kubeconfig: flags.kubeconfig, context: flags.context });
 */
export async function loadConnection(options: LoadConnectionOptions = {}): Promise<ClusterConnection> {
  const candidates = kubeconfigCandidates(options);
  const files = await readKubeconfigFiles(candidates);
  if (files.length > 0) return connectionFrom(files, options);
  const none = notFound(candidates);
  if (options.context)
    throw new KubeconfigError('KUBECONFIG_NOT_FOUND', `${none.message}, and --context needs one`, { file: none.file! });
  try {
    return inClusterConfig(options);
  } catch (err) {
    if (!(err instanceof KubeconfigError) || err.code !== 'NOT_IN_CLUSTER') throw err;
    throw new KubeconfigError('KUBECONFIG_NOT_FOUND', `${none.message}, and ${err.message}`, {
      file: none.file!,
      cause: err,
    });
  }
}
