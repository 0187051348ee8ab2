import { readFile } from 'node:fs/promises';
import { silentLogger, type Logger } from '../../../src/core/index.ts';
import { createApiServer, defaultApiServerOptions, type ApiServer, type ApiServerOptions } from '@raven/apiserver';
import { listen } from '../../../src/daemon/http-server.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { loadSnapshot, loadSecrets, saveSecrets, saveSnapshot } from './snapshot.ts';
import { selfSignedCertificate, type TlsMaterial } from './tls.ts';

/** kube-apiserver serves request heads (URL and headers) up to 1 MiB. */
export const MAX_HEADER_BYTES = 1 << 20;

/** What a request head over {@link MAX_HEADER_BYTES} gets: a Status like every other failure (no reason fits 431). */
const headerOverflowStatus = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Request Header Fields Too Large',
  code: 431,
};

export interface RunApiServerOptions extends Partial<Omit<ApiServerOptions, 'logger' | 'serverAddress'>> {
  host?: string;
  port?: number;
  /** The flag that sets `port`, for the error when it is taken. Default `--port` (`raven apiserver`'s). */
  portFlag?: string;
  /**
   * HTTPS: a self-signed certificate made at start (the default; kubectl never sends a token over plain HTTP),
   * PEM files, or plain HTTP (`'none'`, for clients that accept that).
   */
  tls?: 'self-signed' | 'none' | { certFile: string; keyFile: string; caFile?: string };
  kubeconfigOut?: string;
  /** Load the cluster (and the token and self-signed certificate) from here at start; save it here on close. */
  dataDir?: string;
  logger?: Logger;
}

export interface RunningApiServer {
  url: string;
  port: number;
  token: string;
  /** PEM CA a client must trust (HTTPS only). */
  caPem: string | undefined;
  app: ApiServer;
  /** Stops serving; saves the snapshot when a data dir is set. */
  close(): Promise<void>;
}

async function tlsMaterial(
  options: RunApiServerOptions,
  host: string,
  saved: TlsMaterial | undefined,
): Promise<{ tls?: TlsMaterial; caPem?: string }> {
  const tls = options.tls ?? 'self-signed';
  if (tls === 'none') return {};
  if (tls === 'self-signed') {
    const material = saved ?? (await selfSignedCertificate(host));
    return { tls: material, caPem: material.cert };
  }
  const material = { cert: await readFile(tls.certFile, 'utf8'), key: await readFile(tls.keyFile, 'utf8') };
  return { tls: material, caPem: tls.caFile ? await readFile(tls.caFile, 'utf8') : material.cert };
}

/**
 * Starts the embedded API server on a port (loopback by default): loads the snapshot, binds, writes the kubeconfig.
 * Used by `raven apiserver`, `raven dev` and every test that needs a real server.
 */
export async function runApiServer(options: RunApiServerOptions = {}): Promise<RunningApiServer> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? '127.0.0.1';
  const state = options.dataDir ? await loadSnapshot(options.dataDir) : undefined;
  const secrets = options.dataDir ? await loadSecrets(options.dataDir) : undefined;
  const { tls, caPem } = await tlsMaterial(
    options,
    host,
    options.tls === undefined || options.tls === 'self-signed' ? secrets?.tls : undefined,
  );
  const {
    host: _h,
    port: _p,
    portFlag: _f,
    tls: _t,
    kubeconfigOut: _o,
    dataDir: _d,
    logger: _l,
    ...overrides
  } = options;
  const token = options.token ?? secrets?.token;
  const bound: { app?: ApiServer } = {};
  // The app is made once the port is bound, so `/api` can advertise the real address (port 0 picks one).
  const server = await listen((request) => bound.app!.fetch(request), {
    host,
    port: options.port ?? 6443,
    portFlag: options.portFlag ?? '--port',
    ...(tls ? { tls } : {}),
    logger,
    // kube-apiserver's limit on a request head (MaxHeaderBytes), and a Status on the 431 beyond it.
    maxHeaderSize: MAX_HEADER_BYTES,
    headerOverflowBody: JSON.stringify(headerOverflowStatus),
  });
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  let app: ApiServer;
  try {
    app = createApiServer(
      {
        ...defaultApiServerOptions,
        ...defined,
        ...(token ? { token } : {}),
        serverAddress: `${host}:${server.port}`,
        logger,
      },
      state,
    );
  } catch (err) {
    // Bad options (an invalid service CIDR…): give the port back, or the process would keep running after the error.
    await server.close();
    throw err;
  }
  bound.app = app;
  if (options.dataDir)
    await saveSecrets(options.dataDir, {
      token: app.token,
      ...(options.tls === undefined || options.tls === 'self-signed' ? { tls } : {}),
    });
  if (options.kubeconfigOut)
    await writeKubeconfig(options.kubeconfigOut, { server: server.url, token: app.token, ...(caPem ? { caPem } : {}) });
  logger.info({ url: server.url, restoredResourceVersion: state?.resourceVersion }, 'API server listening');
  return {
    url: server.url,
    port: server.port,
    token: app.token,
    caPem,
    app,
    async close() {
      app.close();
      await server.close();
      if (options.dataDir) {
        const path = await saveSnapshot(options.dataDir, app.dump());
        logger.info({ path, resourceVersion: app.store.currentRv }, 'cluster snapshot saved');
      }
    },
  };
}
