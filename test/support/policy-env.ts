/**
 * The NetworkPolicy translation's two reconcilers on real servers, for their unit tests: an embedded API server (the
 * informers the translation reads: policies, namespaces, pods, nodes) and the OpenStack simulator (noauth), Raven's
 * record of its groups loaded by its own loader, and an Event recorder on the API server. The tests call
 * `reconcile` themselves (no controller), so each step is theirs to order. The pod reconciler is not here: a pod's
 * port is a real Neutron port the test makes (`portFor`) with the groups it chooses, and `portGroupsOf` reads them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type DeepReadonly } from '../../src/core/index.ts';
import { EventRecorder } from '../../src/controller/index.ts';
import type { Event, KubeObject, Namespace, NetworkPolicy, Node, Pod } from '../../src/kube/api/index.ts';
import { indexByNamespace, SharedInformerFactory, type Lister } from '../../src/kube/cache/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import {
  loadCloudConfig,
  NeutronClient,
  OctaviaClient,
  OpenStackSession,
  type Port,
} from '../../src/openstack/index.ts';
import {
  GroupStatus,
  NetworkPolicyReconciler,
  PolicyModel,
  PortGroups,
  SecurityGroupReconciler,
  SecurityGroupRecord,
  securityGroupRecordLoader,
  trimNode,
  trimPod,
  wantsPort,
  type CachedPod,
  type GroupChanged,
  type ReconcilerConfig,
} from '../../src/reconcilers/index.ts';
import { runOpenStackSim } from './openstack-sim.ts';
import { startTestServer, testConnection } from './server.ts';
import { waitFor } from './wait.ts';

/** What an isolated pod always accepts from load balancers in these tests (the node groups' last rule). */
export const LB_CIDR = '10.96.0.0/24';

export interface PolicyEnv {
  clusterId: string;
  client: KubeClient;
  neutron: NeutronClient;
  model: PolicyModel;
  record: SecurityGroupRecord;
  status: GroupStatus;
  portGroups: PortGroups;
  groups: SecurityGroupReconciler;
  policies: NetworkPolicyReconciler;
  /** `onTranslated`'s calls: seconds from the generation seen to Neutron holding it. */
  translated: number[];
  /** Every change the group reconciler announced (its status channel), in order. */
  changes: GroupChanged[];
  /** The pods' cache (Raven's trimmed pods). */
  pods: Lister<CachedPod>;
  /** Whether the group reconciler may change anything (`ready`). */
  ready: { value: boolean };
  /** Creates (or replaces) an object and waits until the informer's cache holds that version. */
  apply<T extends KubeObject>(kind: 'policy' | 'pod' | 'namespace' | 'node', obj: T): Promise<T>;
  /** Deletes an object and waits until the cache lost it. */
  remove(kind: 'policy' | 'pod', namespace: string, name: string): Promise<void>;
  /** A Neutron port for the pod (Raven's pod reconciler stand-in) carrying `groups` (Neutron ids). */
  portFor(pod: DeepReadonly<CachedPod>, groups: readonly string[]): Promise<Port>;
  /** Deletes a port {@link portFor} made for the pod with this uid, and forgets it as the pod's. */
  deletePort(portId: string, podUid: string): Promise<void>;
  /** Reconciles every group the translation wants or the record holds, until none asks to be looked at again. */
  convergeGroups(): Promise<void>;
  /** The Events of an object, written by the recorder (flushed first). */
  eventsOf(namespace: string, name: string): Promise<Event[]>;
  stop(): Promise<void>;
}

type Kind = 'policy' | 'pod' | 'namespace' | 'node';

