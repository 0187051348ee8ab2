/**
 * The compiled runtime: Raven built with `compileRaven` (what `npm run build` runs) into a directory laid out as the
 * container image is — dist/, bin/raven.js, package.json and node_modules without tsx, TypeScript or esbuild — runs
 * `raven --version` and wires a pod with `raven run`, and loads no TypeScript source and nothing of tsx (a module hook
 * records every module it loads). bin/raven.js says what to do without a build, and in a checkout runs the sources
 * through tsx when a source is newer than the build.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from '../support/node-test.ts';
import { resources } from '../../src/kube/client/index.ts';
import { VIF_ANNOTATION } from '../../src/reconcilers/index.ts';
import { compileRaven } from '../../scripts/compile.ts';
import { cleanEnv } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';
import { podBody, ravenSettings, startEnv, type Env } from './raven/support.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
/**
 * What the image's `npm ci --omit=dev` leaves out and could make Raven work by accident: every entry of node_modules
 * that holds only development packages by the lockfile (tsx, TypeScript, esbuild, undici …), and `.bin`.
 */
function developmentOnly(): Set<string> {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const devOnly = new Map<string, boolean>();
  for (const [path, info] of Object.entries(lock.packages)) {
    const top = /^node_modules\/(@[^/]+\/[^/]+|[^/]+)$/.exec(path)?.[1];
    if (top === undefined) continue;
    const entry = top.split('/')[0]!;
    devOnly.set(entry, (devOnly.get(entry) ?? true) && info.dev === true);
  }
  return new Set(['.bin', ...[...devOnly].filter(([, dev]) => dev).map(([entry]) => entry)]);
}
const devPackages = developmentOnly();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every module URL the process loaded through the ES module loader. */
  loaded: string[];
}

/** A directory with bin/raven.js and package.json, and node_modules linked entry by entry (minus `excluded`). */
function layout(excluded: ReadonlySet<string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'raven-compiled-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(repo, 'bin/raven.js'), join(dir, 'bin/raven.js'));
  copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'node_modules'));
  for (const entry of readdirSync(join(repo, 'node_modules')))
    if (!excluded.has(entry)) symlinkSync(join(repo, 'node_modules', entry), join(dir, 'node_modules', entry));
  // A loader hook that writes down each module loaded (hooks run on their own thread in Node 20).
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function load(url, context, next) { appendFileSync(${JSON.stringify(join(dir, 'loaded.txt'))}, url + '\\n'); return next(url, context); }\n`,
  );
  writeFileSync(
    join(dir, 'record-loads.mjs'),
    `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
  );
  return dir;
}

