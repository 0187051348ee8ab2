import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, RavenError, silentLogger } from '../core/index.ts';
import { keyOf, type Namespace, type Service } from '../kube/api/index.ts';
import { SharedInformerFactory, type SharedInformer } from '../kube/cache/index.ts';
import { resources, type KubeClient } from '../kube/client/index.ts';
import { NeutronClient, OctaviaClient, type OpenStackSession } from '../openstack/index.ts';
import {
  clusterResources,
  clusterTag,
  GarbageCollector,
  ownersIn,
  ownVif,
  teardownClusterNetwork,
  trimPod,
  uidIndexers,
  POD_DEVICE_OWNER,
  resourceName,
  VIF_ANNOTATION,
  wantsPort,
  type CachedPod,
  type Cloud,
} from '../reconcilers/index.ts';
import type { RavenConfig } from './config/index.ts';
import { connectKubernetes, connectOpenStack, reconcilerConfig } from './connect.ts';

interface Inspection {
  client: KubeClient;
  session: OpenStackSession;
  cloud: Cloud;
  namespaces: SharedInformer<Namespace>;
  pods: SharedInformer<CachedPod>;
  services: SharedInformer<Service>;
  stop: AbortController;
  close(): Promise<void>;
}

/** Read-only access to the cluster (synced caches) and the cloud, for `plan` and `gc`. */
async function inspect(config: RavenConfig): Promise<Inspection> {
  const client = await connectKubernetes(config, silentLogger);
  const session = connectOpenStack(config, silentLogger);
  const informers = new SharedInformerFactory({ client, logger: silentLogger });
  const namespaces = informers.informerFor(resources.namespaces);
  const pods = informers.informerFor(resources.pods, { transform: trimPod });
  const services = informers.informerFor(resources.services);
  namespaces.addIndexers(uidIndexers);
  pods.addIndexers(uidIndexers);
  services.addIndexers(uidIndexers);
  const stop = new AbortController();
  const run = informers.start(stop.signal);
  if (!(await informers.waitForCacheSync(AbortSignal.any([stop.signal, AbortSignal.timeout(60_000)]))))
    throw new Error('the Kubernetes caches did not sync within 60 s');
  return {
    client,
    session,
    cloud: { neutron: new NeutronClient(session), octavia: new OctaviaClient(session) },
    namespaces,
    pods,
    services,
    stop,
    close: async () => {
      stop.abort();
      await run;
      await session.close();
      await client.close();
    },
  };
}

async function routerIdOf(config: RavenConfig, cloud: Cloud): Promise<string | undefined> {
  if (config.router.id) return config.router.id;
  const [router] = await cloud.neutron.routers.list(
    { name: resourceName(config.clusterId, 'router'), tags: [clusterTag(config.clusterId)] },
    { fields: ['id'] },
  );
  return router?.id;
}

function garbageCollector(config: RavenConfig, x: Inspection): GarbageCollector {
  return new GarbageCollector({
    cloud: x.cloud,
    config: reconcilerConfig(config),
    logger: silentLogger,
    ownerExists: ownersIn({ pod: x.pods.lister(), namespace: x.namespaces.lister(), service: x.services.lister() }),
  });
}

/** `raven plan`: what Raven would create and delete now. Reads only. */
export async function planCommand(config: RavenConfig): Promise<void> {
  const x = await inspect(config);
  try {
    const { neutron } = x.cloud;
    const lines: string[] = [];
    const routerId = await routerIdOf(config, x.cloud);
    if (!routerId) lines.push(`+ router ${resourceName(config.clusterId, 'router')}`);
    const portNames = new Set(
      (await neutron.ports.list({ device_owner: POD_DEVICE_OWNER }, { fields: ['name', 'device_id'] })).map(
        (p) => `${p.name}|${p.device_id}`,
      ),
    );
    if (config.subnets.strategy === 'namespace') {
      const networks = new Set(
        (await neutron.networks.list({ tags: [clusterTag(config.clusterId)] }, { fields: ['name'] })).map(
          (n) => n.name,
        ),
      );
      for (const ns of x.namespaces.lister().list()) {
        const name = resourceName(config.clusterId, ns.metadata.name ?? '');
        if (!ns.metadata.deletionTimestamp && !networks.has(name))
          lines.push(`+ network + subnet + router interface ${name} (namespace ${ns.metadata.name})`);
      }
    }
    for (const pod of x.pods.lister().list()) {
      if (!wantsPort(pod)) continue;
      const { namespace, name, uid } = pod.metadata;
      const key = keyOf(pod);
      const portName = resourceName(config.clusterId, namespace, name);
      if (!portNames.has(`${portName}|${uid}`))
        lines.push(`+ port ${portName} (pod ${key}) and its ${VIF_ANNOTATION} annotation`);
      else if (!ownVif(pod)) lines.push(`~ annotation ${VIF_ANNOTATION} on pod ${key}`);
    }
    const report = await garbageCollector(config, x).collect({ routerId, dryRun: true });
    for (const o of report.orphans)
      lines.push(`- ${o.type} ${o.name || o.id} (${o.ownerKind} ${o.ownerUid} is gone; ${o.ageSeconds} s old)`);
    process.stdout.write(
      lines.length === 0
        ? `cluster ${config.clusterId}: nothing to do\n`
        : `cluster ${config.clusterId}: ${lines.length} change(s)\n${lines.join('\n')}\n`,
    );
  } finally {
    await x.close();
  }
}

