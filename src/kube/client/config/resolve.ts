import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path';
import type { Clock } from '../../../core/index.ts';
import type { ClusterConnection, Credentials } from '../connection.ts';
import { fieldError, ioReason } from './errors.ts';
import { checkExec, execCredentials, type ExecClusterInfo } from './exec.ts';
import type { ClusterEntry, Located, UserEntry } from './schema.ts';
import { watchedFile } from './watched-file.ts';

// Turns the cluster and user a context names into a ClusterConnection's fields, checking them as client-go's
// `validateClusterInfo` / `validateAuthInfo` and `rest.TLSConfigFor` do, with the file and field in every message.

/** A path written in a kubeconfig, relative to that file's directory (client-go `ResolveLocalPaths`). */
export function pathIn(file: string, path: string): string {
  return isAbsolute(path) ? path : resolvePath(dirname(file), path);
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

function decodePem(file: string, field: string, data: string): string {
  if (!BASE64.test(data)) throw fieldError('KUBECONFIG_INVALID', file, field, 'not base64');
  return checkPem(file, field, Buffer.from(data, 'base64').toString('utf8'));
}

function checkPem(file: string, field: string, text: string): string {
  if (!text.includes('-----BEGIN ')) throw fieldError('KUBECONFIG_INVALID', file, field, 'holds no PEM block');
  return text;
}

async function readIn(file: string, field: string, path: string): Promise<string> {
  const abs = pathIn(file, path);
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    throw fieldError('KUBECONFIG_INVALID', file, field, `cannot read ${abs} (${ioReason(err)})`, err);
  }
}

export type ClusterFields = Pick<
  ClusterConnection,
  'server' | 'ca' | 'insecureSkipTlsVerify' | 'tlsServerName' | 'proxyUrl'
>;

