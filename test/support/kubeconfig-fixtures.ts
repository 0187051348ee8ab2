// Test helpers (not exported from index.ts): temp dirs, kubeconfig documents, fake PEM, an exec plugin script.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';

/** A PEM-looking block; the loader checks for PEM framing, never parses the certificate. */
export const pem = (label: string, body = 'QUJD'): string =>
  `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
export const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** A temp dir with helpers to write files in it; `cleanup()` removes it. */
export async function tempDir(): Promise<{
  dir: string;
  write: (rel: string, content: string, mode?: number) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-kubeconfig-'));
  return {
    dir,
    async write(rel, content, mode) {
      const path = join(dir, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      if (mode !== undefined) await chmod(path, mode);
      return path;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A one-context kubeconfig (YAML) with the given cluster and user stanzas. */
export function kubeconfig(opts: {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown>;
  name?: string;
  namespace?: string;
  currentContext?: string | null;
}): string {
  const name = opts.name ?? 'test';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: opts.cluster ?? { server: 'https://k8s.example:6443' } }],
    users: [{ name, user: opts.user ?? {} }],
    contexts: [
      { name, context: { cluster: name, user: name, ...(opts.namespace ? { namespace: opts.namespace } : {}) } },
    ],
    ...(opts.currentContext === null ? {} : { 'current-context': opts.currentContext ?? name }),
  });
}

/**
 * An exec plugin: counts its runs in `<dir>/count`, saves `KUBERNETES_EXEC_INFO` to `<dir>/exec-info.json`, and prints
 * an ExecCredential of `$API` whose token is `tok-<run>-<first arg>`, expiring at `$EXPIRES` (if set).
 */
export const PLUGIN = `#!/bin/sh
dir=$(dirname "$0")
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info.json"
if [ -n "$EXPIRES" ]; then exp=",\\"expirationTimestamp\\":\\"$EXPIRES\\""; else exp=""; fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"tok-%s-%s"%s}}\\n' "$API" "$n" "$1" "$exp"
`;