/** `node bin/raven.js …` in `dir`; `until` (optional) runs while it does, then it gets SIGTERM. */
async function raven(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  until?: () => Promise<void>,
): Promise<Run> {
  rmSync(join(dir, 'loaded.txt'), { force: true });
  const child = spawn(
    process.execPath,
    ['--import', join(dir, 'record-loads.mjs'), join(dir, 'bin/raven.js'), ...args],
    { cwd: dir, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  if (until) {
    try {
      await Promise.race([until(), exited.then(() => Promise.reject(new Error(`raven exited: ${stderr}`)))]);
    } finally {
      child.kill('SIGTERM');
    }
  }
  const code = await exited;
  let loaded: string[] = [];
  try {
    loaded = readFileSync(join(dir, 'loaded.txt'), 'utf8').split('\n').filter(Boolean);
  } catch {
    // nothing loaded through the hook
  }
  return { code, stdout, stderr, loaded };
}

/** Nothing of TypeScript or tsx was loaded, and Raven's own modules came from `dir`'s compiled dist/. */
function assertCompiledOnly(run: Run, dir: string): void {
  const typescript = run.loaded.filter((u) => /\.[cm]?ts$/.test(u) || u.includes('/node_modules/tsx/'));
  assert.deepEqual(typescript, [], 'TypeScript sources or tsx were loaded');
  const ours = run.loaded.filter((u) => u.startsWith('file:') && !u.includes('/node_modules/'));
  assert.ok(
    ours.some((u) => u.endsWith('/dist/daemon/cli.js')),
    `the compiled CLI was not loaded: ${ours.slice(0, 5).join(', ')}`,
  );
  assert.deepEqual(
    ours.filter((u) => !fileURLToPath(u).startsWith(dir)),
    [],
    'modules loaded from outside the image layout',
  );
}

describe('the compiled runtime, laid out as the image', { timeout: 180_000 }, () => {
  let image: string;
  let env: Env;

  before(async () => {
    image = layout(devPackages);
    await compileRaven(join(image, 'dist'), { typeCheck: false });
    env = await startEnv(15_150);
  });
  after(async () => {
    await env.stop();
    rmSync(image, { recursive: true, force: true });
  });

  it('raven --version: the compiled CLI, without TypeScript or tsx', async () => {
    const run = await raven(image, ['--version']);
    assert.equal(run.code, 0, run.stderr);
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
    assert.equal(run.stdout.trim(), version);
    assertCompiledOnly(run, image);
  });

  it('raven run wires a pod: its port in Neutron, its VIF annotation, a clean stop on SIGTERM', async () => {
    const namespace = 'default';
    const name = 'compiled-0';
    const run = await raven(
      image,
      ['run', '--kubeconfig', env.server.kubeconfig],
      { ...ravenSettings('compiled', 'shared'), OS_CLIENT_CONFIG_FILE: env.cloudsYaml, OS_CLOUD: 'raven-sim' },
      async () => {
        await env.client.create(resources.pods, podBody(namespace, name), { namespace });
        await waitFor(
          'the VIF annotation',
          async () => (await env.client.get(resources.pods, name, namespace)).metadata.annotations?.[VIF_ANNOTATION],
          { timeoutMs: 60_000 },
        );
      },
    );
    assert.equal(run.code, 0, run.stderr);
    const pod = await env.client.get(resources.pods, name, namespace);
    const vif = JSON.parse(pod.metadata.annotations![VIF_ANNOTATION]!) as { portId: string };
    const port = await env.neutron.ports.get(vif.portId);
    assert.equal(port.device_id, pod.metadata.uid);
    assertCompiledOnly(run, image);
  });

  it('without a build, raven says to run npm run build; an unknown RAVEN_RUNTIME is refused', async () => {
    const bare = layout(devPackages);
    try {
      const run = await raven(bare, ['--version']);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /^raven: no build in dist\/: run `npm run build`/);
      const wrong = await raven(image, ['--version'], { RAVEN_RUNTIME: 'bun' });
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /^raven: RAVEN_RUNTIME is "bun": use dist \(the build\) or tsx \(the sources\)/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('in a checkout, the build when it is the newest, else the sources through tsx', async () => {
    const checkout = layout(new Set(['.bin']));
    try {
      symlinkSync(join(repo, 'src'), join(checkout, 'src'));
      symlinkSync(join(image, 'dist'), join(checkout, 'dist'));
      const cli = join(image, 'dist/daemon/cli.js');
      utimesSync(cli, new Date(), new Date(Date.now() + 3_600_000));
      const fresh = await raven(checkout, ['--version']);
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.ok(
        fresh.loaded.some((u) => u.endsWith('/dist/daemon/cli.js')) && !fresh.loaded.some((u) => u.endsWith('.ts')),
      );
      utimesSync(cli, new Date(0), new Date(0));
      const stale = await raven(checkout, ['--version']);
      assert.equal(stale.code, 0, stale.stderr);
      assert.ok(
        stale.loaded.some((u) => u.endsWith('/src/daemon/cli.ts')),
        'the sources were not run',
      );
      assert.ok(!stale.loaded.some((u) => u.endsWith('/dist/daemon/cli.js')), 'the old build was run');
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});
