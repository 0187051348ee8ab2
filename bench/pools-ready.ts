/**
 * The `pools` group's headline (issue 28): pod created → raven-cni ADD answered, "network ready", with Raven's default
 * settings — what a user feels when a pod starts, where pod → VIF stops at the annotation. Each pod is handed to the
 * node side (cni-node-process.ts: the kubelet's, the runtime's and `raven node`'s part) as soon as its create is
 * answered, as a kubelet does with a pre-scheduled pod; raven-cni then waits for the VIF, verifies the port against
 * Neutron, waits for the claim (`device_id`) and plugs the pod. Scenarios: 20 pods one at a time, a 50-pod burst, a
 * steady stream, and waves of 40 created then deleted. Figures with their targets, and where the time went.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Step } from './client-group.ts';
import type { CniAdd, CniNodeCommand, CniNodeOptions, CniNodeReply, CniPod } from './cni-node-process.ts';
import { phaseClock } from '../src/cni/plugin.ts';
import { PoolsRig, type CreatedPod } from './pools-rig.ts';
import { forkEntry, nextMessage, stopChild } from './processes.ts';
import { scrape } from './prom.ts';
import { perPod, realClouds, realNeutronMissing, type BenchCloud } from './raven-rig.ts';
import { delay, fmtMs, percentile, runPool, type Row } from './support.ts';

/** Raven's shipped Kubernetes client limiter (`kubernetes.qps` / `burst`). */
const shippedLimiter = { qps: 50, burst: 100 };
/** Raven's default `workers.pods`. */
const workers = 8;
/** Three nodes, as the issue's `raven dev` wave; on the real Neutron the one host its ML2 driver binds. */
const simNodes = ['node-1', 'node-2', 'node-3'];
const realNodes = ['host-ovs-filter-active'];

/** Issue 28's targets. */
export const readyTargets = {
  simSteadyP99Ms: 100,
  realSteadyP99Ms: 1_000,
  realBurstMs: 2_000,
  coldShare: 0.05,
  neutronPerPodWaves: 1.2,
};

export type ReadyLoad =
  | { kind: 'sequential'; pods: number }
  | { kind: 'burst'; pods: number }
  | { kind: 'steady'; perSecond: number; seconds: number }
  /** A steady stream whose pods also go: each is deleted `lifetimeSeconds` after it is ready (a cluster's churn). */
  | { kind: 'churn'; perSecond: number; seconds: number; lifetimeSeconds: number }
  | { kind: 'waves'; pods: number; waves: number };

/** What the issue's steady-stream cold-path target leaves out: the stream's first minute, its pools' warm-up. */
const warmUpMs = 60_000;

interface ReadyScenario {
  id: 'a' | 'b' | 'c' | 'd' | 'e';
  title: string;
  load: ReadyLoad;
}

/** `RAVEN_BENCH_POOLS_QUICK=1`: the steady stream for 5 s, one wave. */
const quick = process.env.RAVEN_BENCH_POOLS_QUICK === '1';

/** (e): long enough for a minute of warm-up and half a minute after it; pods live as long as a short Job's. */
const churnSeconds = 90;
const churnLifetime = 10;

function scenarios(real: boolean): ReadyScenario[] {
  const perSecond = real ? 10 : 50;
  const seconds = quick ? 5 : 20;
  return [
    { id: 'a', title: '20 pods one at a time', load: { kind: 'sequential', pods: 20 } },
    { id: 'b', title: 'a 50-pod burst', load: { kind: 'burst', pods: 50 } },
    {
      id: 'c',
      title: `a steady ${perSecond} pods/s for ${seconds} s`,
      load: { kind: 'steady', perSecond, seconds },
    },
    { id: 'd', title: 'waves of 40 created then deleted', load: { kind: 'waves', pods: 40, waves: quick ? 1 : 2 } },
    {
      id: 'e',
      title: `a steady churn of 10 pods/s for ${churnSeconds} s, each pod deleted ${churnLifetime} s after it is ready`,
      load: { kind: 'churn', perSecond: 10, seconds: churnSeconds, lifetimeSeconds: churnLifetime },
    },
  ];
}

