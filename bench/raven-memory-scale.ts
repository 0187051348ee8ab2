/**
 * The `memory` group's scale rows: one `raven run` (compiled, the image's Node.js flags; raven-memory.ts spawns it)
 * over a cluster that grows from 1,000 to 10,000 wired pods across 1,000 namespaces, with 100 NetworkPolicies (the
 * `policies` group's ten kinds in its ten namespaces) and 200 Services of type LoadBalancer, each with an
 * EndpointSlice; then the controller is stopped and a fresh one started over the same API server and simulator. Rows:
 * RSS and heap at 1,000 and 10,000 pods, heap per cached pod, and the restart's time to converged with its RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { callOk, keepAliveAgent, type Target } from './http.ts';
import {
  APPS,
  namespaceObject,
  namespacePolicies,
  NODES,
  nodeName,
  nodeObject,
  nsName,
  podObject,
  policyObject,
  policyPath,
} from './policies.ts';
import { forkEntry, nextMessage, startServerProcess, stopChild } from './processes.ts';
import { ravenActivity } from './prom.ts';
import type { Step } from './client-group.ts';
import {
  heapSnapshot,
  imageVariant,
  memoryOnly,
  runCleanups,
  sample,
  spawnRaven,
  type MemorySample,
  type RavenRun,
  type Variant,
} from './raven-memory.ts';
import { VifWatch } from './raven.ts';
import { delay, fmtInt, runPool, type Row } from './support.ts';

const NAMESPACES = 1_000;
/** Pods per namespace at the first sample (1,000 pods) and at the second (10,000). */
const SMALL = 1;
const LARGE = 10;
const POLICY_NAMESPACES = 10;
const SERVICES = 200;
/** Every controller whose queue must be empty for Raven to be idle. */
const CONTROLLERS = ['pod', 'port-claim', 'port-pool', 'security-group', 'network-policy', 'service', 'namespace'];
/** Hard caps of each step (the simulator slows as its ports grow: 10,000 pods wire in minutes on 2 cores). */
const CAPS = { createMs: 240_000, wireSmallMs: 600_000, wireLargeMs: 2_400_000, settleMs: 300_000, restartMs: 600_000 };
/**
 * Warm pools off: a pool is kept per Node and security-group set, and 100 policies over 1,000 namespaces make about a
 * hundred sets, so up to 8 ports for each of ~1,000 pools — the simulator, slower as its ports grow, did not wire the
 * 10,000 pods in 15 minutes with them on a loaded machine (without, about 6 pods/s there). Pools grow with Nodes × sets, not with pods.
 */
const CONFIG = { portPools: { enabled: false } };
/** Idle for this long (no key queued or in work, no OpenStack request) counts as settled. */
const QUIET_MS = 2_000;
/**
 * `RAVEN_BENCH_MEMORY_SNAPSHOTS=<dir>`: heap snapshots of the controller at 1,000 and 10,000 pods and of the restarted
 * one, for a look (what the long-lived controller holds that a fresh one over the same cluster does not). Written
 * after each sample; the first one's C++ allocations stay in the controller's RSS (248 MB at 10,000 pods with them, on
 * a 53 MB heap), so take RSS figures from a run without.
 */
const snapshotDir = process.env.RAVEN_BENCH_MEMORY_SNAPSHOTS;

export interface ScaleResult {
  small: MemorySample;
  large: MemorySample;
  restarted: MemorySample;
  /** From the first create of each phase to the last VIF seen, and to settled. */
  wireSmallMs: number;
  wireLargeMs: number;
  settleLargeMs: number;
  /** Spawn → the new controller idle after reconciling every pod (the start of its quiet period). */
  restart: { convergedMs: number; podReconciles: number; requests: number; opsMs: number };
  loadBalancers: number;
}

const podKey = (i: number, j: number) => `${nsName(i)}/pod-${String(j).padStart(3, '0')}`;

/** A port nobody listens on now: the controller's ops server, polled for its queues. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The target port each app's pods serve (numbers: named ports differ per pod in the policies' generator). */
const appPort: Record<(typeof APPS)[number], number> = { web: 80, api: 8080, db: 5432, cache: 6379, worker: 9000 };

