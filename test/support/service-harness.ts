/**
 * A real Controller running the ServiceReconciler against a
 * running API server and an OpenStack cloud (the simulator, or real services), with the informers (EndpointSlices and
 * the core Endpoints fallback), the event recorder and the cluster network (router with a gateway on an external
 * network, pod and service subnets). `startSimHarness` starts its own embedded API server and OpenStack simulator;
 * `startHarness` takes servers the test started (another cloud, or servers it shares).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../../src/core/index.ts';
import { ControllerBuilder, EventRecorder, type EventChannel } from '../../src/controller/index.ts';
import type { EndpointSlice, Endpoints, Service, ServiceSpec } from '../../src/kube/api/index.ts';
import { SharedInformerFactory, type SharedInformer } from '../../src/kube/cache/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import {
  loadCloudConfig,
  NeutronClient,
  OctaviaClient,
  OpenStackSession,
  type CloudConfig,
} from '../../src/openstack/index.ts';
import {
  endpointsToService,
  ensureClusterNetwork,
  familySubnets,
  podIpIndexers,
  ServiceReconciler,
  ConvergedLoadBalancers,
  serviceSliceIndexers,
  SharedSubnetStrategy,
  sliceToService,
  trimEndpoints,
  type ClusterNetwork,
  type ClusterNetworkSource,
  type LoadBalancerGone,
  type LoadBalancerPeers,
  type ReconcilerConfig,
} from '../../src/reconcilers/index.ts';
import { runOpenStackSim } from './openstack-sim.ts';
import { startTestServer, testConnection } from './server.ts';

/** `RAVEN_TEST_LOG=1` prints the reconciler's and controller's logs (debugging a failing test). */
function testLogger(): Logger {
  if (!process.env.RAVEN_TEST_LOG) return silentLogger;
  const log = (level: string) => (obj: object, msg?: string) => console.log(level, msg ?? '', JSON.stringify(obj));
  const logger: Logger = {
    debug: () => {},
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}

export interface ApiServerHandle {
  url: string;
  token: string;
  caPem: string | undefined;
}

export interface Harness {
  client: KubeClient;
  neutron: NeutronClient;
  octavia: OctaviaClient;
  config: ReconcilerConfig;
  cluster: ClusterNetwork;
  externalNetworkId: string;
  reconciler: ServiceReconciler;
  /** What the reconciler's converged passes left (the load balancer verification reads it). */
  converged: ConvergedLoadBalancers;
  services: SharedInformer<Service>;
  /**
   * How many writes (anything but GET) the cloud has answered through the harness's session: the reconciler's
   * progress, for `waitFor` (a test's own polling only reads).
   */
  progress: () => number;
  /** Stops the controller and informers; removes the cloud resources the harness made (not the reconciler's). */
  stop(): Promise<void>;
}

export interface HarnessOptions {
  server: ApiServerHandle;
  cloud: CloudConfig;
  clusterId: string;
  /** A /24 (`172.24.4.0/24`) for the external network the harness creates for floating IPs. */
  externalCidr: string;
  config?: Partial<ReconcilerConfig>;
  /** Watch only this namespace (two harnesses on one API server must not both serve a Service). */
  namespace?: string;
  /** Run a Controller (default); false: the test calls `reconciler.reconcile` itself. */
  controller?: boolean;
  timeoutMs?: number;
  /** Give the reconciler a pod informer indexed by address: members are then checked against the pods' namespaces. */
  pods?: boolean;
  /** `floatingIps.grants`: the free addresses a namespace's Services may name. */
  grants?: { namespace: string; cidrs: string[] }[];
  /** Who a member pod's policies admit on its port (the policy module's answer, given by the test). */
  peers?: LoadBalancerPeers;
  /** The controller also takes Services from this channel (the GC's load balancer verification sends to it). */
  loadBalancersGone?: EventChannel<LoadBalancerGone>;
}

export function kubeClient(server: ApiServerHandle): KubeClient {
  return new KubeClient({
    connection: testConnection(server),
  });
}

/**
 * The harness on servers of its own — an embedded API server and an OpenStack simulator (`auth`, each provisioning
 * step taking `provisioningDelayMs`) — which its `stop()` stops too.
 */
export async function startSimHarness(
  o: Omit<HarnessOptions, 'server' | 'cloud'> & { auth: 'keystone' | 'noauth'; provisioningDelayMs: number },
): Promise<Harness> {
  const { auth, provisioningDelayMs, ...options } = o;
  const dir = mkdtempSync(join(tmpdir(), 'raven-svc-'));
  const cloudsYamlOut = join(dir, 'clouds.yaml');
  const server = await startTestServer();
  const sim = await runOpenStackSim({ port: 0, auth, provisioningDelayMs, cloudsYamlOut }).catch(async (err) => {
    await server.stop();
    throw err;
  });
  const servers = async () => {
    await sim.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const cloud = loadCloudConfig({
      cloud: auth === 'keystone' ? 'raven-sim' : 'raven-sim-noauth',
      env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut },
    });
    const h = await startHarness({ ...options, server, cloud });
    return {
      ...h,
      async stop() {
        await h.stop();
        await servers();
      },
    };
  } catch (err) {
    await servers();
    throw err;
  }
}

