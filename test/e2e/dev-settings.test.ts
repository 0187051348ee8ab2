/**
 * `raven dev` as a new user meets it: `raven plan` and `raven gc` run beside it without retyping its settings (it
 * keeps them in .raven/dev/config.yaml while it runs), without Node warnings; `raven gc` elsewhere needs only the
 * cluster's id and where the cluster and the cloud are; its service ranges are a flag, as the
 * pods' (two ranges: dual-stack Services); and on a terminal its logs are readable lines that keep the banner in view.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from '../support/node-test.ts';
import { KubeClient, loadConnection, resources } from '../../src/kube/client/index.ts';
import { cleanEnv, ravenBin, spawnRaven, type RavenChild } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

/** Sends SIGTERM to `child`'s process group and waits (bounded) for it to exit. */
async function stop(child: { pid?: number | undefined }, exited: Promise<unknown>): Promise<unknown> {
  if (child.pid === undefined) return undefined;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return undefined; // gone already
  }
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000).unref());
  const result = await Promise.race([exited, hung]);
  if (result === 'hung') process.kill(-child.pid, 'SIGKILL');
  return result;
}

describe('raven dev, beside it raven plan and raven gc', { timeout: 90_000 }, () => {
  let dir: string | undefined;
  let child: RavenChild | undefined;
  after(async () => {
    if (child) await stop(child.proc, child.exited);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('plan and gc find its settings (and say so), print no Node warning; dual-stack Services from --service-subnet-cidrs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-dev-settings-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const raven = spawnRaven(
      [
        'dev',
        '--api-port',
        '0',
        '--kubeconfig-out',
        kubeconfig,
        '--service-subnet-cidrs',
        '10.96.0.0/12,fd00:10:96::/112',
      ],
      { cwd: dir, env: cleanEnv({ RAVEN_LOG_LEVEL: 'warn' }), detached: true },
    );
    child = raven;
    const settingsFile = join(dir, '.raven/dev/config.yaml');
    await waitFor(
      'the banner and the settings file',
      () => {
        if (raven.proc.exitCode !== null) assert.fail(`raven dev exited:\n${raven.stdout}\n${raven.stderr}`);
        return raven.stdout.includes('Press Ctrl-C') && existsSync(settingsFile);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.match(raven.stdout, /raven plan; raven gc/);
    assert.match(readFileSync(settingsFile, 'utf8'), /^# raven dev's settings while it runs/);

    // As a user types them: no settings at all, in raven dev's directory.
    const env = cleanEnv();
    const plan = await run(process.execPath, [ravenBin, 'plan', '--timeout', '30'], { cwd: dir, env, timeout: 45_000 });
    assert.match(plan.stdout, /^cluster dev: /);
    assert.match(plan.stderr, /raven plan: using the settings of raven dev in \.raven\/dev\/config\.yaml/);
    const gc = await run(process.execPath, [ravenBin, 'gc'], { cwd: dir, env, timeout: 45_000 });
    assert.match(gc.stdout, /orphan\(s\) of cluster dev; run with --yes/);
    assert.match(gc.stderr, /raven gc: using the settings of raven dev/);
    // Standalone, elsewhere: the cluster's id and where the cluster and the cloud are; no ranges (gc reads none).
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    const standalone = await run(
      process.execPath,
      [ravenBin, 'gc', '--cluster-id', 'dev', '--kubeconfig', kubeconfig, '--os-cloud', 'raven-sim'],
      { cwd: elsewhere, env: { ...env, OS_CLIENT_CONFIG_FILE: join(dir, '.raven/clouds.yaml') }, timeout: 45_000 },
    );
    assert.match(standalone.stdout, /orphan\(s\) of cluster dev; run with --yes/);
    for (const stderr of [plan.stderr, gc.stderr, standalone.stderr])
      assert.doesNotMatch(stderr, /Warning|MaxListeners/);

    const client = new KubeClient({ connection: await loadConnection({ kubeconfig }) });
    try {
      const svc = await client.create(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { ipFamilyPolicy: 'PreferDualStack', selector: { app: 'web' }, ports: [{ port: 80 }] },
      });
      const spec = svc.spec as { clusterIPs?: string[]; ipFamilies?: string[] };
      assert.deepEqual(spec.ipFamilies, ['IPv4', 'IPv6']);
      assert.match(spec.clusterIPs?.[1] ?? '', /^fd00:10:96::/);
    } finally {
      await client.close();
    }

    const exit = await stop(raven.proc, raven.exited);
    assert.deepEqual(exit, { code: 0, signal: null }, raven.stderr);
    assert.ok(!existsSync(settingsFile), 'the settings file outlived raven dev');
  });
});

describe('raven dev on a terminal', { timeout: 60_000 }, () => {
  it('logs readable lines, not JSON, around its banner', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-dev-tty-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // util-linux `script` runs it on a pseudo-terminal, as a shell in a terminal window does.
    const command = `exec ${process.execPath} ${ravenBin} dev --api-port 0 --kubeconfig-out ${join(dir, 'kubeconfig')}`;
    const proc = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: dir,
      env: cleanEnv({ RAVEN_LOG_LEVEL: 'info' }),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    t.after(() => stop(proc, exited));
    await waitFor('the banner', () => out.includes('Press Ctrl-C'), { timeoutMs: 30_000, intervalMs: 100 }).catch(() =>
      assert.fail(`no banner:\n${out}`),
    );
    const logLines = out.split(/\r?\n/).filter((l) => /^\d\d:\d\d:\d\d\.\d{3} (INFO|WARN|ERROR) /.test(l));
    assert.ok(logLines.length > 0, `no readable log line:\n${out}`);
    assert.doesNotMatch(out, /^\{"level":/m);
  });
});