/**
 * Service k: in namespace 5k, type LoadBalancer, selecting one app; its EndpointSlice (as the EndpointSlice
 * controller would write it, fixed at set-up so only pods grow between the samples) holds that app's two pods of the
 * 10,000-pod cluster at addresses of the pod subnet's top (no kubelet runs to report pod IPs).
 */
function serviceObjects(k: number): { service: object; slice: object; namespace: string } {
  const namespace = nsName((k * 5) % NAMESPACES);
  const app = APPS[k % APPS.length]!;
  const name = `svc-${String(k).padStart(3, '0')}`;
  const port = appPort[app];
  const endpoints = [k % APPS.length, (k % APPS.length) + APPS.length].map((j, m) => {
    const n = 2 * k + m;
    return {
      addresses: [`10.244.${250 + (n >> 8)}.${n & 255}`],
      conditions: { ready: true },
      nodeName: nodeName(j % NODES),
      targetRef: { kind: 'Pod', namespace, name: `pod-${String(j).padStart(3, '0')}` },
    };
  });
  return {
    namespace,
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels: { app } },
      spec: { type: 'LoadBalancer', selector: { app }, ports: [{ name: 'main', port: 80, targetPort: port }] },
    },
    slice: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${name}-x7k2p`,
        namespace,
        labels: {
          'kubernetes.io/service-name': name,
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        },
      },
      addressType: 'IPv4',
      endpoints,
      ports: [{ name: 'main', port, protocol: 'TCP' }],
    },
  };
}

class ScaleRig {
  readonly cleanups: (() => Promise<unknown>)[] = [];
  readonly watch = new VifWatch();
  readonly dir = mkdtempSync(join(tmpdir(), 'raven-bench-memory-scale-'));
  target!: Target;
  agent!: Agent;
  cloudsYaml!: string;
  opsUrl!: string;
  raven!: RavenRun;

  constructor(readonly variant: Variant) {
    this.cleanups.push(() => Promise.resolve(rmSync(this.dir, { recursive: true, force: true })));
  }

  async start(): Promise<void> {
    const server = await startServerProcess({ tls: 'none' });
    this.cleanups.unshift(() => server.stop());
    this.target = { url: server.url, token: server.token, caPem: server.caPem };
    const sim = forkEntry('./openstack-sim-process.ts', {});
    this.cleanups.unshift(() => stopChild(sim, { type: 'close' }));
    this.cloudsYaml = (
      await nextMessage<{ type: 'ready'; cloudsYaml: string }, 'ready'>(sim, 'ready', 30_000)
    ).cloudsYaml;
    this.agent = keepAliveAgent(this.target, 16);
    this.cleanups.unshift(() => this.agent.close());
    this.cleanups.unshift(() => this.watch.close());
    await this.watch.open(this.target);
  }

  /** Spawns a controller (a fresh process each time) on a free ops port; its stop goes first in the clean-ups. */
  async spawn(): Promise<void> {
    const port = await freePort();
    this.opsUrl = `http://127.0.0.1:${port}`;
    this.raven = spawnRaven(this.variant, this.target, this.cloudsYaml, this.dir, port, CONFIG);
    this.cleanups.unshift(this.raven.stop);
  }

  post(path: string, body: object): Promise<string> {
    return callOk(this.agent, this.target, 'POST', path, 201, body);
  }

  /** Posts `count` objects, 16 in flight, within the create cap. */
  async postAll(count: number, item: (n: number) => { path: string; body: object }): Promise<void> {
    const r = await runPool(count, 16, CAPS.createMs, async (n) => {
      const { path, body } = item(n);
      await this.post(path, body);
    });
    if (r.capped) throw new Error(`only ${r.done} of ${count} creates within ${CAPS.createMs / 1000} s`);
  }

  /** The cluster but its pods: Nodes, 1,000 namespaces, 100 policies, 200 Services and their slices. */
  async populate(): Promise<void> {
    for (let i = 0; i < NODES; i++) await this.post('/api/v1/nodes', nodeObject(i));
    await this.postAll(NAMESPACES, (i) => ({ path: '/api/v1/namespaces', body: namespaceObject(i) }));
    const policies = Array.from({ length: POLICY_NAMESPACES }, (_, i) =>
      namespacePolicies(i).map((p) => policyObject(nsName(i), p.name, p.spec)),
    ).flat();
    await this.postAll(policies.length, (n) => ({
      path: policyPath(policies[n]!.metadata.namespace!),
      body: policies[n]!,
    }));
    await this.postAll(SERVICES, (k) => {
      const { namespace, service } = serviceObjects(k);
      return { path: `/api/v1/namespaces/${namespace}/services`, body: service };
    });
    await this.postAll(SERVICES, (k) => {
      const { namespace, slice } = serviceObjects(k);
      return { path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, body: slice };
    });
  }

  /** Creates pods `from` ≤ j < `to` of every namespace and waits for all of their VIFs; ms from first create. */
  async wirePods(from: number, to: number, capMs: number): Promise<number> {
    const per = to - from;
    const t0 = performance.now();
    await this.postAll(NAMESPACES * per, (n) => {
      const i = n % NAMESPACES;
      const j = from + Math.floor(n / NAMESPACES);
      return { path: `/api/v1/namespaces/${nsName(i)}/pods`, body: podObject(i, j) };
    });
    const keys = Array.from({ length: NAMESPACES * to }, (_, n) => podKey(n % NAMESPACES, Math.floor(n / NAMESPACES)));
    if (!(await this.watch.until(() => keys.every((k) => this.watch.annotatedAt.has(k)), capMs)))
      throw new Error(`not all ${fmtInt(keys.length)} pods had a VIF within ${capMs / 1000} s`);
    return Math.max(...keys.map((k) => this.watch.annotatedAt.get(k)!)) - t0;
  }

  /**
   * Waits until the controller has loaded its record of pod ports, reconciled at least `podReconciles` pods and then
   * stayed idle — no key queued or in work in any controller, no OpenStack request — for {@link QUIET_MS}; returns
   * when that quiet began (performance.now()), the pod reconciles and the OpenStack requests so far. Throws after
   * `capMs`.
   */
  async settle(
    capMs: number,
    podReconciles = 0,
  ): Promise<{ idleAt: number; podReconciles: number; requests: number; opsAt: number }> {
    const stopAt = performance.now() + capMs;
    let requests = -1;
    let quietSince = performance.now();
    let opsAt: number | undefined;
    for (;;) {
      if (performance.now() >= stopAt) throw new Error(`Raven did not settle within ${capMs / 1000} s`);
      const activity = await ravenActivity(this.opsUrl, CONTROLLERS).catch(() => undefined);
      if (!activity) {
        await delay(50); // the ops server is not listening yet
        continue;
      }
      opsAt ??= performance.now();
      const reconciled = activity.metrics.sum('controller_runtime_reconcile_total', { controller: 'pod' });
      // Until the record of pod ports holds its list, every pod reconcile returns at once: that is not converged.
      const loading = activity.metrics.samples('raven_record_loading', { record: 'pod-ports' })[0]?.value !== 0;
      if (activity.busy || loading || activity.requests !== requests || reconciled < podReconciles) {
        requests = activity.requests;
        quietSince = performance.now();
      } else if (performance.now() - quietSince >= QUIET_MS)
        return { idleAt: quietSince, podReconciles: reconciled, requests, opsAt };
      await delay(50);
    }
  }

  async snapshot(label: string): Promise<void> {
    if (!snapshotDir) return;
    const path = await heapSnapshot(this.raven.child, join(snapshotDir, `raven-${label}.heapsnapshot`));
    process.stderr.write(` snapshot ${path};`);
  }
}

