import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { BUILT_ASSETS_DIR, bundleTopologyUi } from '../src/dashboard/index.ts';

const repo = new URL('../', import.meta.url);

/** CommonJS modules inside (pino, yaml, prom-client) call require(): an ESM bundle gives them one. */
const requireShim =
  "import { createRequire as __ravenRequire } from 'node:module'; const require = __ravenRequire(import.meta.url);";

interface PackageJson {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const readPackage = (url: URL): PackageJson => JSON.parse(readFileSync(url, 'utf8')) as PackageJson;

/**
 * What stays an import: the root's development packages (tsx, esbuild, …), less the workspace packages of packages/
 * and what they depend on (`@bufbuild/protobuf` is a development package of the root for its scripts, and a
 * dependency the API server's code bundles).
 */
function externals(): string[] {
  const inside = new Set<string>();
  for (const dir of readdirSync(new URL('packages/', repo))) {
    const pkg = readPackage(new URL(`packages/${dir}/package.json`, repo));
    for (const name of Object.keys(pkg.dependencies ?? {})) inside.add(name);
  }
  return Object.keys(readPackage(new URL('package.json', repo)).devDependencies ?? {}).filter(
    (name) => !name.startsWith('@raven/') && !inside.has(name),
  );
}

/**
 * Bundles the `raven` command into `outDir`: `cli.js` and the chunks its `import()`s load on demand, so `raven run`
 * never loads `plan`'s or raven-cni's code. By default the product (src/daemon/cli.ts: run, plan, gc, node): what the
 * image ships, one bundle with only the parts of zod, pino and prom-client Raven calls, several MB less than the 430
 * modules `raven run` reaches (docs/decisions.md §12). `dev: true` bundles the development tools' command instead
 * (packages/dev: the product's commands plus `dev`, `sim`, `apiserver`), what bin/raven.js runs in a checkout. Not
 * minified: stack traces keep their names and lines. Development packages stay imports, so the compiled test, which
 * runs the bundle without node_modules, fails if one is needed. Beside it, `topology-ui/`: the topology page bundled
 * (Preact and its code, minified), which the bundle serves from there. Returns esbuild's metafile: every input file.
 */
export async function bundleRaven(outDir: string, { dev = false }: { dev?: boolean } = {}): Promise<Metafile> {
  const entry = dev ? 'packages/dev/src/cli.ts' : 'src/daemon/cli.ts';
  const { metafile } = await build({
    entryPoints: [fileURLToPath(new URL(entry, repo))],
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: externals(),
    banner: { js: requireShim },
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  const ui = await bundleTopologyUi();
  const uiDir = join(outDir, BUILT_ASSETS_DIR);
  await mkdir(uiDir, { recursive: true });
  await Promise.all(
    (Object.entries(ui) as [string, string][]).map(([file, text]) => writeFile(join(uiDir, file), text)),
  );
  return metafile;
}
