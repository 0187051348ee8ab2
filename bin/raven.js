#!/usr/bin/env node
// The `raven` command: runs the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/daemon/index.ts');
await main(process.argv);