export async function startPolicyEnv(clusterId: string): Promise<PolicyEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'raven-policy-'));
  const cloudsYamlOut = join(dir, 'clouds.yaml');
  const server = await startTestServer();
  const sim = await runOpenStackSim({ port: 0, auth: 'noauth', provisioningDelayMs: 0, cloudsYamlOut });
  const client = new KubeClient({ connection: testConnection(server) });
  const session = new OpenStackSession({
    cloud: loadCloudConfig({ cloud: 'raven-sim-noauth', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
    timeoutMs: 30_000,
  });
  const neutron = new NeutronClient(session);
  const stop = new AbortController();
  const informers = new SharedInformerFactory({ client });
  const policyInformer = informers.informerFor(resources.networkpolicies);
  policyInformer.addIndexers({ byNamespace: indexByNamespace });
  const podInformer = informers.informerFor(resources.pods, { transform: trimPod });
  podInformer.addIndexers({ byNamespace: indexByNamespace });
  const namespaceInformer = informers.informerFor(resources.namespaces);
  const nodeInformer = informers.informerFor(resources.nodes, { transform: trimNode });
  const runs = [informers.start(stop.signal)];
  await informers.waitForCacheSync(stop.signal);

  const network = await neutron.networks.create({ name: `policy-test-${clusterId}` });
  await neutron.subnets.create({ network_id: network.id, cidr: '10.244.0.0/24', ip_version: 4 });
  const ports = new Map<string, string[]>();
  const model = new PolicyModel({
    policies: policyInformer.lister(),
    namespaces: namespaceInformer.lister(),
    pods: podInformer.lister(),
    nodes: nodeInformer.lister(),
    wired: (pod) => wantsPort(pod as DeepReadonly<CachedPod>),
    address: () => undefined,
    loadBalancerCidrs: () => [LB_CIDR],
    podFamilies: () => ['IPv4'],
  });
  const record = new SecurityGroupRecord();
  const status = new GroupStatus();
  await securityGroupRecordLoader({ neutron, clusterId, record, logger: silentLogger }).start(stop.signal);
  const config: Pick<ReconcilerConfig, 'clusterId' | 'securityGroups'> = { clusterId, securityGroups: [] };
  const portGroups = new PortGroups(model, record, config.securityGroups);
  const ready = { value: true };
  const changes: GroupChanged[] = [];
  const stopChanges = status.changed.source((e) => (changes.push(e), [])).start(() => undefined, silentLogger);
  const groups = new SecurityGroupReconciler({
    cloud: { neutron, octavia: new OctaviaClient(session) },
    config,
    model,
    record,
    status,
    ready: () => ready.value,
    carried: (neutronId) => [...ports.values()].some((groups) => groups.includes(neutronId)),
    logger: silentLogger,
  });
  const recorder = new EventRecorder({ client, component: 'raven-test', windowMs: 60_000 });
  const translated: number[] = [];
  const policies = new NetworkPolicyReconciler({
    policies: policyInformer.lister(),
    pods: podInformer.lister(),
    model,
    record,
    status,
    portGroups,
    portGroupsOf: (pod) => ports.get(pod.metadata.uid ?? ''),
    recorder,
    onTranslated: (seconds) => translated.push(seconds),
    logger: silentLogger,
  });

  /** Each kind's cache, as far as waiting for a version goes. */
  const cacheOf: Record<Kind, { get(key: string): { metadata: { resourceVersion?: string } } | undefined }> = {
    policy: policyInformer.lister(),
    pod: podInformer.lister(),
    namespace: namespaceInformer.lister(),
    node: nodeInformer.lister(),
  };
  const refOf = {
    policy: resources.networkpolicies,
    pod: resources.pods,
    namespace: resources.namespaces,
    node: resources.nodes,
  } as const;
  const keyOf = (o: KubeObject) => [o.metadata.namespace, o.metadata.name].filter(Boolean).join('/');

  return {
    clusterId,
    client,
    neutron,
    model,
    record,
    status,
    portGroups,
    groups,
    policies,
    translated,
    changes,
    pods: podInformer.lister(),
    ready,
    async apply<T extends KubeObject>(kind: Kind, obj: T): Promise<T> {
      const ref = refOf[kind] as unknown as Parameters<KubeClient['create']>[0];
      const namespace = obj.metadata.namespace;
      const existing = cacheOf[kind].get(keyOf(obj));
      const written = (
        existing
          ? await client.update(
              ref,
              { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } },
              { namespace },
            )
          : await client.create(ref, obj, { namespace })
      ) as T;
      await waitFor(
        `${kind} ${keyOf(obj)} in the cache`,
        () => cacheOf[kind].get(keyOf(obj))?.metadata.resourceVersion === written.metadata.resourceVersion,
      );
      return written;
    },
    async remove(kind: 'policy' | 'pod', namespace: string, name: string): Promise<void> {
      const ref = refOf[kind] as unknown as Parameters<KubeClient['delete']>[0];
      await client.delete(ref, name, namespace, { gracePeriodSeconds: 0 });
      await waitFor(
        `${kind} ${namespace}/${name} gone from the cache`,
        () => !cacheOf[kind].get(`${namespace}/${name}`),
      );
    },
    async portFor(pod: DeepReadonly<CachedPod>, carried: readonly string[]): Promise<Port> {
      const port = await neutron.ports.create({
        network_id: network.id,
        name: `pod-${pod.metadata.name}`,
        device_id: pod.metadata.uid ?? '',
        security_groups: [...carried],
      });
      ports.set(pod.metadata.uid ?? '', port.security_groups);
      return port;
    },
    async deletePort(portId: string, podUid: string): Promise<void> {
      await neutron.ports.delete(portId);
      ports.delete(podUid);
    },
    async convergeGroups(): Promise<void> {
      for (let round = 0; round < 10; round++) {
        const ids = [...new Set([...model.groups().keys(), ...record.all().map((g) => g.id)])];
        let again = false;
        for (const id of ids) {
          const result = await groups.reconcile(id, AbortSignal.timeout(10_000));
          if (result?.requeueAfterMs !== undefined) again = true;
        }
        if (!again) return;
      }
      throw new Error('the security groups did not converge in 10 rounds');
    },
    async eventsOf(namespace: string, name: string): Promise<Event[]> {
      await recorder.flush();
      const list = await client.list(resources.events, { namespace });
      return list.items.filter((e) => e.involvedObject.name === name);
    },
    async stop(): Promise<void> {
      stop.abort();
      stopChanges();
      await Promise.allSettled(runs);
      await recorder.close();
      await client.close();
      await session.close();
      await sim.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fixtures: a namespace, a node with an InternalIP, a scheduled pod with labels and container ports. */
export const fixtures = {
  namespace: (name: string, labels: Record<string, string> = {}): Namespace => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels },
  }),
  node: (name: string, ip: string): Node => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  }),
  pod: (
    namespace: string,
    name: string,
    labels: Record<string, string>,
    ports: { name?: string; containerPort: number }[] = [],
  ): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx', ports }] },
  }),
  policy: (namespace: string, name: string, spec: NetworkPolicy['spec']): NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { namespace, name },
    spec,
  }),
};