/** The node side's process: ADD and DEL per pod, its Neutron calls counted, the cluster's pod ports counted. */
class CniNode {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, (reply: CniNodeReply) => void>();
  #next = 0;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (m: CniNodeReply) => {
      if (!('id' in m)) return;
      this.#waiting.get(m.id)?.(m);
      this.#waiting.delete(m.id);
    });
  }

  static async start(options: CniNodeOptions): Promise<CniNode> {
    const child = forkEntry('./cni-node-process.ts', options);
    try {
      await nextMessage<CniNodeReply, 'ready'>(child, 'ready', 60_000);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    return new CniNode(child);
  }

  #ask<K extends CniNodeReply['type']>(command: CniNodeCommand & { id: number }, type: K, capMs: number) {
    return new Promise<Extract<CniNodeReply, { type: K }>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(command.id);
        reject(new Error(`the node side did not answer ${command.type} within ${capMs / 1000} s`));
      }, capMs);
      this.#waiting.set(command.id, (reply) => {
        clearTimeout(timer);
        if (reply.type === type) resolve(reply as Extract<CniNodeReply, { type: K }>);
        else reject(new Error(`the node side answered ${command.type} with ${reply.type}`));
      });
      this.#child.send(command);
    });
  }

  async add(pod: CniPod, capMs: number): Promise<CniAdd> {
    return (await this.#ask({ type: 'add', id: this.#next++, pod }, 'added', capMs)).add;
  }

  async del(pod: CniPod, capMs: number): Promise<void> {
    const { error } = await this.#ask({ type: 'del', id: this.#next++, pod }, 'deleted', capMs);
    if (error) throw new Error(`DEL of ${pod.namespace}/${pod.name}: ${error}`);
  }

  async counts(reset: boolean): Promise<Record<string, number>> {
    return (await this.#ask({ type: 'counts', id: this.#next++, reset }, 'counts', 30_000)).counts;
  }

  async podPorts(clusterId: string): Promise<number> {
    return (await this.#ask({ type: 'ports', id: this.#next++, clusterId }, 'ports', 60_000)).ports;
  }

  stop(): Promise<void> {
    return stopChild(this.#child, { type: 'close' });
  }
}

/** One node side per node, as each node runs its own `raven node`; a pod's calls go to its node's. */
class NodeSides {
  readonly #nodes: ReadonlyMap<string, CniNode>;

  private constructor(nodes: ReadonlyMap<string, CniNode>) {
    this.#nodes = nodes;
  }

  static async start(names: readonly string[], options: CniNodeOptions): Promise<NodeSides> {
    const started = await Promise.allSettled(names.map(() => CniNode.start(options)));
    const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(nodes.map((n) => n.stop()));
      throw failed.reason;
    }
    return new NodeSides(new Map(names.map((n, i) => [n, nodes[i]!])));
  }

  #of(pod: CniPod): CniNode {
    const node = this.#nodes.get(pod.node);
    if (!node) throw new Error(`no node side for node ${pod.node}`);
    return node;
  }

  /** The pod's ADDs, retried until one succeeds (at most 300 s: the node side's own cap). */
  add(pod: CniPod): Promise<CniAdd> {
    const startedAt = Date.now();
    // A node side that does not answer in time (saturated) counts the pod as not ready, not the row as failed.
    return this.#of(pod)
      .add(pod, 320_000)
      .catch((err: unknown) => {
        const error = err instanceof Error ? err.message : String(err);
        const doneAt = Date.now();
        const timings = { ...phaseClock().phases(), verifiedBy: 'neutron' as const };
        return { startedAt, attemptAt: startedAt, doneAt, attempts: 1, error, timings };
      });
  }

  del(pod: CniPod): Promise<void> {
    return this.#of(pod).del(pod, 60_000);
  }

  /** raven-cni's Neutron calls on every node, by route. */
  async counts(reset: boolean): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (const node of this.#nodes.values())
      for (const [k, n] of Object.entries(await node.counts(reset))) total[k] = (total[k] ?? 0) + n;
    return total;
  }

  podPorts(clusterId: string): Promise<number> {
    return [...this.#nodes.values()][0]!.podPorts(clusterId);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#nodes.values()].map((n) => n.stop()));
  }
}

/** One pod's way to network ready, every time on the epoch clock (ms). */
export interface PodReady {
  createdAt: number;
  /** This process's watch first showed the VIF. */
  vifAt: number | undefined;
  /** Neutron answered the request that made the port the pod's (a pool port's claim, or a cold create). */
  claimedAt: number | undefined;
  cold: boolean;
  add: CniAdd;
}

/** What one wave's figures are made of. */
export interface ReadyWave {
  pods: PodReady[];
  /** First create sent → last ADD answered. */
  spanMs: number;
  /** Raven's Neutron calls (its session) from the first create to the settle after the deletes, by route. */
  ravenCalls: Record<string, number>;
  /** raven-cni's Neutron calls over the same time, by route. */
  cniCalls: Record<string, number>;
  podWrites: number;
  eventWrites: number;
  /** The cluster's pod ports still in Neutron once every pod of the wave is gone and Raven has settled. */
  portsLeft: number;
  /** Of them, free in Raven's pools (`raven_port_pool_size`). */
  pooled: number;
  load1: number;
}

/** The figures of a wave, computed (no formatting): what the rows print. */
export interface ReadyFigures {
  pods: number;
  failed: number;
  /** pod created → ADD answered, ms. */
  readyP50: number;
  readyP99: number;
  readyMax: number;
  /** Pods whose port was a cold create, ÷ pods. */
  coldShare: number;
  /** The same over the stream's second half (a churn: after its first minute). */
  coldShareLate: number;
  /** pod → network ready p99 over the same pods, ms. */
  readyP99Late: number;
  ravenPerPod: number;
  cniPerPod: number;
  /** Means over the pods, ms: the phases of network ready, in order; they add up to `readyMean`. */
  phases: {
    /** created → the CNI saw the VIF (Raven's port and annotation, and the watch to the node), failed ADDs left out. */
    vif: number;
    /** ADDs that failed before the one that counts (raven-cni's VIF wait ran out, say), and the retry's back-off. */
    retries: number;
    /** The Neutron reads (every one). */
    neutron: number;
    /** Asleep between reads, waiting for the claim. */
    claimWait: number;
    /** veth, addresses, bridge. */
    plumbing: number;
    /** The rest: Kubernetes re-reads after each sleep, the node side's own overhead. */
    other: number;
  };
  readyMean: number;
  /** Pods whose first ADD failed (retried as a kubelet retries a sandbox), and the first reason. */
  retried: number;
  firstError: string | undefined;
  /** Pods that read Neutron more than once (the claim had not landed at the first read), ÷ pods. */
  claimWaitShare: number;
  /** Warm pods: VIF seen → claim landed, p50 (ms; negative when the claim landed first). */
  claimLagP50: number;
}

const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : sum(xs) / xs.length);
const neutronOf = (counts: Record<string, number>) =>
  sum(
    Object.entries(counts)
      .filter(([k]) => k.startsWith('network '))
      .map(([, n]) => n),
  );

export function readyFigures(w: ReadyWave, load?: ReadyLoad): ReadyFigures {
  const ok = w.pods.filter((p) => !p.add.error);
  const ready = ok.map((p) => p.add.doneAt - p.createdAt);
  const n = Math.max(1, w.pods.length);
  const byCreate = [...w.pods].sort((a, b) => a.createdAt - b.createdAt);
  const late =
    load?.kind === 'churn'
      ? byCreate.filter((p) => p.createdAt >= byCreate[0]!.createdAt + warmUpMs)
      : byCreate.slice(Math.floor(byCreate.length / 2));
  const phase = (f: (p: PodReady) => number) => mean(ok.map(f));
  const retries = phase((p) => p.add.attemptAt - p.add.startedAt);
  const vif = phase((p) => p.add.attemptAt + p.add.timings.vifMs - p.createdAt) - retries;
  const neutron = phase((p) => p.add.timings.neutronMs);
  const claimWait = phase((p) => p.add.timings.claimWaitMs);
  const plumbing = phase((p) => p.add.timings.plumbingMs);
  const readyMean = mean(ready);
  const lags = ok.flatMap((p) =>
    !p.cold && p.vifAt !== undefined && p.claimedAt !== undefined ? [p.claimedAt - p.vifAt] : [],
  );
  return {
    pods: w.pods.length,
    failed: w.pods.length - ok.length,
    readyP50: percentile(ready, 50),
    readyP99: percentile(ready, 99),
    readyMax: ready.length > 0 ? Math.max(...ready) : NaN,
    coldShare: w.pods.filter((p) => p.cold).length / n,
    coldShareLate: late.filter((p) => p.cold).length / Math.max(1, late.length),
    readyP99Late: percentile(
      late.filter((p) => !p.add.error).map((p) => p.add.doneAt - p.createdAt),
      99,
    ),
    ravenPerPod: neutronOf(w.ravenCalls) / n,
    cniPerPod: neutronOf(w.cniCalls) / n,
    phases: {
      vif,
      retries,
      neutron,
      claimWait,
      plumbing,
      other: readyMean - vif - retries - neutron - claimWait - plumbing,
    },
    retried: w.pods.filter((p) => p.add.attempts > 1).length,
    firstError: w.pods.find((p) => p.add.firstError)?.add.firstError,
    readyMean,
    claimWaitShare: ok.filter((p) => p.add.timings.neutronReads > 1).length / Math.max(1, ok.length),
    claimLagP50: percentile(lags, 50),
  };
}

const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const verdict = (value: number, target: number) => (value <= target ? 'met' : 'missed');

/** The figures as a row's result, each beside its target where the issue gives one. */
export function describeReady(f: ReadyFigures, w: ReadyWave, load: ReadyLoad, real: boolean): string {
  const parts: string[] = [];
  let ready = `**pod → network ready p50 ${fmtMs(f.readyP50)}, p99 ${fmtMs(f.readyP99)}**, max ${fmtMs(f.readyMax)}`;
  if (load.kind === 'steady') {
    const target = real ? readyTargets.realSteadyP99Ms : readyTargets.simSteadyP99Ms;
    ready += ` (target p99 ≤ ${fmtMs(target)}: ${verdict(f.readyP99, target)})`;
  }
  if (load.kind === 'churn') {
    ready += `; after the first minute p99 ${fmtMs(f.readyP99Late)}`;
    if (real)
      ready += ` (target p99 ≤ ${fmtMs(readyTargets.realSteadyP99Ms)} at 10 pods/s: ${verdict(f.readyP99Late, readyTargets.realSteadyP99Ms)})`;
  }
  if (load.kind === 'burst' && real)
    ready += ` (target: the burst ready ≤ 2 s; last pod ready ${fmtMs(w.spanMs)}: ${verdict(w.spanMs, readyTargets.realBurstMs)})`;
  else ready += `; first create → last ready ${fmtMs(w.spanMs)}`;
  if (f.retried > 0)
    ready += `; ${f.retried} of ${f.pods} pods needed ADD again (the kubelet's retry, here after 1 s), the first because: ${f.firstError?.slice(0, 160)}`;
  if (f.failed > 0) ready += `; ${f.failed} of ${f.pods} pods NOT READY within 300 s`;
  parts.push(ready);
  let cold = `cold path ${pct(f.coldShare)}`;
  if (load.kind === 'churn')
    cold += `, after the first minute ${pct(f.coldShareLate)} (target ≤ 5 %: ${verdict(f.coldShareLate, readyTargets.coldShare)})`;
  if (load.kind === 'steady')
    cold += `, second half ${pct(f.coldShareLate)} (target ≤ 5 % after the first minute: ${verdict(f.coldShareLate, readyTargets.coldShare)}; the stream is shorter than a minute)`;
  parts.push(cold);
  let calls = `Neutron per pod lifecycle: Raven ${perPod(w.ravenCalls, f.pods, (k) => k.startsWith('network '))}`;
  if (load.kind === 'waves')
    calls += ` (target ≤ ${readyTargets.neutronPerPodWaves}: ${verdict(f.ravenPerPod, readyTargets.neutronPerPodWaves)})`;
  calls += `; raven-cni ${f.cniPerPod.toFixed(2)} reads`;
  parts.push(calls);
  parts.push(
    `Kubernetes ${(w.podWrites / f.pods).toFixed(2)} pod updates + ${(w.eventWrites / f.pods).toFixed(2)} Events per pod`,
  );
  parts.push(`pod ports left after every pod went: ${w.portsLeft} (${w.pooled} free in the pools)`);
  const ph = f.phases;
  parts.push(
    `where the mean ${fmtMs(f.readyMean)} went: created → the CNI has the VIF ${fmtMs(ph.vif)}, failed ADDs and retries ${fmtMs(ph.retries)}, Neutron reads ${fmtMs(ph.neutron)}, waiting for the claim ${fmtMs(ph.claimWait)} (${pct(f.claimWaitShare)} of pods; warm pods' VIF → claim landed p50 ${fmtMs(f.claimLagP50)}), plumbing ${fmtMs(ph.plumbing)}, other ${fmtMs(ph.other)}`,
  );
  return parts.join('; ');
}

const toEpoch = (t: number) => performance.timeOrigin + t;

interface Added {
  created: CreatedPod;
  pod: CniPod;
  add: CniAdd;
}

/** Creates the load's pods, each handed to the node side once its create is answered; resolves with every ADD. */
async function drive(
  rig: PoolsRig,
  node: NodeSides,
  load: Exclude<ReadyLoad, { kind: 'waves' }>,
  prefix: string,
  capMs: number,
  gone: Set<string>,
): Promise<Added[]> {
  const { nodes } = rig.options;
  const adds: Promise<Added>[] = [];
  const departures: Promise<void>[] = [];
  const stopAt = performance.now() + capMs;
  /**
   * Creates pod i; its ADD runs on (in `adds`, and returned wrapped: an async function's promise would wait for it), as
   * the kubelet starts the sandbox of a pod bound to its node.
   */
  const start = async (i: number): Promise<{ added: Promise<Added> }> => {
    const nodeName = nodes[i % nodes.length]!;
    const created = await rig.createPod(`${prefix}-${String(i).padStart(5, '0')}`, nodeName);
    const pod = { namespace: 'bench', name: created.name, uid: created.uid, node: nodeName };
    const added = node.add(pod).then((add) => ({ created, pod, add }));
    adds.push(added);
    return { added };
  };
  if (load.kind === 'sequential') {
    for (let i = 0; i < load.pods && performance.now() < stopAt; i++) await (await start(i)).added;
  } else if (load.kind === 'steady' || load.kind === 'churn') {
    // Open loop: pod i is sent at t0 + i / rate whatever the answers so far.
    const t0 = performance.now();
    const creates: Promise<unknown>[] = [];
    for (let i = 0; i < load.perSecond * load.seconds && performance.now() < stopAt; i++) {
      const wait = t0 + (i * 1000) / load.perSecond - performance.now();
      if (wait > 0) await delay(wait);
      const started = start(i);
      if (load.kind === 'churn') {
        const lifetimeMs = load.lifetimeSeconds * 1000;
        // Ready, it lives its lifetime and goes (DEL, then the pod), as a short Job's pod does.
        const left = started
          .then(({ added }) => added)
          .then(async (a) => {
            if (a.add.error) return;
            await delay(lifetimeMs);
            // As a kubelet: the sandbox torn down (DEL) before the pod leaves the API, so its port is free only then.
            await node.del(a.pod);
            await rig.deletePod(a.created.name);
            gone.add(a.created.uid);
          });
        departures.push(left);
      }
      creates.push(started);
    }
    await Promise.all(creates);
  } else {
    // A burst: 16 creates in flight, the ADDs concurrent with them.
    await runPool(load.pods, 16, capMs, (i) => start(i).then(() => undefined));
  }
  const all = await Promise.all(adds);
  await Promise.all(departures);
  return all;
}

/** One wave: created, every ADD answered, settled, deleted (DEL, then the pod), settled; counts from a fresh start. */
async function runReadyWave(
  rig: PoolsRig,
  node: NodeSides,
  load: Exclude<ReadyLoad, { kind: 'waves' }>,
  prefix: string,
  capMs: number,
): Promise<ReadyWave> {
  await rig.resetCounts();
  await node.counts(true);
  const t0 = performance.now();
  // A churn's pods that already went (their lifetime is part of the load).
  const gone = new Set<string>();
  const added = await drive(rig, node, load, prefix, capMs, gone);
  const spanMs = Math.max(...added.map((a) => a.add.doneAt)) - toEpoch(t0);
  await rig.settle(capMs);
  const { claims, cold } = await rig.raven.claimKinds(false);
  const coldUids = new Set(cold);
  await runPool(added.length, 16, capMs, async (i) => {
    const { created, pod } = added[i]!;
    if (gone.has(created.uid)) return;
    await Promise.all([node.del(pod), rig.deletePod(created.name)]);
  });
  await rig.settle(capMs);
  const load1 = loadavg()[0]!;
  const ravenCalls = await rig.raven.counts(false);
  const cniCalls = await node.counts(false);
  // The warm-up pods (one per node) keep their ports: not the wave's.
  const portsLeft = (await node.podPorts(rig.clusterId)) - rig.options.nodes.length;
  const pooled = sum((await scrape(rig.raven.opsUrl)).samples('raven_port_pool_size').map((s) => s.value));
  return {
    pods: added.map(({ created, add }) => {
      const vifAt = rig.watch.annotatedAt.get(created.key);
      return {
        createdAt: toEpoch(created.createdAt),
        vifAt: vifAt === undefined ? undefined : toEpoch(vifAt),
        claimedAt: claims[created.uid],
        cold: coldUids.has(created.uid),
        add,
      };
    }),
    spanMs,
    ravenCalls,
    cniCalls,
    podWrites: rig.watch.podWrites,
    eventWrites: rig.watch.eventWrites,
    portsLeft,
    pooled,
    load1,
  };
}

interface ReadyCloud {
  label: string;
  cloud: BenchCloud;
  nodes: readonly string[];
  real: boolean;
  /** Raven and the nodes hold a VIF key (docs/pools.md, "Signed VIFs"). */
  signed: boolean;
}

async function runReadyScenario(step: Step, setup: ReadyCloud, sc: ReadyScenario, runtime: 'dist' | 'src') {
  const benchmark = `network ready (${sc.id}) ${sc.title}`;
  const capMs = setup.real ? 300_000 : 180_000;
  await step(`${benchmark}, ${setup.label}`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-bench-ready-'));
    const vifKeyFile = setup.signed ? join(dir, 'vif.key') : undefined;
    if (vifKeyFile) await writeFile(vifKeyFile, randomBytes(32), { mode: 0o600 });
    const rig = await PoolsRig.start(
      {
        cloud: setup.cloud,
        nodes: setup.nodes,
        workers,
        limiter: shippedLimiter,
        pools: 'defaults',
        ...(vifKeyFile ? { vifKeyFile } : {}),
      },
      runtime,
    ).catch(async (err: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw err;
    });
    let node: NodeSides | undefined;
    try {
      node = await NodeSides.start(setup.nodes, {
        ...rig.connections,
        mode: setup.real ? 'verify' : 'plug',
        stateDir: join(dir, 'cni-state'),
        ...(vifKeyFile ? { vifKeyFile } : {}),
        // On the simulator the node side is also the node's agent (ports ACTIVE when plugged, DOWN when unplugged).
        ...(rig.simBase ? { agentSimBase: rig.simBase } : {}),
      });
      await rig.warmUp(capMs);
      const base = `${setup.label}; Raven's defaults; ${setup.nodes.length} node${setup.nodes.length > 1 ? 's' : ''}`;
      const rows: Row[] = [];
      const waves = sc.load.kind === 'waves' ? sc.load.waves : 1;
      for (let i = 0; i < waves; i++) {
        const load = sc.load.kind === 'waves' ? { kind: 'burst' as const, pods: sc.load.pods } : sc.load;
        const w = await runReadyWave(rig, node, load, `r${sc.id}${i}`, capMs);
        const which =
          waves > 1 ? `; wave ${i + 1} of ${waves}${i > 0 ? " (the first wave's ports recycled)" : ''}` : '';
        const onSignature = w.pods.filter((p) => p.add.timings.verifiedBy === 'signature').length;
        const signed = setup.signed ? `; ${onSignature} of ${w.pods.length} ADDs on the signature alone` : '';
        rows.push({
          benchmark,
          condition: `${base}${which}${signed}; load average ${w.load1.toFixed(1)}`,
          result: describeReady(readyFigures(w, load), w, load, setup.real),
        });
      }
      return rows;
    } finally {
      await node?.stop();
      await rig.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/** The headline rows: on the simulator (zero and Neutron-like latency, the CNI plugging), and on the real Neutron. */
export async function runNetworkReady(step: Step, runtime: 'dist' | 'src', only: string | undefined): Promise<void> {
  const unsigned: Omit<ReadyCloud, 'signed'>[] = [
    {
      label: 'simulator, zero latency',
      cloud: { kind: 'sim', latency: false, linuxbridgeHosts: simNodes },
      nodes: simNodes,
      real: false,
    },
    {
      label: 'simulator, Neutron-like latency',
      cloud: { kind: 'sim', latency: true, linuxbridgeHosts: simNodes },
      nodes: simNodes,
      real: false,
    },
  ];
  const realMissing = await realNeutronMissing();
  if (!realMissing)
    unsigned.push({
      label: 'real Neutron (Zed, noauth, MariaDB)',
      cloud: { kind: 'real', cloudsYaml: realClouds },
      nodes: realNodes,
      real: true,
    });
  // Each cloud as shipped (no VIF key), then with signed VIFs: the node plugs without waiting for Neutron.
  const clouds: ReadyCloud[] = unsigned.flatMap((c) => [
    { ...c, signed: false },
    { ...c, label: `${c.label}, signed VIFs`, signed: true },
  ]);
  for (const setup of clouds)
    for (const sc of scenarios(setup.real)) {
      if (only && !`network ready ${setup.label} ${sc.id}`.includes(only)) continue;
      await runReadyScenario(step, setup, sc, runtime);
    }
  if (realMissing && (!only || 'network ready real Neutron'.includes(only)))
    await step('network ready, real Neutron', () =>
      Promise.resolve([{ benchmark: 'network ready', condition: 'real Neutron', result: `skipped: ${realMissing}` }]),
    );
}

export const readyNotes = [
  `- network ready (issue 28): per row fresh processes — the API server, the cloud (the simulator with its nodes' ports binding as linuxbridge, or the real Neutron), Raven's controller with its default settings (pools on at their default sizes, Kubernetes limiter qps ${shippedLimiter.qps} / burst ${shippedLimiter.burst}, ${workers} pod workers, Neutron 8 in flight; as the pools rows, strategy \`shared\` on one /16, pods only, leader election off; OpenStack request timeout 60 s on the simulator, 120 s on the real Neutron), and per node its node side (bench/cni-node-process.ts, a process each, as each node runs its own \`raven node\`) — and one unmeasured warm-up pod per node first.`,
  "- The node side does per pod what the kubelet, the runtime and `raven node` do: as soon as the pod's create is answered (it is pre-scheduled), a network namespace, then raven-cni's ADD through `runPlugin` with long-lived connections, as `raven node` runs a forwarded call (wait for the VIF, verify the port against Neutron, wait for its `device_id` to be the pod's, veth pair into the network's bridge). A failed ADD (raven-cni's 60 s VIF wait ran out, say) is tried again 1 s later, as the kubelet retries a sandbox (it backs off longer, from 10 s), for at most 300 s; network ready is the ADD that succeeded. Not included: the thin `raven-cni` process a runtime starts per call and the socket to `raven node` (0.13–0.14 s on this machine, docs/cni.md), and the kubelet's own pod watch. On the real Neutron the ports bind to a host this machine cannot plug (an OVS one): raven-cni's verification (`verifiedPlan`) runs alone, no plumbing.",
  "- pod → network ready: the create's answer → the ADD's answer (epoch clocks of one machine). Cold path: pods whose port was created for them (`POST ports` with their `device_id`) rather than claimed from a pool. Neutron per pod lifecycle: Raven's requests (counted on its session) from the first create to the settle after the deletes, ÷ pods; raven-cni's reads separately. Kubernetes writes: MODIFIED pods and Events in the namespace seen on the watch. Ports left: the cluster's `compute:raven` ports in Neutron after the deletes settled, less the warm-up pods' own. Where the time went: means over the pods from raven-cni's own split (its ADD log line) of the ADD that succeeded, failed ADDs before it apart; \"other\" is the Kubernetes re-reads after each sleep and the node side's overhead. Load average: the 1-minute one at the end of the wave (2 cores shared with other sessions).",
  '- Scenarios: (a) each pod after the previous one is ready; (b) 16 creates in flight; (c) open loop at the rate (50 pods/s on the simulator, 10 on the real Neutron); (d) a 40-pod burst, every pod ready, all deleted, settled, then again on the same controller; (e) open loop at 10 pods/s (both clouds) for 90 s, each pod torn down 10 s after its ADD succeeded (DEL, and once it answered the pod deleted, as a kubelet does), so ports come back while pods keep coming — its cold-path share and p99 "after the first minute" are over the pods created 60 s or more after the first.',
];
