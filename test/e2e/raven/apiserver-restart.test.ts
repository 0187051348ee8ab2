/**
 * Issue 13 "Informers recover from anything": the Kubernetes API server (`raven apiserver`, a child process with a
 * data dir, so its token and certificate survive) is stopped and started again on the same port while Raven (in this
 * process, with its own client and session, no leader election) keeps running:
 * - killed (SIGKILL) and restarted with its state lost, its resourceVersion back near 1: `/readyz` turns false while
 *   it is gone; after the restart the pod lost with the old state has its port deleted, a pod created on the new
 *   server is wired within 30 s, and `/readyz` is true again — without restarting Raven;
 * - stopped (SIGTERM, state saved) for 20 s and restarted with its state: a pod created 10 s after it is back is wired
 *   within 10 s (informers back off at most 5 s, so they are live again before the pod exists).
 * Timings are measured and printed; the assertions are bounded waits on converged state.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../support/node-test.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../../src/core/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '@raven/dev';
import { runRaven } from '../../../src/daemon/run-raven.ts';
import { KubeClient, loadConnection, resources } from '../../../src/kube/client/index.ts';
import { NeutronClient, type OpenStackSession } from '../../../src/openstack/index.ts';
import { parseVif, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { newSession, podBody, ravenSettings } from './support.ts';

const CLUSTER = 'restart';
const bin = fileURLToPath(new URL('../../../bin/raven.js', import.meta.url));

interface ApiServer {
  proc: ChildProcess;
  port: number;
  exited: Promise<unknown>;
  stderr: () => string;
}

/** `raven apiserver` on `port` (0: a free one) with `dir` as its data dir; resolves once it listens. */
async function startApiServer(dir: string, port: number): Promise<ApiServer> {
  const { NODE_TEST_CONTEXT: _t, NODE_OPTIONS: _o, ...env } = process.env;
  const proc = spawn(
    process.execPath,
    [
      bin,
      'apiserver',
      ...['--port', String(port), '--data-dir', dir, '--kubeconfig-out', join(dir, 'kubeconfig')],
      ...['--log-level', 'error'],
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  proc.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  const exited = once(proc, 'exit');
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`raven apiserver exited: ${err}`)));
  });
  proc.stdout.resume();
  return { proc, port: Number(new URL(url).port), exited, stderr: () => err };
}

async function stopApiServer(api: ApiServer, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  if (api.proc.exitCode !== null || api.proc.signalCode !== null) return;
  api.proc.kill(signal);
  await api.exited;
}

describe('Raven across restarts of the Kubernetes API server', { timeout: 180_000 }, () => {
  let dir: string;
  let api: ApiServer;
  let sim: RunningOpenStackSim;
  let client: KubeClient;
  let session: OpenStackSession;
  let neutron: NeutronClient;
  let ops: string;
  let raven: { stop(): Promise<void> };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-restart-'));
    api = await startApiServer(dir, 0);
    const cloudsYaml = join(dir, 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut: cloudsYaml });
    const connection = await loadConnection({ kubeconfig: join(dir, 'kubeconfig') });
    client = new KubeClient({ connection, qps: 1000, burst: 2000 });
    session = newSession(cloudsYaml);
    neutron = new NeutronClient(session);
    // Raven's own client and session, as `raven run` would have; a 3 s bound so the test sees /readyz turn.
    const config = loadRavenConfig({ env: { ...ravenSettings(CLUSTER, 'shared'), RAVEN_UNREADY_AFTER_SECONDS: '3' } });
    const ravenClient = new KubeClient({ connection, qps: 1000, burst: 2000 });
    const ravenSession = newSession(cloudsYaml);
    const abort = new AbortController();
    let listening!: (url: string) => void;
    const opsUrl = new Promise<string>((resolve) => (listening = resolve));
    const run = runRaven(
      { config, logger: silentLogger, client: ravenClient, session: ravenSession, onListening: listening },
      abort.signal,
    );
    raven = {
      async stop() {
        abort.abort();
        await run.catch(() => undefined);
        await ravenSession.close();
        await ravenClient.close();
      },
    };
    ops = await Promise.race([opsUrl, run.then(() => Promise.reject(new Error('Raven stopped before listening')))]);
  });
  after(async () => {
    await raven?.stop();
    await session?.close();
    await client?.close();
    await sim?.close();
    if (api) await stopApiServer(api, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  const readyz = async (): Promise<{ status: number; body: string }> => {
    const res = await fetch(`${ops}/readyz`);
    return { status: res.status, body: await res.text() };
  };
  /** Creates `ns/name` (and its namespace when missing) and waits until Raven wrote its VIF; returns the port id. */
  async function wiredPod(ns: string, name: string, timeoutMs: number): Promise<{ portId: string; ms: number }> {
    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const started = Date.now();
    const pod = await client.create(resources.pods, podBody(ns, name), { namespace: ns });
    const vif = await waitFor(
      `the VIF of ${ns}/${name} (API server stderr: ${api.stderr()})`,
      async () => parseVif((await client.get(resources.pods, name, ns)).metadata.annotations?.[VIF_ANNOTATION]),
      { timeoutMs, intervalMs: 100 },
    );
    assert.equal(vif.podUid, pod.metadata.uid);
    return { portId: vif.portId, ms: Date.now() - started };
  }

  it('restarted with its state lost: unready meanwhile, then the lost pod is cleaned up and a new pod wired', async () => {
    await waitFor('/readyz to pass', async () => (await readyz()).status === 200, { timeoutMs: 30_000 });
    const lost = await wiredPod('before', 'lost', 30_000);

    const killedAt = Date.now();
    await stopApiServer(api, 'SIGKILL');
    await rm(join(dir, 'cluster.json'), { force: true });
    const unready = await waitFor(
      '/readyz to fail while the API server is gone',
      async () => {
        const r = await readyz();
        return r.status === 500 && r.body.includes('[-]informers failed') && r;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const unreadyAfter = Date.now() - killedAt;
    assert.match(unready.body, /\[-\]informers failed: .*pods: no successful list or watch for/);

    api = await startApiServer(dir, api.port);
    const restartedAt = Date.now();
    const fresh = await wiredPod('after', 'fresh', 30_000);
    await waitFor('/readyz to pass again', async () => (await readyz()).status === 200, { timeoutMs: 30_000 });
    const readyAfter = Date.now() - restartedAt;
    // The pod the API server forgot reached Raven as a delete: its port goes.
    await waitFor(
      'the lost pod’s port to be deleted',
      async () => (await neutron.ports.list({ id: lost.portId })).length === 0,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
      },
    );
    assert.notEqual(fresh.portId, lost.portId);
    process.stdout.write(
      `# state lost: /readyz false ${unreadyAfter} ms after the kill (bound 3 s); after the restart a new pod wired in ${fresh.ms} ms, /readyz true after ${readyAfter} ms\n`,
    );
  });

  it('down 20 s with its state kept: a pod created 10 s after it is back is wired within 10 s', async () => {
    await waitFor('/readyz to pass', async () => (await readyz()).status === 200, { timeoutMs: 30_000 });
    await stopApiServer(api, 'SIGTERM');
    await sleep(20_000);
    api = await startApiServer(dir, api.port);
    await sleep(10_000);
    const pod = await wiredPod('outage', 'late', 10_000);
    process.stdout.write(`# 20 s outage: a pod created 10 s after the API server returned was wired in ${pod.ms} ms\n`);
    await waitFor('/readyz to pass', async () => (await readyz()).status === 200, { timeoutMs: 10_000 });
  });
});
