/**
 * The topology view at 1,000 pods: the page's bundle (bytes, gzipped, esbuild's time), and one snapshot built from
 * the caches and records as `reconcilers/topology` composes them (build + JSON time, bytes). In-process, no server:
 * what each change check of a listening page costs the controller.
 */
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { realClock } from '../src/core/index.ts';
import { bundleTopologyUi } from '../src/dashboard/index.ts';
import type { Namespace, NetworkPolicy, Service } from '../src/kube/api/index.ts';
import { indexByNamespace, Store } from '../src/kube/cache/index.ts';
import { topologySource } from '../src/reconcilers/topology/index.ts';
import type { TopologySource } from '../src/dashboard/index.ts';
import type { CachedPod, PodModuleView, RecordedPort, SeenLoadBalancer } from '../src/reconcilers/index.ts';
import { fmtInt, fmtMs, type Row } from './support.ts';

export const topologyNotes = [
  '- topology: the page bundle is `bundleTopologyUi()` (Preact and the page, minified, what `npm run build` writes to `topology-ui/`); bytes as served and gzipped. The snapshot is `topologySource(...).snapshot()` then `JSON.stringify`, over real `Store`s holding 1,000 pods in 20 namespaces (each with its recorded port), 100 Services with a load balancer of 10 members each, 40 policies and 60 security groups; p50 of 20 after 3 warm-ups.',
];

const uid = (s: string): string => `00000000-0000-4000-8000-${s.padStart(12, '0')}`;

/** A pod of the fixture and its recorded port (the `n`th namespace, `p`th pod). */
function podWithPort(n: number, p: number, name: string): { pod: CachedPod; port: RecordedPort } {
  const ns = `ns-${n}`;
  const key = `${String(n).padStart(3, '0')}${String(p).padStart(5, '0')}`;
  const id = uid(key);
  return {
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, uid: id },
      spec: { nodeName: `node-${p % 10}` },
      status: { phase: 'Running' },
    },
    port: {
      id: uid(`1${key}`),
      deviceId: id,
      name: `raven/c/${ns}/${name}`,
      networkId: uid(`2${n}`),
      mac: 'fa:16:3e:00:00:01',
      fixedIps: [{ subnetId: uid(`3${n}`), address: `10.${n}.${p >> 8}.${p & 255}` }],
      active: true,
      hostId: `node-${p % 10}`,
      plug: 'bridge',
      securityGroups: [uid('41'), uid(`5${n}`)],
      revision: 1,
      updatedAt: 0,
    },
  };
}

/**
 * The view over real `Store`s at 1,000 pods: 20 namespaces of 50 pods (each with its recorded port), 5 Services
 * with a load balancer of 10 members and 2 policies each, 60 security groups. `addPod` adds one more (a change).
 */
export function topologyFixture(): { source: TopologySource; addPod(n: number, p: number, name: string): void } {
  const namespaces = new Store<Namespace>();
  const pods = new Store<CachedPod>({ indexers: { byNamespace: indexByNamespace } });
  const services = new Store<Service>({ indexers: { byNamespace: indexByNamespace } });
  const policies = new Store<NetworkPolicy>({ indexers: { byNamespace: indexByNamespace } });
  const ports = new Map<string, RecordedPort>();
  const addPod = (n: number, p: number, name: string): void => {
    const made = podWithPort(n, p, name);
    pods.add(made.pod);
    ports.set(made.pod.metadata.uid!, made.port);
  };
  const lbs = new Map<string, SeenLoadBalancer>();
  for (let n = 0; n < 20; n++) {
    const ns = `ns-${n}`;
    namespaces.add({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, uid: uid(`9${n}`) } });
    for (let p = 0; p < 50; p++) addPod(n, p, `pod-${p}`);
    for (let s = 0; s < 5; s++) {
      services.add({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${s}`, namespace: ns, uid: uid(`6${n}${s}`) },
        spec: { type: 'LoadBalancer', clusterIPs: [`10.96.${n}.${s}`] },
      });
      lbs.set(`${ns}/svc-${s}`, {
        id: uid(`7${n}${s}`),
        provisioningStatus: 'ACTIVE',
        operatingStatus: 'ONLINE',
        vips: [`10.96.${n}.${s}`],
        listeners: [{ id: uid(`8${n}${s}`), protocol: 'TCP', port: 80, allowedCidrs: [] }],
        pools: [
          {
            id: uid(`9${n}${s}`),
            protocol: 'TCP',
            method: 'ROUND_ROBIN',
            members: Array.from({ length: 10 }, (_, m) => ({
              id: uid(`10${n}${s}${m}`),
              address: `10.${n}.0.${m}`,
              port: 80,
            })),
          },
        ],
        floatingIps: [`203.0.113.${n * 5 + s}`],
      });
    }
    for (let p = 0; p < 2; p++)
      policies.add({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: `pol-${p}`, namespace: ns, uid: uid(`11${n}${p}`) },
        spec: { policyTypes: ['Ingress'] },
      });
  }
  const podModule: PodModuleView = {
    portOf: (id) => {
      const port = ports.get(id);
      return port && { port, warm: false, claimPending: false };
    },
    pools: () => [],
    ports: () => [...ports.values()],
  };
  const source = topologySource({
    clusterId: 'bench',
    subnetStrategy: 'namespace',
    externalNetworkId: uid('12'),
    cluster: { current: () => undefined, whenReady: () => Promise.resolve(undefined), recheck: () => undefined },
    namespaces,
    pods,
    services,
    policies,
    networks: { all: () => [] },
    podModule,
    serviceModule: { loadBalancer: (key) => lbs.get(key) },
    policyModule: {
      groups: () =>
        Array.from({ length: 60 }, (_, g) => ({ id: `g${g}`, neutronId: uid(`5${g}`), name: `g${g}`, rules: 4 })),
      policyGroups: (key) => [
        {
          id: `t-${key}`,
          role: 'target',
          description: `pods app=x of namespace ${key}`,
          rules: 4,
          neutronId: uid('41'),
        },
        { id: `p-${key}`, role: 'peer', description: 'pods role=client of namespaces all', rules: 0 },
      ],
    },
    events: { latest: () => undefined },
    clock: realClock,
  });
  return { source, addPod };
}

export async function benchTopology(): Promise<Row[]> {
  const started = performance.now();
  const ui = await bundleTopologyUi();
  const bundleMs = performance.now() - started;
  const js = Buffer.byteLength(ui['app.js']);
  const css = Buffer.byteLength(ui['app.css']);
  const gz = gzipSync(ui['app.js']).length + gzipSync(ui['app.css']).length;

  const { source } = topologyFixture();
  let bytes = 0;
  const times: number[] = [];
  for (let i = 0; i < 23; i++) {
    const t = performance.now();
    bytes = JSON.stringify(source.snapshot()).length;
    if (i >= 3) times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return [
    {
      benchmark: 'topology page bundle',
      condition: 'Preact 11 + page, minified (esbuild)',
      result: `${fmtInt(js)} B js + ${fmtInt(css)} B css (${fmtInt(gz)} B gzipped); bundled in ${fmtMs(bundleMs)}`,
    },
    {
      benchmark: 'topology snapshot',
      condition: '1,000 pods, 100 LBs × 10 members, 40 policies',
      result: `${fmtInt(bytes)} B JSON (${fmtInt(gzipSync(JSON.stringify(source.snapshot())).length)} B gzipped); build + stringify p50 ${fmtMs(times[times.length >> 1]!)}`,
    },
  ];
}
