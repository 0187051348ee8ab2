import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { fieldError, formatPath } from './errors.ts';

// kubeconfig as client-go's `clientcmd/api/v1` reads it: unknown fields are ignored (lenient decoding), `null` means
// absent (kubectl writes `namespace:` and `users: null`), and only types are checked here. What a field must say to be
// usable is checked later, and only for the context in use, as client-go's `ConfirmUsable` does.
const str = z.string().nullish();
const bool = z.boolean().nullish();

const clusterSchema = z.object({
  server: str,
  'certificate-authority': str,
  'certificate-authority-data': str,
  'insecure-skip-tls-verify': bool,
  'tls-server-name': str,
  'proxy-url': str,
  'disable-compression': bool,
  extensions: z.array(z.object({ name: z.string(), extension: z.unknown() })).nullish(),
});

const execSchema = z.object({
  command: str,
  args: z.array(z.string()).nullish(),
  env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
  apiVersion: str,
  installHint: str,
  provideClusterInfo: bool,
  interactiveMode: str,
});

const userSchema = z.object({
  'client-certificate': str,
  'client-certificate-data': str,
  'client-key': str,
  'client-key-data': str,
  token: str,
  tokenFile: str,
  as: str,
  'as-uid': str,
  'as-groups': z.array(z.string()).nullish(),
  username: str,
  password: str,
  'auth-provider': z.object({ name: z.string() }).nullish(),
  exec: execSchema.nullish(),
});

const contextSchema = z.object({ cluster: str, user: str, namespace: str });

const fileSchema = z
  .object({
    clusters: z.array(z.object({ name: z.string(), cluster: clusterSchema.nullish() })).nullish(),
    users: z.array(z.object({ name: z.string(), user: userSchema.nullish() })).nullish(),
    contexts: z.array(z.object({ name: z.string(), context: contextSchema.nullish() })).nullish(),
    'current-context': str,
  })
  .nullish();

export type ClusterEntry = z.output<typeof clusterSchema>;
export type UserEntry = z.output<typeof userSchema>;
export type ExecEntry = z.output<typeof execSchema>;
export type ContextEntry = z.output<typeof contextSchema>;

/** One named entry and where it was written: the file, and its path in the file (`users[1].user`). */
export interface Located<T> {
  name: string;
  value: T;
  file: string;
  field: string;
}

/** One kubeconfig file, read and type-checked. */
export interface KubeconfigFile {
  path: string;
  clusters: Located<ClusterEntry>[];
  users: Located<UserEntry>[];
  contexts: Located<ContextEntry>[];
  currentContext: string | undefined;
}

/**
 * Parses a kubeconfig file's text. Throws `KUBECONFIG_INVALID` naming the file and the first wrong field. A YAML
 * syntax error is reported by line and column only: the YAML library quotes the offending line, which may hold a token.
 */
export function parseKubeconfig(path: string, text: string): KubeconfigFile {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    // YAMLParseError quotes the source after its first line; other errors (alias limits) are one line already.
    const message = err instanceof YAMLParseError || err instanceof Error ? err.message : String(err);
    const headline = (message.split('\n')[0] ?? '').replace(/:$/, '');
    throw fieldError('KUBECONFIG_INVALID', path, undefined, `not valid YAML: ${headline}`);
  }
  const result = fileSchema.safeParse(doc);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = formatPath(issue.path);
    // zod's messages name types and allowed values, never the value given.
    throw fieldError('KUBECONFIG_INVALID', path, field || undefined, issue.message);
  }
  const config = result.data ?? {};
  const at = (list: string, i: number, key: string) => ({ file: path, field: `${list}[${i}].${key}` });
  return {
    path,
    clusters: (config.clusters ?? []).map((e, i) => ({
      name: e.name,
      value: e.cluster ?? {},
      ...at('clusters', i, 'cluster'),
    })),
    users: (config.users ?? []).map((e, i) => ({ name: e.name, value: e.user ?? {}, ...at('users', i, 'user') })),
    contexts: (config.contexts ?? []).map((e, i) => ({
      name: e.name,
      value: e.context ?? {},
      ...at('contexts', i, 'context'),
    })),
    currentContext: config['current-context'] || undefined,
  };
}

/** The merged view of several files, by client-go's rules: the first file to name an entry wins, whole. */
export interface MergedKubeconfig {
  files: string[];
  clusters: Map<string, Located<ClusterEntry>>;
  users: Map<string, Located<UserEntry>>;
  contexts: Map<string, Located<ContextEntry>>;
  /** The first file's `current-context` that is set, and that file. */
  currentContext: { name: string; file: string } | undefined;
}

/** Merges files in precedence order (client-go `ClientConfigLoadingRules.Load`). */
export function mergeKubeconfigs(files: readonly KubeconfigFile[]): MergedKubeconfig {
  const merged: MergedKubeconfig = {
    files: files.map((f) => f.path),
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
  for (const file of files) {
    for (const c of file.clusters) if (!merged.clusters.has(c.name)) merged.clusters.set(c.name, c);
    for (const u of file.users) if (!merged.users.has(u.name)) merged.users.set(u.name, u);
    for (const c of file.contexts) if (!merged.contexts.has(c.name)) merged.contexts.set(c.name, c);
    if (!merged.currentContext && file.currentContext)
      merged.currentContext = { name: file.currentContext, file: file.path };
  }
  return merged;
}
