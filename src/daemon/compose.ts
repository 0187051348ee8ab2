import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { errorMessage, RavenError, realClock, type Clock, type Logger } from '../core/index.ts';
import { createTopologyApp, TOPOLOGY_PATH, topologyAssets } from '../dashboard/index.ts';
import { EventRecorder, listeningServer, Manager, type Runnable } from '../controller/index.ts';
import { SharedInformerFactory } from '../kube/cache/index.ts';
import { NeutronClient, OctaviaClient } from '../openstack/index.ts';
import {
  setupRavenModules,
  type Cloud,
  type ClusterNetworkSource,
  type GarbageCollectionLoop,
  type GarbageCollector,
} from '../reconcilers/index.ts';
import { ConfigError, type RavenConfig } from './config/index.ts';
import { VIF_KEY_MIN_BYTES } from '../kube/api/index.ts';
import { reconcilerConfig, servicesTranslated, type Connections } from './connect.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { OpenStackReadiness } from './openstack-readiness.ts';
import { listenOps } from './ops-server.ts';

export interface ComposeOptions {
  config: RavenConfig;
  logger: Logger;
  /** Closed when the manager stops (or if composing fails), unless `closeConnections` is false. */
  connections: Connections;
  /** False when the caller keeps using the connections afterwards (tests). Default true. */
  closeConnections?: boolean;
  /** Servers this process also runs (`raven dev`'s API server and OpenStack simulator): stopped last. */
  servers?: readonly Runnable[];
  /** More work for the same manager, run whoever leads (`raven dev`'s cluster simulator and demo). */
  alongside?: readonly Runnable[];
  clock?: Clock;
  /** False: no ops server (`raven plan`, which runs this composition on dry-run connections). Default true. */
  ops?: boolean;
  /** Serve the live topology view on the ops server whatever `ops.topology` says (`raven dev`). */
  topology?: boolean;
}

/** Raven, composed: start `manager`; the rest is for tests and `raven dev`'s banner. */
export interface ComposedRaven {
  manager: Manager;
  /** The ops server's base URL (`/healthz`, `/readyz`, `/metrics`); empty without one (`ops: false`). */
  opsUrl: string;
  /** The live topology page's URL; empty when it is not served. */
  topologyUrl: string;
  cluster: ClusterNetworkSource;
  /** The sweep alone (`raven gc` runs the same), and the loop that runs it with the port verification. */
  collector: GarbageCollector;
  gc: GarbageCollectionLoop;
  /** Where Events go (the manager flushes it on stop). */
  recorder: EventRecorder;
  metrics: Metrics;
}

/**
 * The composition root: one manager that owns start and stop, the clients, caches, Event recorder and metrics it
 * hands to the translation modules (`setupRavenModules`: each module wires its own controllers), the ops server, and
 * whatever the caller adds (servers, simulators). Nothing is half-built: once this returns, `manager.start(signal)`
 * runs it all.
 */
export async function composeRaven(options: ComposeOptions): Promise<ComposedRaven> {
  try {
    return await compose(options);
  } catch (err) {
    // Nothing runs yet: give back what was handed over (connections, listening servers) before failing.
    const now = AbortSignal.abort();
    await Promise.allSettled([
      ...(options.closeConnections === false ? [] : closeAll(options.connections)),
      ...(options.servers ?? []).map((server) => server.start(now, { hardStop: now })),
    ]);
    throw err;
  }
}

