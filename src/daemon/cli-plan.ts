import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, RavenError, silentLogger } from '../core/index.ts';
import type { Namespace, NetworkPolicy, Service } from '../kube/api/index.ts';
import { indexByNamespace, SharedInformerFactory, type SharedInformer } from '../kube/cache/index.ts';
import { resources, type KubeClient } from '../kube/client/index.ts';
import { NeutronClient, OctaviaClient, type OpenStackSession } from '../openstack/index.ts';
import {
  clusterResources,
  clusterTag,
  GarbageCollector,
  groupWanted,
  listPodPorts,
  listSecurityGroups,
  PortGroups,
  SecurityGroupRecord,
  type PolicyModel,
  indexByNode,
  ownersIn,
  trunkNodesIn,
  PodPortRecord,
  wantsPort,
  policyModelOver,
  recordedPort,
  resourceName,
  teardownClusterNetwork,
  trimNode,
  trimPod,
  uidIndexers,
  wantsLoadBalancer,
  type CachedNode,
  type CachedPod,
  type Cloud,
  type ClusterNetworkSource,
} from '../reconcilers/index.ts';
import type { RavenConfig } from './config/index.ts';
import { connectKubernetes, connectOpenStack, reconcilerConfig, servicesTranslated } from './connect.ts';

import { runPlan, type PlanOptions } from './plan.ts';

interface Inspection {
  client: KubeClient;
  session: OpenStackSession;
  cloud: Cloud;
  namespaces: SharedInformer<Namespace>;
  pods: SharedInformer<CachedPod>;
  services: SharedInformer<Service>;
  nodes: SharedInformer<CachedNode>;
  policies: SharedInformer<NetworkPolicy>;
  stop: AbortController;
  close(): Promise<void>;
}

/** Read-only access to the cluster (synced caches of what the sweep reads, as Raven's) and the cloud, for `gc`. */
async function inspect(config: RavenConfig): Promise<Inspection> {
  const client = await connectKubernetes(config, silentLogger);
  const session = connectOpenStack(config, silentLogger);
  const informers = new SharedInformerFactory({ client, logger: silentLogger });
  const namespaces = informers.informerFor(resources.namespaces);
  const pods = informers.informerFor(resources.pods, { transform: trimPod });
  const services = informers.informerFor(resources.services);
  const nodes = informers.informerFor(resources.nodes, { transform: trimNode });
  const policies = informers.informerFor(resources.networkpolicies);
  namespaces.addIndexers(uidIndexers);
  pods.addIndexers({ ...uidIndexers, byNode: indexByNode, byNamespace: indexByNamespace });
  policies.addIndexers({ byNamespace: indexByNamespace });
  services.addIndexers({ ...uidIndexers, byNamespace: indexByNamespace });
  nodes.addIndexers(uidIndexers);
  const stop = new AbortController();
  const run = informers.start(stop.signal);
  // The timeout is held (and read): one referenced only by AbortSignal.any can be collected unfired (nodejs/node#57736).
  const timeout = AbortSignal.timeout(60_000);
  if (!(await informers.waitForCacheSync(AbortSignal.any([stop.signal, timeout]))) || timeout.aborted)
    throw new Error('the Kubernetes caches did not sync within 60 s');
  return {
    client,
    session,
    cloud: { neutron: new NeutronClient(session), octavia: new OctaviaClient(session) },
    namespaces,
    pods,
    services,
    nodes,
    policies,
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

/**
 * The NetworkPolicy translation over the inspection's caches, with Raven's record of its pod ports (addresses) and of
 * its security groups; undefined when the translation is off.
 */
async function policyTranslation(
  config: RavenConfig,
  x: Inspection,
  podPorts: PodPortRecord,
  cluster: ClusterNetworkSource,
) {
  const rc = reconcilerConfig(config);
  if (!rc.networkPolicies) return undefined;
  const model = policyModelOver({
    policies: x.policies.lister(),
    namespaces: x.namespaces.lister(),
    pods: x.pods.lister(),
    nodes: x.nodes.lister(),
    wired: (pod) => wantsPort(pod),
    podPorts,
    cluster,
    subnets: rc.subnets,
    quotas: rc.quotas,
    ...(servicesTranslated(config)
      ? { services: { lister: x.services.lister(), balanced: (svc) => wantsLoadBalancer(svc, rc) } }
      : {}),
  });
  const record = new SecurityGroupRecord();
  record.replace(await listSecurityGroups(x.cloud.neutron, rc.clusterId, x.stop.signal), record.mark());
  return { model, record, portGroups: new PortGroups(model, record, rc.securityGroups) };
}

/** Whether `raven gc` and `raven plan` keep a security group: the translation wants it (off: none is kept). */
function wantedGroups(
  translation: { model: PolicyModel; record: SecurityGroupRecord } | undefined,
): { wanted: (id: string, neutronId: string) => boolean } | undefined {
  return translation && { wanted: groupWanted(translation.model, translation.record) };
}

/** Nested mode on: the sweep looks at the trunks Raven made for VM nodes (off, the cloud may have no trunks). */
function nestedOn(config: RavenConfig): boolean {
  const mode = reconcilerConfig(config).nested?.mode;
  return config.translations.pods && mode !== undefined && mode !== 'off';
}

function garbageCollector(
  config: RavenConfig,
  x: Inspection,
  translation?: { model: PolicyModel; record: SecurityGroupRecord },
): GarbageCollector {
  return new GarbageCollector({
    cloud: x.cloud,
    config: reconcilerConfig(config),
    logger: silentLogger,
    ownerExists: ownersIn({ pod: x.pods.lister(), namespace: x.namespaces.lister(), service: x.services.lister() }),
    loadBalancers: config.translations.services,
    pools: config.portPools.enabled ? { nodeExists: (name) => x.nodes.lister().get(name) !== undefined } : undefined,
    trunks: nestedOn(config) ? trunkNodesIn(x.nodes.lister()) : undefined,
    securityGroups: wantedGroups(translation),
    releaseGroupsTo: config.translations.networkPolicies ? undefined : config.securityGroups,
  });
}

/**
 * `raven plan`: what Raven would create, change and delete now — the daemon itself run on dry-run connections
 * ({@link runPlan}) until quiet. Reads only. A run that times out prints what it has and which parts still had work.
 */
export async function planCommand(config: RavenConfig, options: PlanOptions = {}): Promise<void> {
  const plan = await runPlan(config, options);
  const { changes, warnings, busy } = plan;
  process.stdout.write(
    [
      changes.length === 0
        ? `cluster ${config.clusterId}: nothing to do`
        : `cluster ${config.clusterId}: ${changes.length} change(s)`,
      ...changes,
      ...warnings,
    ].join('\n') + '\n',
  );
  if (busy) {
    const what = [...busy].map(([name, n]) => `${name} (${n})`).join(', ');
    process.stderr.write(`raven plan: not quiet within the timeout; still busy: ${what}\n`);
    process.exitCode = 1;
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
    const podPorts = new PodPortRecord();
    podPorts.replace(
      (await listPodPorts(x.cloud.neutron, config.clusterId, x.stop.signal)).map(recordedPort),
      podPorts.mark(),
    );
    const known: ClusterNetworkSource = {
      current: () => undefined,
      whenReady: () => new Promise(() => undefined),
      recheck: () => undefined,
    };
    const translation = await policyTranslation(config, x, podPorts, known);
    const report = await garbageCollector(config, x, translation).collect({ routerId, dryRun: !options.yes });
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
      loadBalancers: config.translations.services,
      trunks: nestedOn(config) ? { nodeExists: () => false } : undefined,
      teardown: true,
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
