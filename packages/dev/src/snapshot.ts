import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RavenError } from '../../../src/core/index.ts';
import type { ApiServerState } from '@raven/apiserver';

const fileName = 'cluster.json';
const formatVersion = 1;

/**
 * Reads the cluster snapshot in `dataDir`; undefined when there is none yet. A damaged file is an error, not a reset.
 */
export async function loadSnapshot(dataDir: string): Promise<ApiServerState | undefined> {
  const path = join(dataDir, fileName);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RavenError('SNAPSHOT_UNREADABLE', `cannot read the cluster snapshot ${path}`, { cause: err });
  }
  let doc: { version?: number; state?: ApiServerState };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (err) {
    throw new RavenError(
      'SNAPSHOT_INVALID',
      `the cluster snapshot ${path} is not valid JSON; move it away to start empty`,
      { cause: err },
    );
  }
  if (doc.version !== formatVersion || !doc.state || typeof doc.state.resourceVersion !== 'number') {
    throw new RavenError(
      'SNAPSHOT_INVALID',
      `the cluster snapshot ${path} has an unknown format (version ${String(doc.version)}); move it away to start empty`,
    );
  }
  return doc.state;
}

/** Writes the snapshot atomically (temporary file, then rename), so a crash mid-write never leaves half a file. */
export async function saveSnapshot(dataDir: string, state: ApiServerState): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, fileName);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ version: formatVersion, state }), { mode: 0o600 });
  await rename(temporary, path);
  return path;
}

const secretsFile = 'secrets.json';

/** The token and self-signed certificate of a server with a data dir, so its kubeconfig stays valid across restarts. */
export interface SavedSecrets {
  token: string;
  tls?: { cert: string; key: string } | undefined;
}

export async function loadSecrets(dataDir: string): Promise<SavedSecrets | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, secretsFile), 'utf8')) as SavedSecrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RavenError(
      'SNAPSHOT_INVALID',
      `cannot read ${join(dataDir, secretsFile)}; move it away to start with a new token`,
      { cause: err },
    );
  }
}

/** Written with mode 0600: it holds the bearer token and the private key. */
export async function saveSecrets(dataDir: string, secrets: SavedSecrets): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, secretsFile);
  await writeFile(`${path}.tmp`, JSON.stringify(secrets), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}
