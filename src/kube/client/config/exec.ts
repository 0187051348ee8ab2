import { spawn } from 'node:child_process';
import { z } from 'zod';
import type { Clock } from '../../../core/index.ts';
import type { Credentials } from '../connection.ts';
import { fieldError, formatPath, type KubeconfigError } from './errors.ts';
import type { ExecEntry } from './schema.ts';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';

/**
 * How long before `expirationTimestamp` a credential is refreshed (capped at half its lifetime), so a request never
 * leaves with a token that expires in flight. client-go waits for the expiry itself.
 */
export const EXEC_REFRESH_MARGIN_MS = 10_000;
const STDERR_LIMIT = 2_000;

/** What the plugin is told about the cluster when `provideClusterInfo` is set (ExecCredential `spec.cluster`). */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  config?: unknown;
}

export interface ExecPluginOptions {
  exec: ExecEntry;
  /** `command`, already resolved against the kubeconfig's directory when it is a relative path. */
  command: string;
  /** For messages: the kubeconfig file and the `exec` field's path (`users[0].user.exec`). */
  file: string;
  field: string;
  cluster: ExecClusterInfo;
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

/** Checks an `exec` stanza as client-go's validation does; throws `KUBECONFIG_INVALID` naming the field. */
export function checkExec(exec: ExecEntry, file: string, field: string): void {
  if (!exec.command) throw fieldError('KUBECONFIG_INVALID', file, `${field}.command`, 'required');
  if (exec.apiVersion !== V1 && exec.apiVersion !== V1BETA1) {
    const given = exec.apiVersion ? `unsupported ${JSON.stringify(exec.apiVersion)}` : 'required';
    throw fieldError('KUBECONFIG_INVALID', file, `${field}.apiVersion`, `${given} (use v1 or v1beta1)`);
  }
  const mode = exec.interactiveMode;
  if (!mode && exec.apiVersion === V1)
    throw fieldError(
      'KUBECONFIG_INVALID',
      file,
      `${field}.interactiveMode`,
      'required with apiVersion v1 (Never, IfAvailable or Always)',
    );
  if (mode && !['Never', 'IfAvailable', 'Always'].includes(mode)) {
    throw fieldError(
      'KUBECONFIG_INVALID',
      file,
      `${field}.interactiveMode`,
      `unsupported ${JSON.stringify(mode)} (use Never, IfAvailable or Always)`,
    );
  }
  if (mode === 'Always')
    throw fieldError(
      'KUBECONFIG_UNSUPPORTED',
      file,
      `${field}.interactiveMode`,
      'Always needs a terminal; Raven runs plugins non-interactively',
    );
}

const outputSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('ExecCredential'),
  status: z.object({
    token: z.string().nullish(),
    clientCertificateData: z.string().nullish(),
    clientKeyData: z.string().nullish(),
    expirationTimestamp: z.string().nullish(),
  }),
});

interface Cached {
  credentials: Credentials;
  /** When to run the plugin again; `undefined` = never (no expiry given). */
  refreshAt: number | undefined;
  expiresAt: number | undefined;
}

/**
 * Credentials from an exec plugin (client-go `plugin/pkg/client/auth/exec`): runs `command args` with `env` added and
 * `KUBERNETES_EXEC_INFO` set, caches what it prints until shortly before `expirationTimestamp`, and runs it again then.
 * Concurrent callers share one run; an aborted caller stops waiting but does not kill a run others may need. When a
 * refresh fails while the cached credential has not yet expired, the cached one is used.
 */
export function execCredentials(options: ExecPluginOptions): (signal?: AbortSignal) => Promise<Credentials> {
  let cached: Cached | undefined;
  let inflight: Promise<Cached> | undefined;
  const { clock } = options;

  const get = async (): Promise<Credentials> => {
    const now = clock.now();
    if (cached && (cached.refreshAt === undefined || now < cached.refreshAt)) return cached.credentials;
    inflight ??= runPlugin(options).finally(() => {
      inflight = undefined;
    });
    try {
      cached = await inflight;
    } catch (err) {
      if (cached?.expiresAt !== undefined && clock.now() < cached.expiresAt) return cached.credentials;
      throw err;
    }
    return cached.credentials;
  };

  return (signal) => {
    if (!signal) return get();
    signal.throwIfAborted();
    return new Promise<Credentials>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      get()
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  };
}

async function runPlugin(o: ExecPluginOptions): Promise<Cached> {
  const apiVersion = o.exec.apiVersion!;
  const fail = (detail: string, cause?: unknown): KubeconfigError =>
    fieldError('EXEC_FAILED', o.file, o.field, `command ${JSON.stringify(o.command)} ${detail}`, cause);
  const request = {
    apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false, ...(o.exec.provideClusterInfo ? { cluster: o.cluster } : {}) },
  };
  const env: NodeJS.ProcessEnv = { ...o.env };
  for (const { name, value } of o.exec.env ?? []) env[name] = value;
  env['KUBERNETES_EXEC_INFO'] = JSON.stringify(request);

  const { stdout, stderr, exitCode, signal } = await new Promise<{
    stdout: string;
    stderr: string;
    exitCode: number | null;
    signal: NodeJS.Signals | null;
  }>((resolve, reject) => {
    const child = spawn(o.command, o.exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      const hint = e.code === 'ENOENT' && o.exec.installHint ? `\n${o.exec.installHint.trim()}` : '';
      reject(fail(`could not be run (${e.code ?? e.message})${hint}`, e));
    });
    child.on('close', (exitCode, signal) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode,
        signal,
      }),
    );
  });
  if (exitCode !== 0) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
    const text = stderr.trim();
    const shown = text.length > STDERR_LIMIT ? `${text.slice(0, STDERR_LIMIT)}…` : text;
    throw fail(shown ? `${how}: ${shown}` : how);
  }

  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    throw fail('printed something that is not JSON (want an ExecCredential)');
  }
  const parsed = outputSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fail(`printed an invalid ExecCredential: ${formatPath(issue.path)}: ${issue.message}`);
  }
  const { apiVersion: got, status } = parsed.data;
  if (got !== apiVersion)
    throw fail(`printed an ExecCredential of apiVersion ${JSON.stringify(got)}, want ${JSON.stringify(apiVersion)}`);

  let credentials: Credentials;
  if (status.token) {
    // A plugin that prints a token and a certificate: the token is used (Credentials carries one kind).
    credentials = { kind: 'bearer', token: status.token };
  } else if (status.clientCertificateData && status.clientKeyData) {
    credentials = { kind: 'client-certificate', cert: status.clientCertificateData, key: status.clientKeyData };
  } else if (status.clientCertificateData || status.clientKeyData) {
    throw fail('printed an ExecCredential with only one of status.clientCertificateData and status.clientKeyData');
  } else {
    throw fail('printed an ExecCredential with neither status.token nor status.clientCertificateData/clientKeyData');
  }

  if (!status.expirationTimestamp) return { credentials, refreshAt: undefined, expiresAt: undefined };
  const expiresAt = Date.parse(status.expirationTimestamp);
  if (Number.isNaN(expiresAt))
    throw fail(
      `printed status.expirationTimestamp ${JSON.stringify(status.expirationTimestamp)}, not an RFC 3339 time`,
    );
  const now = o.clock.now();
  const margin = Math.min(EXEC_REFRESH_MARGIN_MS, Math.max(0, (expiresAt - now) / 2));
  return { credentials, refreshAt: expiresAt - margin, expiresAt };
}
