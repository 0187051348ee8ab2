/**
 * Child-process entry: runs the OpenStack simulator (Keystone auth, no provisioning delay) on 127.0.0.1, port 0, so
 * the client being measured has the bench process's event loop to itself. Replies `{ type: 'ready', cloudsYaml }`.
 * Options (argv[2]): `linuxbridgeHosts`, the hosts whose ports bind as linuxbridge (for a rig that plugs them).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOpenStackSim } from '@raven/dev';

const { linuxbridgeHosts = [] } = JSON.parse(process.argv[2] ?? '{}') as { linuxbridgeHosts?: string[] };
const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-bench-sim-')), 'clouds.yaml');
const sim = await runOpenStackSim({
  port: 0,
  auth: 'keystone',
  provisioningDelayMs: 0,
  cloudsYamlOut,
  linuxbridgeHosts,
});
process.send?.({ type: 'ready', cloudsYaml: cloudsYamlOut });
process.on('message', (m: { type?: string }) => {
  if (m.type === 'close') void sim.close().finally(() => process.exit(0));
});
process.on('disconnect', () => void sim.close().finally(() => process.exit(0)));
