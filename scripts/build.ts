// `npm run build`: dist/raven-cni (the executable) and dist/raven-cni-plugin.mjs (the plugin it loads when it does
// the work itself), both to install in /opt/cni/bin.
import { bundleRavenCni } from '../src/daemon/cni-bundle.ts';

const started = performance.now();
await bundleRavenCni('dist');
console.log(`build: dist/raven-cni and dist/raven-cni-plugin.mjs in ${Math.round(performance.now() - started)} ms`);