async function compose(options: ComposeOptions): Promise<ComposedRaven> {
  const { config, logger, connections } = options;
  const { client, eventsClient, session } = connections;
  const clock = options.clock ?? realClock;
  const metrics = createMetrics();
  const informers = new SharedInformerFactory({ client, logger: logger.child({ component: 'informers' }) });
  const recorder = new EventRecorder({ client: eventsClient, component: 'raven', clock, logger });
  const le = config.leaderElection;
  const identity = le.identity || `raven-${randomUUID()}`;
  const leaderElection = {
    client,
    namespace: le.namespace,
    name: le.name,
    identity,
    leaseDurationMs: le.leaseDurationSeconds * 1000,
    renewDeadlineMs: le.renewDeadlineSeconds * 1000,
    retryPeriodMs: le.retryPeriodSeconds * 1000,
  };
  const unreadyAfterMs = config.ops.unreadyAfterSeconds * 1000;
  const manager = new Manager({
    informers,
    recorder,
    logger,
    clock,
    informersUnreadyAfterMs: unreadyAfterMs,
    ...(le.enabled ? { leaderElection } : {}),
  });
  if (le.enabled) metrics.leaderElection(le.name, () => manager.isLeader());
  if (options.closeConnections !== false)
    manager.closeOnStop(async () => void (await Promise.all(closeAll(connections))));
  // Undone at the end also when the session is the caller's: it outlives this run.
  manager.closeOnStop(session.observe(metrics.openstack));
  for (const server of options.servers ?? []) manager.addServer(server);
  for (const runnable of options.alongside ?? []) manager.add(runnable, { leaderOnly: false });

  const cloud: Cloud = { neutron: new NeutronClient(session), octavia: new OctaviaClient(session) };
  const cloudReadiness = new OpenStackReadiness({ neutron: cloud.neutron, unreadyAfterMs, clock });
  manager.closeOnStop(session.observe(cloudReadiness.observe));
  manager.addReadyzCheck('openstack', cloudReadiness.check);

  const resyncEveryMs = config.resyncPeriodSeconds * 1000;
  const servicesOn = servicesTranslated(config);
  if (config.translations.services && !servicesOn)
    logger.warn({}, 'services are not translated: no serviceSubnet is configured');
  const modules = setupRavenModules(
    {
      manager,
      cloud,
      client,
      config: reconcilerConfig(config),
      recorder,
      controllerOptions: (workers) => ({ workers, recorder, metrics: metrics.provider, clock, logger, resyncEveryMs }),
      clock,
      logger,
    },
    informers,
    {
      translations: config.translations,
      servicesTranslated: servicesOn,
      collectLoadBalancers: config.translations.services,
      workers: config.workers,
      resyncEveryMs,
      gcIntervalSeconds: config.gc.intervalSeconds,
      vifKey: config.vif.keyFile === undefined ? undefined : await readVifKey(config.vif.keyFile),
    },
    metrics.raven,
  );
  metrics.raven.waiting(modules.waiting);
  const { cluster, collector, gc } = modules;

  if (options.ops === false) return { manager, opsUrl: '', topologyUrl: '', cluster, collector, gc, recorder, metrics };
  const topology =
    (options.topology ?? config.ops.topology)
      ? createTopologyApp({
          source: modules.topology,
          assets: topologyAssets(),
          token: await topologyToken(config.ops.topologyTokenFile),
          clock,
          logger: logger.child({ component: 'topology' }),
        })
      : undefined;
  const ops = await listenOps({
    host: config.ops.host,
    port: config.ops.port,
    health: manager.health,
    registry: metrics.registry,
    logger,
    topology,
  });
  manager.addServer(
    listeningServer('ops', () => {
      topology?.close();
      return ops.close();
    }),
  );
  const topologyUrl = topology ? `${ops.url}${TOPOLOGY_PATH}/` : '';
  return { manager, opsUrl: ops.url, topologyUrl, cluster, collector, gc, recorder, metrics };
}

/** The topology API's bearer token, read from its file (never from the configuration itself, never logged). */
async function topologyToken(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  const token = (
    await readFile(file, 'utf8').catch((err: unknown) => {
      throw new RavenError('TOPOLOGY_TOKEN_UNREADABLE', `ops.topologyTokenFile ${file} cannot be read`, { cause: err });
    })
  ).trim();
  if (!/^\S{16,4096}$/.test(token))
    throw new RavenError(
      'TOPOLOGY_TOKEN_INVALID',
      `ops.topologyTokenFile ${file} must hold one token of 16 to 4096 characters, no spaces`,
    );
  return token;
}

function closeAll({ client, eventsClient, session }: Connections): Promise<void>[] {
  return [client.close(), ...(eventsClient === client ? [] : [eventsClient.close()]), session.close()];
}

/** `vif.keyFile`'s key: unreadable or too short is a configuration error (naming the file, never its content). */
async function readVifKey(file: string): Promise<Buffer> {
  const key = await readFile(file).catch((err: unknown) => {
    throw new ConfigError([`vif.keyFile: ${errorMessage(err)}`], { cause: err });
  });
  if (key.length < VIF_KEY_MIN_BYTES)
    throw new ConfigError([
      `vif.keyFile: ${file} holds ${key.length} bytes; a VIF key has at least ${VIF_KEY_MIN_BYTES}`,
    ]);
  return key;
}
