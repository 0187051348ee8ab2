import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../core/index.ts';
import { openNodeConnections, ravenEntryOfConflist, serveNodeDaemon } from '../cni/index.ts';

export interface RunNodeOptions {
  /** The node's CNI configuration list: raven-cni's entry gives the credentials and the socket. */
  conflist: string;
  /** Overrides the entry's `daemonSocket`. */
  socket?: string | undefined;
  logger: Logger;
}

/**
 * `raven node`: the daemon half of raven-cni on one node. Reads raven-cni's entry from the node's conflist, opens the
 * node's Kubernetes and Neutron connections once, and serves the plugin's forwarded calls on the unix socket until
 * `signal` aborts.
 */
export async function runNode(options: RunNodeOptions, signal: AbortSignal): Promise<void> {
  const conf = ravenEntryOfConflist(await readFile(options.conflist, 'utf8'), options.conflist);
  const socketPath = options.socket ?? conf.daemonSocket;
  if (!socketPath)
    throw new Error(`${options.conflist}: raven-cni's entry has no daemonSocket, and --socket is not given`);
  await mkdir(dirname(socketPath), { recursive: true, mode: 0o700 });
  const connections = await openNodeConnections(conf);
  const log = options.logger.child({ component: 'raven-node' });
  await serveNodeDaemon(
    {
      socketPath,
      connections,
      log: ({ msg, level, ...rest }) =>
        level === 'error' ? log.error(rest, String(msg)) : log.info(rest, String(msg)),
    },
    signal,
  );
}
