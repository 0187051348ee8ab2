import { readFile } from 'node:fs/promises';
import { silentLogger, type Logger } from '../core/index.ts';
import { createApiServer, defaultApiServerOptions, type ApiServer, type ApiServerOptions } from '../apiserver/index.ts';
import { listen } from './http-server.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { loadSnapshot, saveSnapshot } from './snapshot.ts';

export interface RunApiServerOptions extends Partial<ApiServerOptions> {
  host?: string;
  port?: number;
  /** PEM files: serve HTTPS. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** CA to put in the kubeconfig (defaults to the certificate itself, right for a self-signed one). */
  tlsCaFile?: string;
  kubeconfigOut?: string;
  /** Load the cluster from here at start and save it here on close. */
  dataDir?: string;
  logger?: Logger;
}

export interface RunningApiServer {
  url: string;
  port: number;
  token: string;
  app: ApiServer;
  /** Stops serving; saves the snapshot when a data dir is set. */
  close(): Promise<void>;
}

/**
 * Starts the embedded API server on a port (loopback by default): loads the snapshot, binds, writes the kubeconfig.
 * Used by `raven apiserver`, `raven dev` and every test that needs a real server.
 */
export async function runApiServer(options: RunApiServerOptions = {}): Promise<RunningApiServer> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? '127.0.0.1';
  const state = options.dataDir ? await loadSnapshot(options.dataDir) : undefined;
  const tls = options.tlsCertFile && options.tlsKeyFile
    ? { cert: await readFile(options.tlsCertFile, 'utf8'), key: await readFile(options.tlsKeyFile, 'utf8') }
    : undefined;
  if ((options.tlsCertFile === undefined) !== (options.tlsKeyFile === undefined)) {
    throw new Error('--tls-cert-file and --tls-key-file go together');
  }
  const { host: _h, port: _p, tlsCertFile: _c, tlsKeyFile: _k, tlsCaFile: _a, kubeconfigOut: _o, dataDir: _d, ...overrides } = options;
  const bound: { app?: ApiServer } = {};
  // The app is made once the port is bound, so `/api` can advertise the real address (port 0 picks one).
  const server = await listen((request) => bound.app!.fetch(request), { host, port: options.port ?? 6443, ...(tls ? { tls } : {}), logger });
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const app = createApiServer({ ...defaultApiServerOptions, serverAddress: `${host}:${server.port}`, ...defined, logger }, state);
  bound.app = app;
  if (options.kubeconfigOut) {
    const caPem = tls ? await readFile(options.tlsCaFile ?? options.tlsCertFile!, 'utf8') : undefined;
    await writeKubeconfig(options.kubeconfigOut, { server: server.url, token: app.token, ...(caPem ? { caPem } : {}) });
  }
  logger.info({ url: server.url, restoredResourceVersion: state?.resourceVersion }, 'API server listening');
  return {
    url: server.url,
    port: server.port,
    token: app.token,
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
