/**
 * Test fixture (not part of the public surface): a Manager with leader election whose controller stamps every
 * ConfigMap of a namespace with `raven.test/leader: <identity>`. `manager.test.ts` builds it in-process with
 * {@link leaderManager}; run as a script with its configuration in RAVEN_MANAGER (JSON), it runs one in its own
 * process, so a test can SIGKILL a leader that then never releases. It prints `READY <id>` once its caches synced,
 * `LEADING <id>` when it leads, `STOPPED` after a clean stop on SIGTERM (exit 0), `FAILED <code>` otherwise (exit 1).
 */
import { RavenError } from '../../src/core/index.ts';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { SharedInformerFactory } from '../../src/kube/cache/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import { Controller } from '../../src/controller/runtime/controller.ts';
import { Manager, type Runnable } from '../../src/controller/runtime/manager.ts';
import type { Reconciler } from '../../src/controller/runtime/result.ts';

export const LEADER_ANNOTATION = 'raven.test/leader';

export interface LeaderManagerOptions {
  client: KubeClient;
  namespace: string;
  lease: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Replaces the stamping reconcile. */
  reconcile?: Reconciler;
  /** Told `READY <id>` (a runnable for every replica) and `LEADING <id>` (a leader-only one). */
  announce?: (line: string) => void;
}

/** A runnable that calls `onStart`, then waits for its stop. */
function marker(name: string, onStart: () => void): Runnable {
  return {
    name,
    start: (signal) => {
      onStart();
      return new Promise((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    },
  };
}

export function leaderManager(o: LeaderManagerOptions): { manager: Manager; reconciles: () => number } {
  const informers = new SharedInformerFactory({ client: o.client, backoff: { initialMs: 20, maxMs: 200 } });
  const configmaps = informers.informerFor<KubeObject>(resources.configmaps, { namespace: o.namespace });
  let reconciles = 0;
  // Idempotent: our own patch comes back as an update, which then finds the stamp in place.
  const stamp: Reconciler = async (key, signal) => {
    const cm = configmaps.lister().get(key);
    if (!cm?.metadata.name || cm.metadata.annotations?.[LEADER_ANNOTATION] === o.identity) return;
    await o.client.patch(
      resources.configmaps,
      cm.metadata.name,
      o.namespace,
      { metadata: { annotations: { [LEADER_ANNOTATION]: o.identity } } },
      'merge',
      { signal },
    );
  };
  const reconcile = o.reconcile ?? stamp;
  const manager = new Manager({
    informers,
    leaderElection: {
      client: o.client,
      namespace: o.namespace,
      name: o.lease,
      identity: o.identity,
      leaseDurationMs: o.leaseDurationMs,
      renewDeadlineMs: o.renewDeadlineMs,
      retryPeriodMs: o.retryPeriodMs,
    },
    shutdownTimeoutMs: 5000,
  });
  manager.add(
    new Controller({
      name: 'stamp',
      for: configmaps,
      reconcile: (key, signal) => {
        reconciles++;
        return reconcile(key, signal);
      },
    }),
  );
  const { announce } = o;
  if (announce) {
    manager.add(
      marker('ready', () => announce(`READY ${o.identity}`)),
      { leaderOnly: false },
    );
    manager.add(marker('leading', () => announce(`LEADING ${o.identity}`)));
  }
  return { manager, reconciles: () => reconciles };
}

interface ChildConfig extends Omit<LeaderManagerOptions, 'client' | 'reconcile' | 'announce'> {
  server: string;
  ca: string;
  token: string;
}

if (process.env.RAVEN_MANAGER) {
  const config = JSON.parse(process.env.RAVEN_MANAGER) as ChildConfig;
  const client = new KubeClient({
    connection: {
      server: config.server,
      ca: config.ca,
      credentials: () => Promise.resolve({ kind: 'bearer', token: config.token }),
      source: 'test child',
    },
  });
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const { manager } = leaderManager({ ...config, client, announce: print });
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort());
  let code = 0;
  try {
    await manager.start(stop.signal);
    print('STOPPED');
  } catch (err) {
    print(`FAILED ${err instanceof RavenError ? err.code : String(err)}`);
    code = 1;
  }
  await client.close();
  process.exit(code);
}
