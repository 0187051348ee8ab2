/**
 * The compiled runtime: Raven bundled with `bundleRaven` (what `npm run build` writes to dist/raven/) into a directory
 * laid out as the container image is — dist/raven/, bin/raven.js and package.json, no node_modules at all — runs
 * `raven --version` and wires a pod with `raven run`, and loads no TypeScript source, nothing of tsx and no package
 * from node_modules (a module hook records every module it loads). The product's bundle holds nothing of packages/
 * (the API server, the simulators, the development tools), and its production install (`npm ci --omit=dev
 * --workspaces=false`) none of their dependencies. bin/raven.js says what to do without a build, runs the development
 * tools' bundle (dist/raven-dev/) when there is one, and in a checkout runs the sources through tsx when a source is
 * newer than the build.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
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
import type { Metafile } from 'esbuild';
import { bundleRaven } from '../../scripts/bundle.ts';
import { cleanEnv } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';
import { podBody, ravenSettings, startEnv, type Env } from './raven/support.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every module URL the process loaded through the ES module loader. */
  loaded: string[];
}

/** A directory with bin/raven.js and package.json; with `nodeModules`, the checkout's node_modules linked in. */
function layout({ nodeModules = false } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'raven-compiled-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(repo, 'bin/raven.js'), join(dir, 'bin/raven.js'));
  copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
  if (nodeModules) symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
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

/** Everything loaded came from `dir`'s bundle, dist/raven/: no TypeScript, no tsx, no package of node_modules. */
function assertBundledOnly(run: Run, dir: string): void {
  const files = run.loaded.filter((u) => u.startsWith('file:'));
  assert.ok(
    files.some((u) => u.endsWith('/dist/raven/cli.js')),
    `the bundled CLI was not loaded: ${files.slice(0, 5).join(', ')}`,
  );
  assert.deepEqual(
    files.filter((u) => !fileURLToPath(u).startsWith(join(dir, 'dist/raven/')) && !u.endsWith('/bin/raven.js')),
    [],
    'modules loaded from outside the bundle',
  );
}

/** What the image must not hold: the packages of packages/, and the dependencies only they have. */
const devOnly = /(^|\/)packages\/|node_modules\/(selfsigned|@bufbuild\/protobuf)\//;

describe('the compiled runtime, laid out as the image', { timeout: 180_000 }, () => {
  let image: string;
  let env: Env;
  let product: Metafile;

  before(async () => {
    image = layout();
    product = await bundleRaven(join(image, 'dist/raven'));
    env = await startEnv(15_150);
  });
  after(async () => {
    await env.stop();
    rmSync(image, { recursive: true, force: true });
  });

  it('raven --version: the bundled CLI, without TypeScript, tsx or node_modules', async () => {
    const run = await raven(image, ['--version']);
    assert.equal(run.code, 0, run.stderr);
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
    assert.equal(run.stdout.trim(), version);
    assertBundledOnly(run, image);
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
    assertBundledOnly(run, image);
  });

  it('without a build, raven says to run npm run build; an unknown RAVEN_RUNTIME is refused', async () => {
    const bare = layout();
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
    const checkout = layout({ nodeModules: true });
    try {
      symlinkSync(join(repo, 'src'), join(checkout, 'src'));
      symlinkSync(join(image, 'dist'), join(checkout, 'dist'));
      const cli = join(image, 'dist/raven/cli.js');
      utimesSync(cli, new Date(), new Date(Date.now() + 3_600_000));
      const fresh = await raven(checkout, ['--version']);
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.ok(
        fresh.loaded.some((u) => u.endsWith('/dist/raven/cli.js')) && !fresh.loaded.some((u) => u.endsWith('.ts')),
      );
      utimesSync(cli, new Date(0), new Date(0));
      const stale = await raven(checkout, ['--version']);
      assert.equal(stale.code, 0, stale.stderr);
      assert.ok(
        stale.loaded.some((u) => u.endsWith('/src/daemon/cli.ts')),
        'the sources were not run',
      );
      assert.ok(!stale.loaded.some((u) => u.endsWith('/dist/raven/cli.js')), 'the old build was run');
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });

  it('the product bundle: nothing of packages/; raven dev, sim and apiserver say where they are', async () => {
    const inputs = Object.keys(product.inputs);
    assert.ok(
      inputs.some((file) => file.endsWith('src/daemon/cli.ts')),
      inputs.slice(0, 5).join(', '),
    );
    assert.deepEqual(
      inputs.filter((file) => devOnly.test(file)),
      [],
      'the product bundle holds development tools',
    );
    for (const args of [['dev'], ['sim', 'openstack', '--port', '0'], ['apiserver', '--help']]) {
      const run = await raven(image, args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `^raven: error \\[DEV_TOOLS_ABSENT\\]: raven ${args[0]} is part of the development tools: run it from a source checkout \\(npm ci && npm run build\\)`,
        ),
      );
      assertBundledOnly(run, image);
    }
  });

  it("the development tools' bundle: what bin/raven.js runs when it is there, the product's commands and theirs", async () => {
    const checkout = layout();
    try {
      mkdirSync(join(checkout, 'dist'));
      symlinkSync(join(image, 'dist/raven'), join(checkout, 'dist/raven'));
      const dev = await bundleRaven(join(checkout, 'dist/raven-dev'), { dev: true });
      assert.ok(Object.keys(dev.inputs).some((file) => file.startsWith('packages/apiserver/src/')));
      const run = await raven(checkout, ['--help']);
      assert.equal(run.code, 0, run.stderr);
      for (const command of ['run', 'plan', 'gc', 'node', 'dev', 'apiserver', 'sim'])
        assert.match(run.stdout, new RegExp(`^  ${command} `, 'm'), command);
      assert.ok(
        run.loaded.some((u) => u.endsWith('/dist/raven-dev/cli.js')),
        'the development bundle was not run',
      );
      assert.ok(!run.loaded.some((u) => u.endsWith('/dist/raven/cli.js')), 'the product bundle was run');
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });

  it("the product's production install (npm ci --omit=dev --workspaces=false): no dependency of packages/", () => {
    const dir = mkdtempSync(join(tmpdir(), 'raven-install-'));
    try {
      copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
      copyFileSync(join(repo, 'package-lock.json'), join(dir, 'package-lock.json'));
      const npm = spawnSync(
        'npm',
        ['ci', '--omit=dev', '--workspaces=false', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
        { cwd: dir, encoding: 'utf8', timeout: 120_000 },
      );
      assert.equal(npm.status, 0, `${npm.error?.message ?? ''} ${npm.stderr}`);
      // What `raven run` needs is there; what only the packages need is not.
      for (const name of ['commander', 'pino', 'zod']) assert.ok(existsSync(join(dir, 'node_modules', name)), name);
      for (const name of ['@bufbuild/protobuf', 'selfsigned', '@raven/apiserver', '@raven/dev'])
        assert.ok(!existsSync(join(dir, 'node_modules', name)), `${name} is installed`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
