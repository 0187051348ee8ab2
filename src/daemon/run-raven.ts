import type { Logger } from '../core/index.ts';
import type { KubeClient } from '../kube/client/index.ts';
import type { OpenStackSession } from '../openstack/index.ts';
import { composeRaven } from './compose.ts';
import type { RavenConfig } from './config/index.ts';
import { connect } from './connect.ts';

export interface RunRavenOptions {
  config: RavenConfig;
  logger: Logger;
  /**
   * A client and a session to use, and leave open, instead of those `config` describes: tests pass their own. Both
   * or neither.
   */
  client?: KubeClient;
  session?: OpenStackSession;
  /** Called once the ops server listens (before anything else starts), with its base URL. */
  onListening?: (opsUrl: string) => void;
}

/**
 * `raven run`: the controller. Connects to Kubernetes and OpenStack, composes Raven ({@link composeRaven}: informers,
 * controllers, garbage collector, `/healthz` `/readyz` `/metrics`) and runs it under its manager — with leader
 * election unless disabled — until `signal` aborts (SIGINT/SIGTERM: stop sources, drain, release the Lease, exit).
 * Rejects with `LEADER_LOST` when leadership is lost (exit and let the Deployment restart it).
 */
export async function runRaven(options: RunRavenOptions, signal: AbortSignal): Promise<void> {
  const { config, logger, client, session } = options;
  const connections = client && session ? { client, eventsClient: client, session } : await connect(config, logger);
  const raven = await composeRaven({ config, logger, connections, closeConnections: !(client && session) });
  options.onListening?.(raven.opsUrl);
  await raven.manager.start(signal);
}