/** A cluster entry's server and TLS settings, and what an exec plugin is told about it. */
export async function resolveCluster(
  entry: Located<ClusterEntry>,
): Promise<{ fields: ClusterFields; execInfo: ExecClusterInfo }> {
  const { file, field, value: c } = entry;
  if (!c.server)
    throw fieldError(
      'KUBECONFIG_INVALID',
      file,
      `${field}.server`,
      `required (cluster ${JSON.stringify(entry.name)} has no server)`,
    );
  // client-go takes `host:port` without a scheme as https.
  const server = (/^[a-z][a-z0-9+.-]*:\/\//i.test(c.server) ? c.server : `https://${c.server}`).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw fieldError('KUBECONFIG_INVALID', file, `${field}.server`, `${JSON.stringify(c.server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw fieldError('KUBECONFIG_INVALID', file, `${field}.server`, `scheme ${url.protocol} is not http or https`);

  let ca: string | undefined;
  // As in client-go, the data wins over the file.
  if (c['certificate-authority-data'])
    ca = decodePem(file, `${field}.certificate-authority-data`, c['certificate-authority-data']);
  else if (c['certificate-authority'])
    ca = checkPem(
      file,
      `${field}.certificate-authority`,
      await readIn(file, `${field}.certificate-authority`, c['certificate-authority']),
    );
  if (ca && c['insecure-skip-tls-verify']) {
    throw fieldError(
      'KUBECONFIG_INVALID',
      file,
      `${field}.insecure-skip-tls-verify`,
      'cannot be true with a certificate-authority (client-go refuses this too)',
    );
  }

  let proxyUrl: string | undefined;
  if (c['proxy-url']) {
    let proxy: URL | undefined;
    try {
      proxy = new URL(c['proxy-url']);
    } catch {
      throw fieldError('KUBECONFIG_INVALID', file, `${field}.proxy-url`, 'is not a URL');
    }
    if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
      throw fieldError(
        'KUBECONFIG_UNSUPPORTED',
        file,
        `${field}.proxy-url`,
        `scheme ${proxy.protocol} is not supported (use http or https)`,
      );
    }
    proxyUrl = c['proxy-url'];
  }

  const fields: ClusterFields = {
    server,
    ...(ca !== undefined ? { ca } : {}),
    ...(c['insecure-skip-tls-verify'] ? { insecureSkipTlsVerify: true } : {}),
    ...(c['tls-server-name'] ? { tlsServerName: c['tls-server-name'] } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
  };
  const execConfig = c.extensions?.find((e) => e.name === 'client.authentication.k8s.io/exec')?.extension;
  const execInfo: ExecClusterInfo = {
    server,
    ...(fields.tlsServerName ? { 'tls-server-name': fields.tlsServerName } : {}),
    ...(fields.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(ca !== undefined ? { 'certificate-authority-data': Buffer.from(ca).toString('base64') } : {}),
    ...(proxyUrl ? { 'proxy-url': proxyUrl } : {}),
    ...(c['disable-compression'] ? { 'disable-compression': true } : {}),
    ...(execConfig !== undefined ? { config: execConfig } : {}),
  };
  return { fields, execInfo };
}

export interface UserContext {
  cluster: ExecClusterInfo;
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

/**
 * A user entry's credentials as a per-request function, or `undefined` for an anonymous user. Files (tokenFile, client
 * certificate and key) are read now, so a missing one fails the load, and re-read when they rotate.
 */
export async function resolveUser(
  entry: Located<UserEntry>,
  ctx: UserContext,
): Promise<((signal?: AbortSignal) => Promise<Credentials>) | undefined> {
  const { file, field, value: u } = entry;
  const at = (name: string) => `${field}.${name}`;
  if (u['auth-provider']) {
    throw fieldError(
      'AUTH_PROVIDER_UNSUPPORTED',
      file,
      at('auth-provider'),
      `${JSON.stringify(u['auth-provider'].name)} is not supported (legacy auth providers were removed in kubectl 1.26; use an exec plugin such as gke-gcloud-auth-plugin or kubelogin)`,
    );
  }
  if (u.as || u['as-uid'] || u['as-groups']?.length)
    throw fieldError(
      'KUBECONFIG_UNSUPPORTED',
      file,
      at(u.as ? 'as' : u['as-uid'] ? 'as-uid' : 'as-groups'),
      'impersonation is not supported',
    );

  const hasToken = Boolean(u.token || u.tokenFile);
  const hasBasic = Boolean(u.username || u.password);
  const hasCert = Boolean(
    u['client-certificate'] || u['client-certificate-data'] || u['client-key'] || u['client-key-data'],
  );
  const methods = [
    hasToken && 'token',
    hasBasic && 'basic auth',
    hasCert && 'client certificate',
    u.exec && 'exec',
  ].filter(Boolean);
  // client-go allows a client certificate beside a token or an exec plugin; a Credentials value carries one kind.
  if (methods.length > 1) {
    const code = hasToken && hasBasic ? 'KUBECONFIG_INVALID' : 'KUBECONFIG_UNSUPPORTED';
    throw fieldError(code, file, field, `more than one authentication method (${methods.join(', ')}); use one`);
  }

  if (u.exec) {
    checkExec(u.exec, file, at('exec'));
    const command = u.exec.command!;
    return execCredentials({
      exec: u.exec,
      // A bare name is looked up on PATH; a relative path with a slash is relative to the kubeconfig.
      command: command.includes('/') ? pathIn(file, command) : command,
      file,
      field: at('exec'),
      cluster: ctx.cluster,
      env: ctx.env,
      clock: ctx.clock,
    });
  }
  // With both, the file wins (client-go's transport prefers BearerTokenFile).
  if (u.tokenFile) {
    const path = pathIn(file, u.tokenFile);
    const fail = (err: unknown) =>
      fieldError('KUBECONFIG_INVALID', file, at('tokenFile'), `cannot read ${path} (${ioReason(err)})`, err);
    const read = watchedFile(path, ctx.clock, fail);
    const first = (await read()).trim();
    if (!first) throw fieldError('KUBECONFIG_INVALID', file, at('tokenFile'), `${path} is empty`);
    return async () => ({ kind: 'bearer', token: (await read()).trim() });
  }
  if (u.token) {
    const token = u.token;
    return () => Promise.resolve({ kind: 'bearer', token });
  }
  if (hasBasic) {
    if (!u.username) throw fieldError('KUBECONFIG_INVALID', file, at('username'), 'required with password');
    const credentials: Credentials = { kind: 'basic', username: u.username, password: u.password ?? '' };
    return () => Promise.resolve(credentials);
  }
  if (hasCert) return clientCertificate(entry, ctx.clock);
  return undefined;
}

async function clientCertificate(
  entry: Located<UserEntry>,
  clock: Clock,
): Promise<(signal?: AbortSignal) => Promise<Credentials>> {
  const { file, field, value: u } = entry;
  const part = (name: 'client-certificate' | 'client-key'): (() => Promise<string>) => {
    const data = u[`${name}-data`];
    if (data) {
      const pem = decodePem(file, `${field}.${name}-data`, data);
      return () => Promise.resolve(pem);
    }
    const path = u[name];
    if (!path)
      throw fieldError(
        'KUBECONFIG_INVALID',
        file,
        `${field}.${name}`,
        `required (${name} or ${name}-data) with the other half of the client certificate`,
      );
    const abs = pathIn(file, path);
    const read = watchedFile(abs, clock, (err) =>
      fieldError('KUBECONFIG_INVALID', file, `${field}.${name}`, `cannot read ${abs} (${ioReason(err)})`, err),
    );
    return async () => checkPem(file, `${field}.${name}`, await read());
  };
  const cert = part('client-certificate');
  const key = part('client-key');
  const get = async (): Promise<Credentials> => ({ kind: 'client-certificate', cert: await cert(), key: await key() });
  await get(); // a missing or malformed file fails the load, not the first request
  return get;
}
