import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

// The sources, from src/daemon and from the compiled dist/daemon alike (bundling needs esbuild: a checkout's).
const cniDir = fileURLToPath(new URL('../../src/cni/', import.meta.url));

/** The file beside `raven-cni` that holds the whole plugin; the entry imports it only when it does the work itself. */
const PLUGIN_MODULE = 'raven-cni-plugin.mjs';

/** CommonJS modules inside (yaml, https-proxy-agent) call require(): an ESM bundle gives them one. */
const requireShim =
  "import { createRequire as __ravenRequire } from 'node:module'; const require = __ravenRequire(import.meta.url);";

/**
 * Bundles raven-cni into two files in `dir` (what a node installs in /opt/cni/bin): `raven-cni`, the executable entry,
 * small, and `raven-cni-plugin.mjs`, the whole plugin. A runtime starts the plugin once per pod sandbox: through tsx
 * the sources cost about a second of start-up each time; the entry alone, which is all a call forwarded to
 * `raven node` loads, costs little more than Node.js itself (docs/cni.md). esbuild is a development dependency: only
 * `npm run build`, `raven dev --dataplane` and the tests bundle.
 */
export async function bundleRavenCni(dir: string): Promise<void> {
  const { build } = await import('esbuild');
  await mkdir(dir, { recursive: true });
  const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true } as const;
  // The entry's `import('./main.ts')` becomes an import of the plugin file beside it at run time.
  const pluginBeside: Plugin = {
    name: 'raven-cni-plugin-beside',
    setup(b) {
      b.onResolve({ filter: /^\.\/main\.ts$/ }, () => ({ path: `./${PLUGIN_MODULE}`, external: true }));
    },
  };
  const entry = join(dir, 'raven-cni');
  await Promise.all([
    build({
      ...common,
      stdin: { contents: `import { runEntry } from './entry.ts';\nawait runEntry();\n`, resolveDir: cniDir },
      outfile: entry,
      plugins: [pluginBeside],
      banner: { js: '#!/usr/bin/env node' },
      logLevel: 'warning',
    }),
    build({
      ...common,
      entryPoints: [join(cniDir, 'main.ts')],
      outfile: join(dir, PLUGIN_MODULE),
      banner: { js: requireShim },
      legalComments: 'none',
      logLevel: 'warning',
    }),
  ]);
  await chmod(entry, 0o755);
}
