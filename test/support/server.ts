import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, type RequestInit, type Response } from 'undici';
import { requester } from './api.ts';
import { runApiServer, type RunApiServerOptions, type RunningApiServer } from '@raven/dev';
import type { ClusterConnection } from '../../src/kube/client/index.ts';

// A serving certificate for the product's HTTP tests, from the development tools (src/ never imports them).
export { selfSignedCertificate } from '@raven/dev';

const run = promisify(execFile);

export const kubectlPath = new URL('../../.tools/kubectl/usr/bin/kubectl', import.meta.url).pathname;

export interface TestServer extends RunningApiServer {
  kubeconfig: string;
  dir: string;
  /** An authenticated request to the server. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** Runs kubectl 1.20 against the server with a fresh discovery cache; rejects with stderr on failure. */
  kubectl(args: string[], options?: { input?: string }): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a real API server on 127.0.0.1, port 0, with the fault API on, and a kubeconfig in a temp dir. */
export async function startTestServer(options: RunApiServerOptions = {}): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-test-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = await runApiServer({ port: 0, enableFaultApi: true, kubeconfigOut: kubeconfig, ...options });
  const dispatcher = server.caPem ? new Agent({ connect: { ca: server.caPem } }) : undefined;
  const cacheDir = join(dir, 'kube-cache');
  return {
    ...server,
    kubeconfig,
    dir,
    request: requester(server.url, server.token, dispatcher).request,
    async kubectl(args, opts = {}) {
      const child = run(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], {
        timeout: 30_000,
      });
      if (opts.input !== undefined) {
        child.child.stdin?.end(opts.input);
      }
      try {
        return (await child).stdout;
      } catch (err) {
        const e = err as { stderr?: string; stdout?: string; message: string };
        throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr || e.message}`, { cause: err });
      }
    },
    async stop() {
      await server.close();
      await dispatcher?.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A connection to a test server (its URL, CA and token), for a `KubeClient` of the test's own. */
export function testConnection(server: { url: string; caPem?: string | undefined; token: string }): ClusterConnection {
  return {
    server: server.url,
    ca: server.caPem,
    credentials: () => Promise.resolve({ kind: 'bearer', token: server.token }),
    source: 'test',
  };
}
