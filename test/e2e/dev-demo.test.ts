/**
 * `raven dev --demo` as a user runs it: a child process in an empty directory, with the OpenStack simulator. It
 * prints a summary once the demo converged; the Kubernetes API (through the kubeconfig it wrote) then shows three
 * Running pods with IPs and a LoadBalancer Service with a floating IP from the simulated `public` network; SIGTERM
 * ends it cleanly (exit 0, nothing left in its process group).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from '../support/node-test.ts';
import { KubeClient, loadConnection, resources } from '../../src/kube/client/index.ts';
import { cleanEnv, spawnRaven, type RavenChild } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';

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
  let child: RavenChild | undefined;
  after(async () => {
    if (child?.proc.pid && groupAlive(child.proc.pid)) process.kill(-child.proc.pid, 'SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('converges (3 Running pods, an ACTIVE load balancer with 3 members, an ingress IP), prints a summary, and stops cleanly on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-dev-demo-'));
    const kubeconfig = join(dir, 'kubeconfig');
    // Its own process group: after it exits, nothing it started may be left in that group.
    const raven = spawnRaven(
      ['dev', '--demo', '--demo-timeout', '15', '--api-port', '0', '--kubeconfig-out', kubeconfig],
      { cwd: dir, env: cleanEnv({ RAVEN_LOG_LEVEL: 'warn' }), detached: true },
    );
    child = raven;
    const { proc, exited } = raven;

    const summary = await waitFor(
      'the demo summary',
      () => {
        if (proc.exitCode !== null)
          assert.fail(`raven dev exited (${proc.exitCode}) before the summary:\n${raven.stdout}\n${raven.stderr}`);
        if (raven.stderr.includes('raven dev --demo:'))
          assert.fail(`the demo did not converge:\n${raven.stdout}\n${raven.stderr}`);
        const at = raven.stdout.indexOf('Demo ready in');
        return at >= 0 && raven.stdout.includes('Try: kubectl -n demo', at) ? raven.stdout.slice(at) : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    assert.match(raven.stdout, /demo: pods Running with IPs: 3\/3/);
    assert.match(raven.stdout, /demo: pool members: 3\/3/);
    assert.match(raven.stdout, /floating IPs: +network public, 203\.0\.113\.0\/24/);
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
    assert.notEqual(exit, 'hung', `raven dev did not stop within 10 s of SIGTERM:\n${raven.stderr}`);
    assert.deepEqual(exit, { code: 0, signal: null }, raven.stderr);
    // tsx may have started an esbuild service (a file not in its cache); it ends by itself once its parent's pipe
    // closes, a moment after the parent.
    const pgid = proc.pid!;
    await waitFor("no process left in raven dev's group", () => !groupAlive(pgid), { timeoutMs: 3_000 }).catch(() => {
      assert.fail(`a process of raven dev outlived it:\n${groupProcesses(pgid)}`);
    });
  });
});