export interface GcCommandOptions {
  /** Delete (otherwise only list). */
  yes: boolean;
  /**
   * The cluster is gone: every resource tagged for it is an orphan, its router and pod/service networks too, and the
   * Kubernetes API is not asked. Deletes in rounds (Octavia deletes load balancers asynchronously) until nothing is
   * left.
   */
  teardown: boolean;
  /** How long a teardown may take before giving up (default 300 s). */
  timeoutMs?: number;
}

/**
 * `raven gc [--yes] [--teardown]`: this cluster's cloud resources whose owner is gone (older than the grace age);
 * deleted with --yes.
 */
export async function gcCommand(config: RavenConfig, options: GcCommandOptions): Promise<void> {
  if (options.teardown) return teardownCommand(config, options);
  const x = await inspect(config);
  try {
    const routerId = await routerIdOf(config, x.cloud);
    const report = await garbageCollector(config, x).collect({ routerId, dryRun: !options.yes });
    for (const o of report.orphans)
      process.stdout.write(
        `${o.type}\t${o.id}\t${o.name}\towner ${o.ownerKind} ${o.ownerUid}\t${o.ageSeconds} s old\n`,
      );
    process.stdout.write(
      options.yes
        ? `${report.deleted} deleted, ${report.deferred} left for a later run\n`
        : `${report.orphans.length} orphan(s) of cluster ${config.clusterId}; run with --yes to delete them\n`,
    );
  } finally {
    await x.close();
  }
}

async function teardownCommand(config: RavenConfig, options: GcCommandOptions): Promise<void> {
  const session = connectOpenStack(config, silentLogger);
  try {
    const cloud: Cloud = { neutron: new NeutronClient(session), octavia: new OctaviaClient(session) };
    const routerId = await routerIdOf(config, cloud);
    // No owner exists any more, and the grace age protects nothing: no informer will ever see these owners.
    const collector = new GarbageCollector({
      cloud,
      config: { ...reconcilerConfig(config), gc: { graceSeconds: 0 } },
      logger: silentLogger,
      ownerExists: () => false,
    });
    const list = async () => [
      ...(await collector.collect({ routerId, dryRun: true })).orphans.map(
        (o) => `${o.type}\t${o.id}\t${o.name}\towner ${o.ownerKind} ${o.ownerUid}`,
      ),
      ...(await clusterResources(cloud, config.clusterId)).map(
        (r) => `${r.type}\t${r.id}\t${r.name}\towner cluster ${config.clusterId}`,
      ),
    ];
    if (!options.yes) {
      const all = await list();
      for (const line of all) process.stdout.write(`${line}\n`);
      process.stdout.write(
        `${all.length} resource(s) of cluster ${config.clusterId}; run with --teardown --yes to delete them all (stop Raven first, or it builds them again)\n`,
      );
      return;
    }
    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    for (let round = 1; ; round++) {
      try {
        const report = await collector.collect({ routerId });
        const done =
          report.orphans.length === 0 &&
          (await teardownClusterNetwork(cloud, config.clusterId, routerId, silentLogger));
        process.stdout.write(
          `round ${round}: ${report.deleted} deleted, ${report.deferred} waiting${report.orphans.length === 0 ? (done ? '; cluster network deleted' : '; cluster network waits for its ports') : ''}\n`,
        );
        if (done) break;
      } catch (err) {
        process.stdout.write(`round ${round}: ${errorMessage(err)}; trying again\n`);
      }
      if (Date.now() > deadline) {
        const left = await list().catch(() => []);
        throw new RavenError(
          'TEARDOWN_INCOMPLETE',
          `cluster ${config.clusterId}: ${left.length} resource(s) still there after ${Math.round((options.timeoutMs ?? 300_000) / 1000)} s:\n${left.join('\n')}`,
        );
      }
      await sleep(2_000);
    }
    process.stdout.write(`cluster ${config.clusterId}: nothing left\n`);
  } finally {
    await session.close();
  }
}