/** The whole scale run, on fresh processes: populate, 1,000 pods, 10,000 pods, restart. */
export async function measureScale(variant: Variant, progress: (text: string) => void): Promise<ScaleResult> {
  const rig = new ScaleRig(variant);
  try {
    await rig.start();
    await rig.populate();
    await rig.spawn();
    progress(' 1,000 pods …');
    const wireSmallMs = await rig.wirePods(0, SMALL, CAPS.wireSmallMs);
    await rig.settle(CAPS.settleMs);
    const small = await sample(rig.raven.child);
    await rig.snapshot('1000');

    progress(' 10,000 pods …');
    const t0 = performance.now();
    const wireLargeMs = await rig.wirePods(SMALL, LARGE, CAPS.wireLargeMs);
    const settled = await rig.settle(CAPS.settleMs);
    const large = await sample(rig.raven.child);
    await rig.snapshot('10000');
    const loadBalancers = await countLoadBalancers(rig.cloudsYaml);

    progress(' restart …');
    await rig.raven.stop();
    const spawnedAt = performance.now();
    await rig.spawn();
    const restart = await rig.settle(CAPS.restartMs, NAMESPACES * LARGE);
    const restarted = await sample(rig.raven.child);
    await rig.snapshot('10000-restarted');
    return {
      small,
      large,
      restarted,
      wireSmallMs,
      wireLargeMs,
      settleLargeMs: settled.idleAt - t0,
      restart: {
        convergedMs: restart.idleAt - spawnedAt,
        podReconciles: restart.podReconciles,
        requests: restart.requests,
        opsMs: restart.opsAt - spawnedAt,
      },
      loadBalancers,
    };
  } finally {
    await runCleanups(rig.cleanups);
  }
}

