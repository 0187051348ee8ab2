import { RavenError } from '../../../core/index.ts';

/** The stable codes a {@link KubeconfigError} carries. */
export type KubeconfigErrorCode =
  /** No kubeconfig file where one was asked for or looked for. */
  | 'KUBECONFIG_NOT_FOUND'
  /** A file that is not YAML, or a field of the wrong type or value. */
  | 'KUBECONFIG_INVALID'
  /** Something kubectl accepts but Raven's client cannot do (impersonation, SOCKS proxies, token + certificate). */
  | 'KUBECONFIG_UNSUPPORTED'
  | 'CONTEXT_NOT_FOUND'
  | 'CLUSTER_NOT_FOUND'
  | 'USER_NOT_FOUND'
  /** An exec credential plugin could not be run, failed, or printed something that is not an ExecCredential. */
  | 'EXEC_FAILED'
  /** A legacy `auth-provider` (gcp, azure, oidc), removed from kubectl in 1.26. */
  | 'AUTH_PROVIDER_UNSUPPORTED'
  /** `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT` are not set: not running in a pod. */
  | 'NOT_IN_CLUSTER'
  /** In a pod, but the service account's token or CA cannot be read. */
  | 'IN_CLUSTER_INVALID';

/**
 * Why a kubeconfig or the in-cluster configuration cannot be used. The message names the file and the field
 * (`kubeconfig /tmp/x/config: users[1].user.exec.apiVersion: unsupported …`); `file` and `field` carry them for code.
 * Messages never contain secrets (tokens, passwords, keys), nor the YAML around a syntax error.
 *
 * @example
 * try { await loadKubeconfig({}); } catch (e) { if (e instanceof KubeconfigError && e.code === 'CONTEXT_NOT_FOUND') … }
 */
export class KubeconfigError extends RavenError {
  declare readonly code: KubeconfigErrorCode;
  /** The file at fault, when there is one. */
  readonly file: string | undefined;
  /** The field at fault, as a path into the file (`users[1].user.exec.apiVersion`), when there is one. */
  readonly field: string | undefined;

  constructor(
    code: KubeconfigErrorCode,
    message: string,
    options: { file?: string; field?: string; cause?: unknown } = {},
  ) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.file = options.file;
    this.field = options.field;
  }
}

/** `kubeconfig FILE: FIELD: detail`, the shape of every message about a field of a kubeconfig file. */
export function fieldError(
  code: KubeconfigErrorCode,
  file: string,
  field: string | undefined,
  detail: string,
  cause?: unknown,
): KubeconfigError {
  const where = field ? `kubeconfig ${file}: ${field}` : `kubeconfig ${file}`;
  return new KubeconfigError(code, `${where}: ${detail}`, { file, ...(field ? { field } : {}), cause });
}

/** `['users', 1, 'user', 'token']` → `users[1].user.token`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** A short reason for a failed file system call (`ENOENT`), never the file's contents. */
export function ioReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (err instanceof Error ? err.message : String(err));
}
