/**
 * Raven as a child process, for the SIGKILL tests: `raven run` minus the CLI. The settings come from the environment
 * (`RAVEN_*`), the kubeconfig from `RAVEN_TEST_KUBECONFIG`, the cloud from `OS_CLIENT_CONFIG_FILE` + `OS_CLOUD`.
 * `RAVEN_TEST_LEASE=<lease>,<renew deadline>,<retry period>` (seconds, fractions allowed) sets the leader-election
 * timings, which have no environment variable. Prints `ready <ops url>` once its ops server listens; SIGTERM stops it
 * cleanly (the tests use SIGKILL).
 */
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { createLogger } from '../../../src/daemon/logger.ts';
import { runRaven } from '../../../src/daemon/run-raven.ts';

const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k.startsWith('RAVEN_') && !k.startsWith('RAVEN_TEST_')),
);
const kubeconfig = process.env.RAVEN_TEST_KUBECONFIG;
if (!kubeconfig) throw new Error('RAVEN_TEST_KUBECONFIG is not set');
const lease = process.env.RAVEN_TEST_LEASE?.split(',').map(Number);
if (lease && (lease.length !== 3 || lease.some((n) => !(n > 0))))
  throw new Error(`RAVEN_TEST_LEASE must be three positive numbers: ${process.env.RAVEN_TEST_LEASE}`);
const config = loadRavenConfig({
  env,
  flags: {
    kubernetes: { kubeconfig },
    ...(lease
      ? {
          leaderElection: {
            leaseDurationSeconds: lease[0]!,
            renewDeadlineSeconds: lease[1]!,
            retryPeriodSeconds: lease[2]!,
          },
        }
      : {}),
  },
});
const logger = createLogger(config.logLevel);
const abort = new AbortController();
process.on('SIGTERM', () => abort.abort());
await runRaven({ config, logger, onListening: (url) => process.stdout.write(`ready ${url}\n`) }, abort.signal);
