#!/usr/bin/env node
// `raven-cni` from the TypeScript sources (through tsx): for development. A node installs the bundle `npm run build`
// writes (dist/raven-cni), which starts several times faster (docs/cni.md).
import { register } from 'tsx/esm/api';

register();
const { runEntry } = await import('../src/cni/entry.ts');
await runEntry();