export async function startHarness(o: HarnessOptions): Promise<Harness> {
  const client = kubeClient(o.server);
  let writes = 0;
  const session = new OpenStackSession({
    cloud: o.cloud,
    timeoutMs: o.timeoutMs ?? 60_000,
    onRequest: (sample) => void (sample.method !== 'GET' && writes++),
  });
  const neutron = new NeutronClient(session);
  const octavia = new OctaviaClient(session);
  const ext = await neutron.networks.create({ name: `raven-test-ext-${o.clusterId}`, 'router:external': true });
  // New floating IPs come from .2–.99: tests name addresses from .100 up, which nothing else can take.
  const net24 = o.externalCidr.split('.').slice(0, 3).join('.');
  await neutron.subnets.create({
    network_id: ext.id,
    cidr: o.externalCidr,
    ip_version: 4,
    name: `raven-test-ext-${o.clusterId}`,
    allocation_pools: [{ start: `${net24}.2`, end: `${net24}.99` }],
  });
  const config: ReconcilerConfig = {
    clusterId: o.clusterId,
    subnets: { strategy: 'shared', shared: { cidr: '10.244.0.0/16' } },
    serviceSubnet: { cidr: '10.96.0.0/12' },
    router: { externalNetworkId: ext.id, create: true },
    floatingIpNetworkId: ext.id,
    floatingIps: { allowExternalIPs: true, adoptCidrs: [], adoptProjects: [], grants: o.grants ?? [] },
    securityGroups: [],
    emulateKubeProxy: false,
    loadBalancer: { pendingRequeueMs: 50, stuckAfterSeconds: 600 },
    gc: { graceSeconds: 0 },
    portPools: {
      enabled: false,
      sizing: 'static',
      demandWindowSeconds: 60,
      trimIdleSeconds: 120,
      prefillNodes: 0,
      min: 0,
      max: 0,
      batch: 1,
      idleSeconds: 0,
      namespaces: [],
    },
    ...o.config,
  };
  const cluster = await ensureClusterNetwork({ neutron, octavia }, config, { logger: silentLogger });
  const informers = new SharedInformerFactory({ client });
  const services = informers.informerFor(resources.services, { namespace: o.namespace });
  const slices = informers.informerFor(resources.endpointslices, { namespace: o.namespace });
  slices.addIndexers(serviceSliceIndexers);
  const endpoints = informers.informerFor(resources.endpoints, { namespace: o.namespace, transform: trimEndpoints });
  const pods = o.pods ? informers.informerFor(resources.pods, {}) : undefined;
  pods?.addIndexers(podIpIndexers);
  // Ensured above, once: the reconciler reads it as it reads the bootstrap's.
  const known: ClusterNetworkSource = {
    current: () => cluster,
    whenReady: () => Promise.resolve(cluster),
    recheck: () => undefined,
  };
  const recorder = new EventRecorder({ client, component: 'raven-test', windowMs: 60_000 });
  const converged = new ConvergedLoadBalancers();
  const reconciler = new ServiceReconciler({
    cloud: { neutron, octavia },
    config,
    cluster: known,
    client,
    services: services.lister(),
    endpointSlices: slices.lister(),
    endpoints: endpoints.lister(),
    subnets: new SharedSubnetStrategy(known),
    pods: pods?.lister(),
    peers: o.peers,
    recorder,
    converged,
    logger: testLogger(),
  });
  const stop = new AbortController();
  const runs = [informers.start(stop.signal)];
  await informers.waitForCacheSync(stop.signal);
  if (o.controller !== false) {
    const builder = new ControllerBuilder()
      .named('service')
      .for(services)
      .watches(slices, sliceToService)
      .watches(endpoints, endpointsToService(slices.lister()));
    if (o.loadBalancersGone) builder.watchesChannel(o.loadBalancersGone, (gone) => [gone.key]);
    const controller = builder
      .withOptions({ recorder, workers: 2, reconcileTimeoutMs: 30_000, logger: testLogger() })
      .complete(reconciler.reconcile);
    runs.push(controller.start(stop.signal, { drainTimeoutMs: 0 }));
  }
  return {
    client,
    neutron,
    octavia,
    config,
    cluster,
    externalNetworkId: ext.id,
    reconciler,
    converged,
    services,
    progress: () => writes,
    async stop() {
      stop.abort();
      await Promise.allSettled(runs);
      await recorder.close();
      await client.close();
      await session.close();
    },
  };
}

