/**
 * Raven as a child process, for the SIGKILL test: `raven run` minus the CLI. The settings come from the environment
 * (`RAVEN_*`), the kubeconfig from `RAVEN_TEST_KUBECONFIG`, the cloud from `OS_CLIENT_CONFIG_FILE` + `OS_CLOUD`.
 * Prints `ready` once its ops server listens; SIGTERM stops it cleanly (the test uses SIGKILL).
 */
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { createLogger } from '../../../src/daemon/logger.ts';
import { runRaven } from '../../../src/daemon/run-raven.ts';

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('RAVEN_') && k !== 'RAVEN_TEST_KUBECONFIG'));
const kubeconfig = process.env.RAVEN_TEST_KUBECONFIG;
if (!kubeconfig) throw new Error('RAVEN_TEST_KUBECONFIG is not set');
const config = loadRavenConfig({ env, flags: { kubernetes: { kubeconfig } } });
const logger = createLogger(config.logLevel);
const abort = new AbortController();
process.on('SIGTERM', () => abort.abort());
await runRaven({ config, logger, onListening: () => process.stdout.write('ready\n') }, abort.signal);
