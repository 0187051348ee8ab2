import { readFile } from 'node:fs/promises';
import type { TopologyAssets } from './app.ts';

/** Beside the bundle that holds this module, `npm run build` writes the page's files here (scripts/build.ts). */
export const BUILT_ASSETS_DIR = 'topology-ui/';

const files = ['index.html', 'app.js', 'app.css'] as const;

/**
 * Bundles the page from its sources (`ui/`) with esbuild: Preact and the page's code in one minified script, its
 * stylesheet and its HTML. Used by `npm run build` and, in a checkout without a build, by `raven dev` on first request.
 */
export async function bundleTopologyUi(): Promise<TopologyAssets> {
  // A development package: only a checkout bundles the page; a build ships the result.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [new URL('ui/main.tsx', import.meta.url).pathname],
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  const js = result.outputFiles[0]?.text;
  if (js === undefined) throw new Error('esbuild wrote no bundle for the topology page');
  const [html, css] = await Promise.all(
    ['ui/index.html', 'ui/app.css'].map((f) => readFile(new URL(f, import.meta.url), 'utf8')),
  );
  return { 'index.html': html!, 'app.js': js, 'app.css': css! };
}

/**
 * The page's files: those `npm run build` wrote beside the running bundle, else (running from the sources) bundled now,
 * once. A build without them fails loudly at the first request, not with a blank page.
 */
export function topologyAssets(): () => Promise<TopologyAssets> {
  let loaded: Promise<TopologyAssets> | undefined;
  const load = async (): Promise<TopologyAssets> => {
    const dir = new URL(BUILT_ASSETS_DIR, import.meta.url);
    try {
      const texts = await Promise.all(files.map((f) => readFile(new URL(f, dir), 'utf8')));
      return Object.fromEntries(files.map((f, i) => [f, texts[i]])) as unknown as TopologyAssets;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return bundleTopologyUi();
    }
  };
  return () => {
    loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    return loaded;
  };
}
