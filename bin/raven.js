#!/usr/bin/env node
// The `raven` command. It runs a bundle `npm run build` writes: dist/raven-dev/ (the product's commands and the
// development tools', packages/dev) when there is one, as in a checkout, else dist/raven/ (the product alone: what the
// container image ships and runs). In a checkout it runs the TypeScript sources through tsx instead when there is no
// build or a source is newer than it, so `npm start` works on a fresh clone and an edit is never shadowed by an old
// build. RAVEN_RUNTIME=dist or tsx forces one; RAVEN_RUNTIME=product runs dist/raven/ even in a checkout, as the image
// does.
import { existsSync, readdirSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const forced = process.env.RAVEN_RUNTIME;
const devBuild = new URL('dist/raven-dev/cli.js', root);
const built = forced !== 'product' && existsSync(devBuild) ? devBuild : new URL('dist/raven/cli.js', root);
const sources = new URL('src/', root);
const packages = new URL('packages/', root);
const devEntry = new URL('packages/dev/src/cli.ts', root);

function fail(message) {
  process.stderr.write(`raven: ${message}\n`);
  process.exit(2);
}

/** The newest mtime of the sources `npm run build` bundles: src/ and each package's src/ (tests are not bundled). */
function newestSourceMs() {
  const dirs = [sources];
  if (existsSync(packages))
    for (const name of readdirSync(packages)) {
      const dir = new URL(`${name}/src/`, packages);
      if (existsSync(dir)) dirs.push(dir);
    }
  let newest = 0;
  for (const dir of dirs)
    for (const file of readdirSync(dir, { recursive: true })) {
      if (file.endsWith('.ts') && !file.endsWith('.test.ts'))
        newest = Math.max(newest, statSync(new URL(file, dir)).mtimeMs);
    }
  return newest;
}

function runtime() {
  if (forced === 'dist' || forced === 'tsx') return forced;
  if (forced === 'product') return 'dist';
  if (forced)
    fail(
      `RAVEN_RUNTIME is "${forced}": use dist (the build) or tsx (the sources), product (the image's build), or unset it`,
    );
  if (!existsSync(sources)) return 'dist';
  if (!existsSync(built)) return 'tsx';
  return newestSourceMs() > statSync(built).mtimeMs ? 'tsx' : 'dist';
}

let main;
if (runtime() === 'dist') {
  if (!existsSync(built))
    fail('no build in dist/: run `npm run build` (in a checkout, `RAVEN_RUNTIME=tsx` runs the sources)');
  ({ main } = await import(built.href));
} else {
  if (!existsSync(sources)) fail('RAVEN_RUNTIME=tsx, but there are no sources here (src/): unset it to run dist/');
  const tsx = await import('tsx/esm/api').catch(() =>
    fail('tsx (a development dependency) is not installed: run `npm install`, or `npm run build` and run that'),
  );
  tsx.register();
  // The development tools' command when they are here (a checkout), else the product's.
  ({ main } = await import((existsSync(devEntry) ? devEntry : new URL('daemon/cli.ts', sources)).href));
}
await main(process.argv);
