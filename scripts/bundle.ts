import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = new URL('../', import.meta.url);

/** CommonJS modules inside (pino, yaml, prom-client) call require(): an ESM bundle gives them one. */
const requireShim =
  "import { createRequire as __ravenRequire } from 'node:module'; const require = __ravenRequire(import.meta.url);";

/**
 * Bundles the `raven` command (src/daemon/cli.ts) into `outDir`: `cli.js` and the chunks its `import()`s load on
 * demand, so `raven run` never loads the API server or the simulators. What `bin/raven.js` runs and the image ships:
 * one bundle with only the parts of zod, pino and prom-client Raven calls holds several MB less than the 430 modules
 * `raven run` reaches (docs/decisions.md §12). Not minified: stack traces keep their names and lines. Development
 * packages stay imports, so the compiled test, which runs the bundle without node_modules, fails if one is needed.
 */
export async function bundleRaven(outDir: string): Promise<void> {
  const pkg = JSON.parse(readFileSync(new URL('package.json', repo), 'utf8')) as {
    devDependencies?: Record<string, string>;
  };
  await build({
    entryPoints: [fileURLToPath(new URL('src/daemon/cli.ts', repo))],
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: Object.keys(pkg.devDependencies ?? {}),
    banner: { js: requireShim },
    legalComments: 'none',
    logLevel: 'warning',
  });
}
