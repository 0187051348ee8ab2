/**
 * Child-process entry: runs the OpenStack simulator (Keystone auth, no provisioning delay) on 127.0.0.1, port 0, so
 * the client being measured has the bench process's event loop to itself. Replies `{ type: 'ready', cloudsYaml }`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOpenStackSim } from '@raven/dev';

const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-bench-sim-')), 'clouds.yaml');
const sim = await runOpenStackSim({ port: 0, auth: 'keystone', provisioningDelayMs: 0, cloudsYamlOut });
process.send?.({ type: 'ready', cloudsYaml: cloudsYamlOut });
process.on('message', (m: { type?: string }) => {
  if (m.type === 'close') void sim.close().finally(() => process.exit(0));
});
process.on('disconnect', () => void sim.close().finally(() => process.exit(0)));
