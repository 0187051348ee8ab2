import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { realClock, type Clock } from '../../../core/index.ts';
import type { ClusterConnection } from '../connection.ts';
import { ioReason, KubeconfigError } from './errors.ts';
import { watchedFile } from './watched-file.ts';

/** Where a pod's service account is mounted. */
export const SERVICE_ACCOUNT_DIR = 'var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterOptions {
  /** Where `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT` and `POD_NAMESPACE` are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The file system root the service-account directory is under (tests use a temp dir). Default `/`. */
  root?: string;
  /** Drives token re-reads. */
  clock?: Clock;
}

/**
 * The connection of a pod's service account (client-go `rest.InClusterConfig`): the API server from
 * `KUBERNETES_SERVICE_HOST`/`_PORT`, the CA and namespace from the mounted service account, and its token, re-read
 * when the kubelet rotates it (on mtime change, and at least every minute).
 *
 * @throws {KubeconfigError} `NOT_IN_CLUSTER` without the environment variables; `IN_CLUSTER_INVALID` when the token or
 *   CA cannot be read.
 * @example
 * const conn = inClusterConfig(); // in a pod
 */
export function inClusterConfig(options: InClusterOptions = {}): ClusterConnection {
  const env = options.env ?? process.env;
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    const missing = [!host && 'KUBERNETES_SERVICE_HOST', !port && 'KUBERNETES_SERVICE_PORT']
      .filter(Boolean)
      .join(' and ');
    throw new KubeconfigError('NOT_IN_CLUSTER', `in-cluster: ${missing} not set: not running in a Kubernetes pod`);
  }
  const dir = join(options.root ?? '/', SERVICE_ACCOUNT_DIR);
  const read = (name: string, required: boolean): string | undefined => {
    const path = join(dir, name);
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      if (!required) return undefined;
      throw new KubeconfigError('IN_CLUSTER_INVALID', `in-cluster: cannot read ${path} (${ioReason(err)})`, {
        file: path,
        cause: err,
      });
    }
  };
  const tokenPath = join(dir, 'token');
  if (!read('token', true)!.trim())
    throw new KubeconfigError('IN_CLUSTER_INVALID', `in-cluster: ${tokenPath} is empty`, { file: tokenPath });
  const ca = read('ca.crt', true)!;
  if (!ca.includes('-----BEGIN '))
    throw new KubeconfigError('IN_CLUSTER_INVALID', `in-cluster: ${join(dir, 'ca.crt')} holds no PEM block`, {
      file: join(dir, 'ca.crt'),
    });
  // client-go's order: POD_NAMESPACE, then the mounted namespace file, then "default".
  const namespace = env['POD_NAMESPACE'] || read('namespace', false)?.trim() || 'default';

  const token = watchedFile(
    tokenPath,
    options.clock ?? realClock,
    (err) =>
      new KubeconfigError('IN_CLUSTER_INVALID', `in-cluster: cannot read ${tokenPath} (${ioReason(err)})`, {
        file: tokenPath,
        cause: err,
      }),
  );
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca,
    credentials: async () => ({ kind: 'bearer', token: (await token()).trim() }),
    source: 'in-cluster',
    namespace,
  };
}