/** The load balancers the simulator's Octavia holds (what Raven translated of the 200 Services). */
async function countLoadBalancers(cloudsYaml: string): Promise<number> {
  const { loadCloudConfig, OctaviaClient, OpenStackSession } = await import('../src/openstack/index.ts');
  const session = new OpenStackSession({
    cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYaml } }),
    timeoutMs: 60_000,
  });
  try {
    return (await new OctaviaClient(session).loadBalancers.list()).length;
  } finally {
    await session.close();
  }
}

const MB = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const verdict = (value: number, target: number, unit: (n: number) => string) =>
  `target ≤ ${unit(target)}: ${value <= target ? 'met' : `MISSED by ${unit(value - target)}`}`;

/** The biggest heap spaces of a sample: `old_space 21.0, code_space 3.1, …` MB. */
function spaces(s: MemorySample): string {
  return Object.entries(s.spaces)
    .filter(([, n]) => n >= 0.5e6)
    .sort(([, a], [, b]) => b - a)
    .map(([k, n]) => `${k} ${(n / 1e6).toFixed(1)}`)
    .join(', ');
}

const figures = (s: MemorySample) =>
  `RSS ${MB(s.rss)} (anonymous ${MB(s.rssAnon)}, file ${MB(s.rssFile)}); heap used ${MB(s.heapUsed)} of ${MB(s.heapTotal)} (${spaces(s)} MB); external ${MB(s.external)}; peak RSS so far ${MB(s.peakRss)}`;

export function scaleRows(variant: Variant, r: ScaleResult): Row[] {
  const benchmark = 'controller memory at scale (raven run)';
  const cluster = `${fmtInt(NAMESPACES)} namespaces, ${POLICY_NAMESPACES * 10} NetworkPolicies, ${SERVICES} Services type LoadBalancer (${fmtInt(r.loadBalancers)} load balancers in Octavia) with an EndpointSlice each, ${NODES} Nodes`;
  const perPod = (r.large.heapUsed - r.small.heapUsed) / (NAMESPACES * (LARGE - SMALL));
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    {
      benchmark,
      condition: `${variant.label}; ${fmtInt(NAMESPACES * SMALL)} pods wired (1 per namespace); ${cluster}`,
      result: `${figures(r.small)}; wired in ${s(r.wireSmallMs)}; RSS ${verdict(r.small.rss, 85e6, MB)}`,
    },
    {
      benchmark,
      condition: `${variant.label}; ${fmtInt(NAMESPACES * LARGE)} pods wired (10 per namespace), the same controller; ${cluster}`,
      result: `${figures(r.large)}; the 9,000 more wired in ${s(r.wireLargeMs)}, settled at ${s(r.settleLargeMs)}; RSS ${verdict(r.large.rss, 150e6, MB)}`,
    },
    {
      benchmark,
      condition: `heap per cached pod: (heap used at ${fmtInt(NAMESPACES * LARGE)} − at ${fmtInt(NAMESPACES * SMALL)}) ÷ ${fmtInt(NAMESPACES * (LARGE - SMALL))}, after forced GCs`,
      result: `${fmtInt(perPod)} bytes per pod (RSS ${fmtInt((r.large.rss - r.small.rss) / (NAMESPACES * (LARGE - SMALL)))} bytes per pod); ${verdict(perPod, 2048, (n) => `${fmtInt(n)} B`)}`,
    },
    {
      benchmark,
      condition: `restart at ${fmtInt(NAMESPACES * LARGE)} wired pods: the controller stopped (SIGTERM) once settled, a fresh one spawned over the same API server and simulator`,
      result: `converged ${s(r.restart.convergedMs)} after the spawn (ops server answering at ${s(r.restart.opsMs)}; ${fmtInt(r.restart.podReconciles)} pod reconciles, ${fmtInt(r.restart.requests)} OpenStack requests); then ${figures(r.restarted)}`,
    },
  ];
}

