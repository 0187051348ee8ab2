/**
 * `raven dev --demo` as a user runs it: a child process in an empty directory, with the OpenStack simulator. It
 * prints a summary once the demo converged; the Kubernetes API (through the kubeconfig it wrote) then shows three
 * Running pods with IPs and a LoadBalancer Service with a floating IP from the simulated `public` network; SIGTERM
 * ends it cleanly (exit 0, nothing left in its process group).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeClient, loadConnection, resources } from '../../src/kube/client/index.ts';
import { waitFor } from '../support/wait.ts';

const bin = new URL('../../bin/raven.js', import.meta.url).pathname;

/** The environment without anything that would point `raven dev` at a real cloud or change its configuration. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('OS_') && !k.startsWith('RAVEN_') && k !== 'KUBECONFIG' && k !== 'FLANNEL_NET',
    ),
  );
  return { ...env, RAVEN_LOG_LEVEL: 'warn' };
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `ps` lines of the processes in a process group (for the failure message). */
function groupProcesses(pgid: number): string {
  try {
    return execFileSync('ps', ['-eo', 'pid,pgid,stat,args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim().split(/\s+/)[1] === String(pgid))
      .join('\n');
  } catch (err) {
    return `(ps failed: ${String(err)})`;
  }
}

describe('raven dev --demo', { timeout: 30_000 }, () => {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  after(async () => {
    if (child?.pid && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('converges (3 Running pods, an ACTIVE load balancer with 3 members, an ingress IP), prints a summary, and stops cleanly on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-dev-demo-'));
    const kubeconfig = join(dir, 'kubeconfig');
    // Its own process group: after it exits, nothing it started may be left in that group.
    const proc = spawn(
      process.execPath,
      [bin, 'dev', '--demo', '--demo-timeout', '15', '--api-port', '0', '--kubeconfig-out', kubeconfig],
      {
        cwd: dir,
        env: cleanEnv(),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.on('exit', (code, signal) => resolve({ code, signal })),
    );

    const summary = await waitFor(
      'the demo summary',
      () => {
        if (proc.exitCode !== null)
          assert.fail(`raven dev exited (${proc.exitCode}) before the summary:\n${stdout}\n${stderr}`);
        if (stderr.includes('raven dev --demo:')) assert.fail(`the demo did not converge:\n${stdout}\n${stderr}`);
        const at = stdout.indexOf('Demo ready in');
        return at >= 0 && stdout.includes('Try: kubectl -n demo', at) ? stdout.slice(at) : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    assert.match(stdout, /demo: pods Running with IPs: 3\/3/);
    assert.match(stdout, /demo: pool members: 3\/3/);
    assert.match(stdout, /floating IPs: +network public, 203\.0\.113\.0\/24/);
    const ingressInSummary = /ingress (203\.0\.113\.\d+)/.exec(summary)?.[1];
    assert.ok(ingressInSummary, `no ingress IP in the summary:\n${summary}`);
    assert.equal(summary.match(/^ {2}pod web-\d/gm)?.length, 3);

    const client = new KubeClient({ connection: await loadConnection({ kubeconfig }) });
    try {
      const pods = (await client.list(resources.pods, { namespace: 'demo' })).items;
      const running = pods.filter(
        (p) =>
          (p.status as { phase?: string; podIP?: string }).phase === 'Running' &&
          (p.status as { podIP?: string }).podIP,
      );
      assert.equal(running.length, 3, JSON.stringify(pods.map((p) => p.status)));
      const svc = await client.get(resources.services, 'web', 'demo');
      assert.equal((svc.spec as { type: string }).type, 'LoadBalancer');
      const ingress = (svc.status as { loadBalancer?: { ingress?: { ip: string }[] } }).loadBalancer?.ingress ?? [];
      assert.deepEqual(
        ingress.map((i) => i.ip),
        [ingressInSummary],
      );
      for (const p of running)
        assert.ok(
          summary.includes((p.status as { podIP: string }).podIP),
          `pod ${p.metadata.name} missing from the summary`,
        );
    } finally {
      await client.close();
    }

    proc.kill('SIGTERM');
    const exit = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref()),
    ]);
    assert.notEqual(exit, 'hung', `raven dev did not stop within 10 s of SIGTERM:\n${stderr}`);
    assert.deepEqual(exit, { code: 0, signal: null }, stderr);
    // tsx may have started an esbuild service (a file not in its cache); it ends by itself once its parent's pipe
    // closes, a moment after the parent.
    const pgid = proc.pid!;
    await waitFor("no process left in raven dev's group", () => !groupAlive(pgid), { timeoutMs: 3_000 }).catch(() => {
      assert.fail(`a process of raven dev outlived it:\n${groupProcesses(pgid)}`);
    });
  });
});
