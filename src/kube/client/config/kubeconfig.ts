import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join, resolve as resolvePath } from 'node:path';
import { realClock, type Clock } from '../../../core/index.ts';
import type { ClusterConnection } from '../connection.ts';
import { fieldError, ioReason, KubeconfigError } from './errors.ts';
import { resolveCluster, resolveUser } from './resolve.ts';
import { mergeKubeconfigs, parseKubeconfig, type KubeconfigFile } from './schema.ts';

/** Where to find a kubeconfig and which context to use: kubectl's `--kubeconfig` and `--context`. */
export interface LoadKubeconfigOptions {
  /** `--kubeconfig`: this file only; it must exist. */
  kubeconfig?: string;
  /** `--context`: instead of the file's `current-context`. */
  context?: string;
  /** Where `KUBECONFIG` and `HOME` are read, and the environment exec plugins inherit. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The home directory holding `.kube/config`. Default `$HOME`, else the OS's. */
  homeDir?: string;
  /** Drives token-file re-reads and exec credential expiry. */
  clock?: Clock;
}

/** The files to read, in precedence order, and whether a missing one is an error (only for `--kubeconfig`). */
export interface KubeconfigCandidates {
  paths: string[];
  explicit: boolean;
  /** How they were chosen, for messages (`--kubeconfig`, `KUBECONFIG`, `the default ~/.kube/config`). */
  from: string;
}

/**
 * clientcmd's precedence: `--kubeconfig`, else every file in `KUBECONFIG` (split on `:`, empty and repeated entries
 * dropped), else `~/.kube/config`.
 */
export function kubeconfigCandidates(options: LoadKubeconfigOptions = {}): KubeconfigCandidates {
  const env = options.env ?? process.env;
  if (options.kubeconfig) return { paths: [resolvePath(options.kubeconfig)], explicit: true, from: '--kubeconfig' };
  const list = [
    ...new Set(
      (env['KUBECONFIG'] ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((p) => resolvePath(p)),
    ),
  ];
  if (list.length > 0) return { paths: list, explicit: false, from: 'KUBECONFIG' };
  const home = options.homeDir ?? env['HOME'] ?? homedir();
  return { paths: [join(home, '.kube', 'config')], explicit: false, from: 'the default ~/.kube/config' };
}

/**
 * Reads the candidate files that exist. A missing `--kubeconfig` is `KUBECONFIG_NOT_FOUND`; missing files in
 * `KUBECONFIG` are skipped, as client-go does. Returns `[]` when none exists.
 */
export async function readKubeconfigFiles(candidates: KubeconfigCandidates): Promise<KubeconfigFile[]> {
  const files: KubeconfigFile[] = [];
  for (const path of candidates.paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && !candidates.explicit) continue;
      if (code === 'ENOENT') throw notFound({ ...candidates, paths: [path] });
      throw fieldError('KUBECONFIG_INVALID', path, undefined, `cannot read (${ioReason(err)})`, err);
    }
    files.push(parseKubeconfig(path, text));
  }
  return files;
}

/** `kubeconfig /a, /b: no such file (from KUBECONFIG)`. */
export function notFound(candidates: KubeconfigCandidates): KubeconfigError {
  const file = candidates.paths.join(', ');
  return new KubeconfigError('KUBECONFIG_NOT_FOUND', `kubeconfig ${file}: no such file (from ${candidates.from})`, {
    file,
  });
}

/**
 * Loads a kubeconfig as kubectl does (client-go `clientcmd`): finds the files ({@link kubeconfigCandidates}), merges
 * them (the first file to name a cluster, user or context wins; `current-context` from the first file that sets one),
 * picks `--context` or `current-context`, and resolves its cluster and user. Relative paths are relative to the file
 * that wrote them. Only the chosen context, cluster and user are checked, as `clientcmd`'s `ConfirmUsable` does.
 *
 * @throws {KubeconfigError} `KUBECONFIG_NOT_FOUND`, `KUBECONFIG_INVALID`, `KUBECONFIG_UNSUPPORTED`,
 *   `CONTEXT_NOT_FOUND`, `CLUSTER_NOT_FOUND`, `USER_NOT_FOUND`, `AUTH_PROVIDER_UNSUPPORTED`. Exec plugins run on the
 *   first `credentials()` call, which throws `EXEC_FAILED`.
 * @example
 * const conn = await loadKubeconfig({ context: 'dev' });
 * const creds = await conn.credentials?.(signal);
 */
export async function loadKubeconfig(options: LoadKubeconfigOptions = {}): Promise<ClusterConnection> {
  const candidates = kubeconfigCandidates(options);
  const files = await readKubeconfigFiles(candidates);
  if (files.length === 0) throw notFound(candidates);
  return connectionFrom(files, options);
}

/** Resolves a context of already-read files (precedence order) into a connection. */
export async function connectionFrom(
  files: readonly KubeconfigFile[],
  options: LoadKubeconfigOptions = {},
): Promise<ClusterConnection> {
  const merged = mergeKubeconfigs(files);
  const all = merged.files.join(', ');
  const names = (m: Map<string, unknown>) => (m.size ? [...m.keys()].map((k) => JSON.stringify(k)).join(', ') : 'none');

  let contextName: string;
  let contextFile: string;
  let contextField: string;
  if (options.context) {
    [contextName, contextFile, contextField] = [options.context, all, '--context'];
  } else if (merged.currentContext) {
    [contextName, contextFile, contextField] = [
      merged.currentContext.name,
      merged.currentContext.file,
      'current-context',
    ];
  } else {
    throw fieldError('CONTEXT_NOT_FOUND', all, 'current-context', 'not set, and no --context given');
  }
  const context = merged.contexts.get(contextName);
  if (!context)
    throw fieldError(
      'CONTEXT_NOT_FOUND',
      contextFile,
      contextField,
      `context ${JSON.stringify(contextName)} not found (contexts: ${names(merged.contexts)})`,
    );

  const { cluster: clusterName, user: userName, namespace } = context.value;
  if (!clusterName) throw fieldError('CLUSTER_NOT_FOUND', context.file, `${context.field}.cluster`, 'required');
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) {
    throw fieldError(
      'CLUSTER_NOT_FOUND',
      context.file,
      `${context.field}.cluster`,
      `cluster ${JSON.stringify(clusterName)} not found (clusters: ${names(merged.clusters)})`,
    );
  }
  // A context without a user is anonymous, as in client-go; one naming a missing user is an error.
  const user = userName ? merged.users.get(userName) : undefined;
  if (userName && !user)
    throw fieldError(
      'USER_NOT_FOUND',
      context.file,
      `${context.field}.user`,
      `user ${JSON.stringify(userName)} not found (users: ${names(merged.users)})`,
    );

  const { fields, execInfo } = await resolveCluster(cluster);
  const credentials = user
    ? await resolveUser(user, { cluster: execInfo, env: options.env ?? process.env, clock: options.clock ?? realClock })
    : undefined;
  return {
    ...fields,
    ...(credentials ? { credentials } : {}),
    source: `kubeconfig ${context.file}, context ${JSON.stringify(contextName)}`,
    ...(namespace ? { namespace } : {}),
  };
}