export const scaleNotes = [
  `- memory at scale: one run (the set-up alone takes minutes), compiled with the image's flags; the cluster is made before the controller starts: ${NODES} Nodes, ${fmtInt(NAMESPACES)} namespaces (the policies group's labels), the policies group's 10 NetworkPolicies in each of its first ${POLICY_NAMESPACES} namespaces, ${SERVICES} Services of type LoadBalancer (one in every fifth namespace, each selecting one app) with one EndpointSlice each holding two ready endpoints (written by the bench, as no kubelet or EndpointSlice controller runs; fixed from the start so only pods grow between the samples). Then pods as the policies group's (labels, named ports, pre-scheduled on the ${NODES} Nodes): 1 per namespace, sampled; 9 more per namespace, sampled. Subnet strategy \`shared\` (one network and /16 for every pod: the \`namespace\` strategy would have the simulator hold 1,000 networks and subnets and the controller a namespace network each, which is not what this row is about). Warm pools off (see CONFIG in bench/raven-memory-scale.ts: a pool per Node and group set made the simulator too slow to wire 10,000 pods in 15 minutes); all other settings \`raven run\`'s defaults (services and NetworkPolicies translated).`,
  `- "wired": every pod carries \`raven.openstack.org/vif\`; "settled"/"converged": the controller's /metrics (polled every 50 ms) shows the record of pod ports loaded (\`raven_record_loading{record="pod-ports"} 0\`: until then a pod reconcile returns at once, which before 2026-11-28 this bench counted as converged) and no key queued or in work in any controller and no OpenStack request for ${QUIET_MS / 1000} s; the time given is when that quiet began. The restart's convergence also needs \`controller_runtime_reconcile_total{controller="pod"}\` ≥ the pods (every pod reconciled against the record); its VIFs were already there. Each sample after three forced GCs in the controller (the probe). Bytes per pod is the heap's growth over the 9,000 pods divided by them: the cached pod, its port in the record, its membership in the policy model, queue and recorder state. \`RAVEN_BENCH_MEMORY_ONLY=scale\` runs these rows alone; \`RAVEN_BENCH_MEMORY_SNAPSHOTS=<dir>\` writes heap snapshots after each sample (not for RSS figures: a snapshot's own allocations stay in the process). Caps: creates ${CAPS.createMs / 1000} s per batch, wiring ${CAPS.wireSmallMs / 1000} s / ${CAPS.wireLargeMs / 1000} s, settling ${CAPS.settleMs / 1000} s, restart ${CAPS.restartMs / 1000} s.`,
];

/** The scale rows of the `memory` group (after its 1,000-pod variants). */
export async function runMemoryScale(step: Step): Promise<void> {
  if (memoryOnly === 'base') return;
  const variant = imageVariant();
  await step(`controller memory at scale, ${variant.label}`, async () =>
    scaleRows(variant, await measureScale(variant, (text) => process.stderr.write(text))),
  );
}