/**
 * Removes what the harness made in the cloud — the router (gateway, interfaces), the floating IPs Raven holds or keeps
 * on its external network (a deleted Service's, held for the quarantine), the pod and service networks, the external
 * network — for a run against a long-lived real cloud. Call after the Services (and so their load balancers) are
 * gone; a port left on a network makes its delete fail, which is reported.
 */
export async function removeHarnessNetwork(h: Harness): Promise<void> {
  const { neutron, cluster } = h;
  for (const fip of await neutron.floatingIps.list({ floating_network_id: h.externalNetworkId }))
    await neutron.floatingIps.delete(fip.id);
  const routerId = cluster.routerId!;
  await neutron.routers.update(routerId, { external_gateway_info: {} });
  for (const s of [cluster.podSubnet!, cluster.serviceSubnet!].flatMap(familySubnets)) {
    await neutron.routers.removeInterface(routerId, { subnetId: s.subnetId });
  }
  await neutron.routers.delete(routerId);
  for (const networkId of [cluster.podSubnet!.networkId, cluster.serviceSubnet!.networkId, h.externalNetworkId]) {
    for (const subnet of await neutron.subnets.list({ network_id: networkId })) await neutron.subnets.delete(subnet.id);
    await neutron.networks.delete(networkId);
  }
}

/** A Service (`spec` merged over a TCP port 80 → 8080 named `http`, selector `app=<name>`). */
export function service(namespace: string, name: string, spec: ServiceSpec = {}): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: name }, ...spec },
  };
}

/** An EndpointSlice of a Service: `ready` addresses and `notReady` ones, on the given ports. */
export function slice(
  namespace: string,
  svc: string,
  suffix: string,
  ready: string[],
  notReady: string[] = [],
  ports = [{ name: 'http', port: 8080, protocol: 'TCP' }],
  addressType: 'IPv4' | 'IPv6' = 'IPv4',
): EndpointSlice {
  const endpoint = (ip: string, isReady: boolean) => ({ addresses: [ip], conditions: { ready: isReady } });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-${suffix}`, namespace, labels: { 'kubernetes.io/service-name': svc } },
    addressType,
    endpoints: [...ready.map((ip) => endpoint(ip, true)), ...notReady.map((ip) => endpoint(ip, false))],
    ports,
  };
}

/**
 * Core/v1 Endpoints of a Service (the fallback where it has no slices): one subset with `ready` and `notReady`
 * addresses.
 */
export function endpoints(
  namespace: string,
  svc: string,
  ready: string[],
  notReady: string[] = [],
  ports = [{ name: 'http', port: 8080, protocol: 'TCP' }],
): Endpoints {
  const subset = {
    ...(ready.length > 0 ? { addresses: ready.map((ip) => ({ ip })) } : {}),
    ...(notReady.length > 0 ? { notReadyAddresses: notReady.map((ip) => ({ ip })) } : {}),
    ports,
  };
  return { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: svc, namespace }, subsets: [subset] };
}

/**
 * For a wait's timeout: the state of a Service's load balancer on the cloud (by its name), and the Warning Events on
 * the Service (the last five).
 */
export async function explainLoadBalancer(
  h: Harness,
  lbName: string,
  namespace: string,
  name: string,
): Promise<string> {
  const [lb] = await h.octavia.loadBalancers.list({ name: lbName });
  const listeners = lb ? await h.octavia.listeners.list({ loadbalancer_id: lb.id }) : [];
  const state = lb
    ? `load balancer ${lb.provisioning_status}/${lb.operating_status} with ${listeners.length} listeners`
    : 'no load balancer';
  const events = (await h.client.list(resources.events, { namespace })).items
    .filter((e) => e.type === 'Warning' && e.involvedObject.kind === 'Service' && e.involvedObject.name === name)
    .map((e) => `${e.reason} (${e.count ?? 1}×): ${e.message}`);
  return [state, ...events.slice(-5)].join('; ');
}

/** Events recorded on a Service, as `reason` list (oldest first). */
export async function eventReasons(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const list = await client.list(resources.events, { namespace });
  return list.items
    .filter((e) => e.involvedObject.kind === 'Service' && e.involvedObject.name === name)
    .map((e) => e.reason);
}
