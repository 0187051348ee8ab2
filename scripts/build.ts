// `npm run build`: dist/raven/ holds the product's `raven` command bundled (what the container image ships),
// dist/raven-dev/ the same with the development tools' commands (`raven dev`, `sim`, `apiserver`: what bin/raven.js
// runs in a checkout), dist/src/ the sources compiled module by module (what the benchmarks load in-process), and
// raven-cni bundled: dist/raven-cni (the executable) and dist/raven-cni-plugin.mjs (the plugin it loads when it does
// the work itself), both to install in /opt/cni/bin.
import { rm } from 'node:fs/promises';
import { bundleRavenCni } from '../src/daemon/cni-bundle.ts';
import { bundleRaven } from './bundle.ts';
import { compileRaven } from './compile.ts';

const started = performance.now();
// A source deleted since the last build must not leave its module behind.
await rm('dist', { recursive: true, force: true });
await compileRaven('dist');
await Promise.all([bundleRaven('dist/raven'), bundleRaven('dist/raven-dev', { dev: true }), bundleRavenCni('dist')]);
console.log(
  `build: dist/raven/ and dist/raven-dev/ (bundled), dist/src/ (compiled), dist/raven-cni and dist/raven-cni-plugin.mjs in ${Math.round(performance.now() - started)} ms`,
);
