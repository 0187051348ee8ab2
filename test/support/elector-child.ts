/**
 * Test fixture (not part of the public surface): runs one LeaderElector in its own process, so a test can SIGKILL a
 * leader that then never releases. Configuration comes in RAVEN_ELECTOR (JSON); prints `LEADING <identity>` when it
 * leads and `STOPPED` when it stops.
 */
import { KubeClient } from '../../src/kube/client/index.ts';
import { LeaderElector } from '../../src/controller/leader/elector.ts';

interface ChildConfig {
  server: string;
  ca: string;
  token: string;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

const config = JSON.parse(process.env.RAVEN_ELECTOR ?? '{}') as ChildConfig;
const client = new KubeClient({
  connection: {
    server: config.server,
    ca: config.ca,
    credentials: () => Promise.resolve({ kind: 'bearer', token: config.token }),
    source: 'test child',
  },
});
const elector = new LeaderElector({ client, ...config });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
await elector.run(stop.signal, {
  onStartedLeading: () => {
    process.stdout.write(`LEADING ${config.identity}\n`);
  },
  onStoppedLeading: () => {
    process.stdout.write('STOPPED\n');
  },
});
await client.close();
