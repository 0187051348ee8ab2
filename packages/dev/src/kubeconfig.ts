import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigFor {
  server: string;
  token: string;
  /** PEM CA that signed the server certificate (HTTPS). */
  caPem?: string;
  /** Name used for the cluster, user and context entries. */
  name?: string;
}

/** A kubeconfig document (YAML) that points kubectl at a server with a bearer token. */
export function kubeconfigYaml({ server, token, caPem, name = 'raven' }: KubeconfigFor): string {
  const cluster: Record<string, unknown> = { server };
  if (caPem) cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

/** Writes a kubeconfig readable only by its owner (it holds the token). */
export async function writeKubeconfig(path: string, config: KubeconfigFor): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, kubeconfigYaml(config), { mode: 0o600 });
  await chmod(path, 0o600);
}
