/**
 * The `pools` benchmark group. Its headline (issue 28, pools-ready.ts): pod created → raven-cni ADD answered with
 * Raven's default settings. Then (issue 15, "How it is proven"): warm port pools against the cold path, side by side in
 * one run, on the simulator without and with Neutron-like latency and on the real Neutron when it runs — for pods one
 * at a time, a steady rate and a burst: pod → VIF, pod → port claimed in Neutron, pods/s, Neutron calls per pod
 * lifecycle (create + delete, refills and trims included), Kubernetes writes per pod, the controller's CPU and peak
 * RSS; and a restart over 10,000 wired pods (pools-restart.ts). Targets are printed beside the numbers.
 */
import type { Step } from './client-group.ts';
import { PoolsRig, ravenRuntime, type PoolSizes } from './pools-rig.ts';
import { readyNotes, runNetworkReady } from './pools-ready.ts';
import { restartNotes, runRestart } from './pools-restart.ts';
import { loadPods, runWave, type Load, type Wave, type WaveCaps } from './pools-wave.ts';
import { imageNodeFlags } from './raven-memory.ts';
import { neutronLikeText, perPod, realClouds, realNeutronMissing, type BenchCloud } from './raven-rig.ts';
import { fmtInt, fmtMs, percentile } from './support.ts';

/** Raven's shipped Kubernetes client limiter (`kubernetes.qps` / `burst`): what `raven run` writes with. */
const shippedLimiter = { qps: 50, burst: 100 };
/** `raven dev`'s limiter: for a burst, the warm path's own pace. */
const devLimiter = { qps: 1000, burst: 2000 };
const workers = 8;
/** Raven's default `portPools.batch`. */
const batch = 4;
const simNodes = Array.from({ length: 10 }, (_, i) => `node-${String(i + 1).padStart(2, '0')}`);
/** The only host the loopback Neutron's ML2 driver binds (ACTIVE at once): the issue's rig bound its ports there. */
const realNodes = ['host-ovs-filter-active'];

const targets = {
  p99Ms: 25,
  neutronPerPod: 1.1,
  kubeWrites: 1,
  kuryrSingleMs: 1_240,
  singleSpeedup: 50,
  burstMs: 1_000,
  kuryrBurstMs: 8_400,
  rssMb: 60,
};

interface Scenario {
  id: 'a' | 'b' | 'c' | 'd' | 'e' | 'f';
  title: string;
  load: Load;
  caps: WaveCaps;
  /** Also a warm row with `raven dev`'s Kubernetes limiter. */
  unlimited?: boolean;
  /** The nodes are Nova VMs (nested mode): pods get subports of their VM's trunk, pools hold free subports. */
  vms?: boolean;
}

interface CloudSetup {
  label: string;
  cloud: BenchCloud;
  nodes: readonly string[];
  scenarios: Scenario[];
}

const simCaps: WaveCaps = { createMs: 60_000, vifMs: 120_000, settleMs: 120_000 };
const realCaps: WaveCaps = { createMs: 120_000, vifMs: 180_000, settleMs: 240_000 };

/** `RAVEN_BENCH_POOLS_QUICK=1`: smaller (b), (c) and restart, for a quick look (a few minutes). */
export const quick = process.env.RAVEN_BENCH_POOLS_QUICK === '1';
const restartPods = quick ? 2_000 : 10_000;

function titled(id: Scenario['id'], load: Load, caps: WaveCaps, unlimited = false): Scenario {
  const title =
    load.kind === 'sequential'
      ? `${fmtInt(load.pods)} pods one at a time`
      : load.kind === 'steady'
        ? `a steady ${fmtInt(load.perSecond)} pods/s for ${load.seconds} s`
        : `a ${fmtInt(load.pods)}-pod burst`;
  return { id, title, load, caps, ...(unlimited ? { unlimited } : {}) };
}

function simScenarios(): Scenario[] {
  return [
    titled('a', { kind: 'sequential', pods: 20 }, simCaps),
    titled('b', { kind: 'steady', perSecond: 50, seconds: quick ? 5 : 20 }, simCaps),
    titled('c', { kind: 'burst', pods: quick ? 250 : 1_000 }, simCaps, true),
    // Issue 28's waves: a burst of 14 pods per node (its 40 pods on 3 nodes) created then deleted, twice.
    titled('d', { kind: 'burst', pods: 140 }, simCaps),
    // Issue 29: nested pods, on VM nodes' trunks (warm: subport pools).
    { ...titled('e', { kind: 'sequential', pods: 20 }, simCaps), vms: true },
    { ...titled('f', { kind: 'burst', pods: 140 }, simCaps), vms: true },
  ];
}

/**
 * `RAVEN_BENCH_POOLS_SIZES=defaults`: the warm rows give no pool sizes, so Raven runs with its own defaults (what a
 * user gets) instead of pools sized to cover the wave.
 */
const defaultSizes = process.env.RAVEN_BENCH_POOLS_SIZES === 'defaults';

/**
 * The real Neutron makes about 2 bound ports a second (docs/openstack.md): (b) keeps the target's rate, 50 pods/s, for
 * 2 s — 100 pods, whose pool the warm row pre-fills in about a minute and the cold path takes about as long to wire.
 */
function realScenarios(): Scenario[] {
  return [
    titled('a', { kind: 'sequential', pods: 20 }, realCaps),
    titled('b', { kind: 'steady', perSecond: 50, seconds: quick ? 1 : 2 }, realCaps),
    titled('c', { kind: 'burst', pods: 50 }, realCaps),
  ];
}

/**
 * Pool sizes that cover a wave: `min` = the wave's pods per node, so no pod of it finds its pool empty however slowly
 * Neutron refills; `max` = 2 × min + batch, room for the refill back to min (which may overshoot by up to a batch)
 * plus every port the wave gives back, so the pools recycle and never trim; `batch` Raven's default.
 */
function sizesFor(load: Load, nodes: number): PoolSizes {
  const min = Math.ceil(loadPods(load) / nodes);
  return { min, max: 2 * min + batch, batch };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** `met`, or `missed by …` for a figure that must be at most `target`. */
function verdict(value: number, target: number, fmt: (n: number) => string): string {
  return value <= target ? 'met' : `missed by ${fmt(value - target)}`;
}

function describeWave(w: Wave, sc: Scenario, cloud: CloudSetup, warm: boolean): string {
  const p99 = percentile(w.vif, 99);
  const p50 = percentile(w.vif, 50);
  const neutronTotal = Object.entries(w.neutron.counts)
    .filter(([k]) => w.neutron.isNeutron(k))
    .reduce((s, [, n]) => s + n, 0);
  const n = Math.max(1, w.annotated);
  const perLifecycle = neutronTotal / n;
  const writes = (w.podWrites + w.eventWrites) / n;
  const parts: string[] = [];
  let vif = `pod → VIF p50 ${fmtMs(p50)}, p99 ${fmtMs(p99)}, max ${fmtMs(Math.max(...w.vif))}`;
  if (warm && sc.load.kind === 'steady')
    vif += ` (target p99 ≤ ${targets.p99Ms} ms: ${verdict(p99, targets.p99Ms, fmtMs)})`;
  if (warm && cloud.cloud.kind === 'real' && sc.id === 'a')
    vif += ` (kuryr's warm pool 1.24 s: ${(targets.kuryrSingleMs / p50).toFixed(0)}× faster; target ≥ ${targets.singleSpeedup}×, p50 ≤ 25 ms: ${verdict(p50, targets.kuryrSingleMs / targets.singleSpeedup, fmtMs)})`;
  parts.push(vif);
  parts.push(
    w.claimed.length > 0
      ? `pod → port claimed in Neutron p50 ${fmtMs(percentile(w.claimed, 50))}, p99 ${fmtMs(percentile(w.claimed, 99))}, max ${fmtMs(Math.max(...w.claimed))}${w.claimed.length < w.annotated ? ` (${w.annotated - w.claimed.length} pods deleted unclaimed)` : ''}`
      : 'no claim seen',
  );
  if (warm && w.claimLag.length > 0)
    parts.push(
      `VIF → port claimed p50 ${fmtMs(percentile(w.claimLag, 50))}, p99 ${fmtMs(percentile(w.claimLag, 99))}, max ${fmtMs(Math.max(...w.claimLag))} (raven-cni waits ≤ 10 s)`,
    );
  let rate = `${((w.annotated * 1000) / w.spanMs).toFixed(1)} pods/s (first create → last VIF ${(w.spanMs / 1000).toFixed(2)} s`;
  if (sc.load.kind === 'steady') rate += `; creates sent at ${((w.created * 1000) / w.createSpanMs).toFixed(1)}/s`;
  rate += ')';
  if (warm && cloud.cloud.kind === 'real' && sc.id === 'c')
    rate += ` (target burst ≤ 1 s, kuryr's warm pool 8.4 s: ${verdict(w.spanMs, targets.burstMs, (x) => `${(x / 1000).toFixed(2)} s`)}; ${(targets.kuryrBurstMs / w.spanMs).toFixed(1)}× kuryr)`;
  parts.push(rate);
  parts.push(
    `Neutron ${perPod(w.neutron.counts, n, w.neutron.isNeutron)} per pod lifecycle by ${w.neutron.source}${warm ? ` (target ≤ ${targets.neutronPerPod}: ${verdict(perLifecycle, targets.neutronPerPod, (x) => x.toFixed(2))})` : ''}`,
  );
  parts.push(
    `Kubernetes ${(w.podWrites / n).toFixed(2)} pod updates + ${(w.eventWrites / n).toFixed(2)} Events per pod (target ${targets.kubeWrites} write: ${verdict(writes, targets.kubeWrites, (x) => x.toFixed(2))})`,
  );
  const rssTarget =
    w.annotated >= 1_000
      ? ` (target ≤ ${targets.rssMb} MB at 1,000 pods: ${verdict(w.peakRss / 1e6, targets.rssMb, (x) => `${x.toFixed(0)} MB`)})`
      : '';
  parts.push(
    `controller CPU ${w.cpuSeconds.toFixed(2)} s, peak RSS ${mb(w.peakRss)}${rssTarget}; settled ${(w.deleteSettleMs / 1000).toFixed(1)} s after the last delete`,
  );
  if (w.incomplete) parts.push(w.incomplete);
  return parts.join('; ');
}

async function runScenario(step: Step, setup: CloudSetup, sc: Scenario, runtime: 'dist' | 'src'): Promise<void> {
  const pods = loadPods(sc.load);
  const benchmark = `pools (${sc.id}) ${sc.title}${sc.vms ? ' on VM nodes (nested: subports)' : ''}`;
  const nodes = `${setup.nodes.length} ${sc.vms ? 'VM node' : 'node'}${setup.nodes.length > 1 ? 's' : ''}`;
  const base = `${setup.label}; ${fmtInt(pods)} pods on ${nodes}`;
  const rigOptions = { cloud: setup.cloud, nodes: setup.nodes, workers, ...(sc.vms ? { vms: true } : {}) };
  await step(`${benchmark}, ${setup.label}, cold`, async () => {
    const rig = await PoolsRig.start({ ...rigOptions, limiter: shippedLimiter, pools: undefined }, runtime);
    try {
      await rig.warmUp(sc.caps.vifMs);
      const w = await runWave(rig, sc.load, 'cold', sc.caps);
      return [{ benchmark, condition: `${base}; COLD: pools off`, result: describeWave(w, sc, setup, false) }];
    } finally {
      await rig.stop();
    }
  });
  const sized = sizesFor(sc.load, setup.nodes.length);
  const sizes: Partial<PoolSizes> = defaultSizes ? {} : sized;
  const pool = defaultSizes
    ? "Raven's default sizes"
    : `min ${sized.min}, max ${sized.max}, batch ${sized.batch} per node`;
  const warm = async (limiter: { qps: number; burst: number }, waves: 1 | 2, note: string) => {
    const rig = await PoolsRig.start({ ...rigOptions, limiter, pools: sizes }, runtime);
    try {
      const fill = await rig.warmUp(sc.caps.settleMs);
      const prefilled = `pre-filled to ${fmtInt(fill.free)} free ports per node in ${(fill.fillMs / 1000).toFixed(1)} s`;
      const first = await runWave(rig, sc.load, 'warm1', sc.caps);
      const rows = [
        {
          benchmark,
          condition: `${base}; WARM${note}: pools ${pool}, ${prefilled}; first wave`,
          result: describeWave(first, sc, setup, true),
        },
      ];
      if (waves === 2) {
        const second = await runWave(rig, sc.load, 'warm2', sc.caps);
        rows.push({
          benchmark,
          condition: `${base}; WARM${note}, second wave: the first wave's ports, recycled`,
          result: describeWave(second, sc, setup, true),
        });
      }
      return rows;
    } finally {
      await rig.stop();
    }
  };
  await step(`${benchmark}, ${setup.label}, warm`, () => warm(shippedLimiter, 2, ''));
  // Raven's own Kubernetes limiter bounds a big burst (one annotation write per pod at qps 50): how fast the warm path
  // is without it.
  if (sc.unlimited)
    await step(`${benchmark}, ${setup.label}, warm, raven dev's limiter`, () =>
      warm(
        devLimiter,
        1,
        ` with \`raven dev\`'s limiter qps ${fmtInt(devLimiter.qps)} / burst ${fmtInt(devLimiter.burst)}`,
      ),
    );
}

export async function runPoolsGroup(step: Step): Promise<void> {
  const runtime = ravenRuntime();
  const only = process.env.RAVEN_BENCH_POOLS_ONLY;
  // The headline first: pod → network ready with Raven's defaults (issue 28).
  await runNetworkReady(step, runtime, only);
  const clouds: CloudSetup[] = [
    {
      label: 'simulator, zero latency',
      cloud: { kind: 'sim', latency: false },
      nodes: simNodes,
      scenarios: simScenarios(),
    },
    {
      label: 'simulator, Neutron-like latency',
      cloud: { kind: 'sim', latency: true },
      nodes: simNodes,
      scenarios: simScenarios(),
    },
  ];
  const realMissing = await realNeutronMissing();
  if (!realMissing)
    clouds.push({
      label: 'real Neutron (Zed, noauth, MariaDB)',
      cloud: { kind: 'real', cloudsYaml: realClouds },
      nodes: realNodes,
      scenarios: realScenarios(),
    });
  for (const setup of clouds)
    for (const sc of setup.scenarios) {
      if (only && !`${setup.label} ${sc.id}${sc.vms ? ' nested' : ''}`.includes(only)) continue;
      await runScenario(step, setup, sc, runtime);
    }
  if (realMissing && (!only || 'real Neutron'.includes(only)))
    await step('pools, real Neutron', () =>
      Promise.resolve([{ benchmark: 'pools (a)–(c)', condition: 'real Neutron', result: `skipped: ${realMissing}` }]),
    );
  if (!only || only === 'restart')
    await step(`pools, restart over ${fmtInt(restartPods)} wired pods`, () => runRestart(runtime, restartPods));
}

export const poolsNotes = [
  ...readyNotes,
  `- pools group runtime: the controller ran ${ravenRuntime() === 'dist' ? `compiled (dist/, current with src/), without tsx, with the Node.js flags of the image's entrypoint (${imageNodeFlags().join(' ')})` : 'the sources through tsx (dist/ missing or older than src/: `npm run build` for the compiled runtime)'}.`,
  `- pools group (issue 15): per row fresh processes — the API server (\`tls: 'none'\`), the OpenStack simulator (Keystone auth, provisioning delay 0; none for the real Neutron) and Raven's controller (\`composeRaven\` under its manager as \`raven run\` runs it: compiled dist/ when \`npm run build\` is current, else the sources through tsx — the table's runtime line says which; strategy \`shared\` on one /16, leader election off, pods only, ${workers} pod workers, Neutron 8 in flight, Raven's shipped Kubernetes limiter qps ${shippedLimiter.qps} / burst ${shippedLimiter.burst} with Events on a client of their own as \`raven run\` connects, all else default). Node objects exist (${simNodes.length} on the simulator; on the real Neutron the one host its ML2 driver binds, \`${realNodes[0]}\`) and pods are pre-scheduled round-robin (\`spec.nodeName\`); no kubelet runs.`,
  `- Each rig first wires one unmeasured pod per node (the cluster network made, connections open; with pools on, that first pod of a node takes the cold path and makes its node's pool, which is then filled to min — "filled in" is from those pods' creates to every pool at min). COLD rows run with \`portPools.enabled: false\`. WARM rows size the pools to cover the wave: min = the wave's pods per node (no pod finds its pool empty however slowly Neutron refills), max = 2 × min + batch (room for the refill back to min plus every port the wave returns: the pools recycle, never trim), batch = Raven's default ${batch}. The second wave runs on the same controller after the first: its ports are the first wave's, recycled.`,
  "- A wave: the pods created (a: one at a time, each after the previous one's VIF; b: open loop at the rate, whatever the answers; c: 16 creates in flight), every VIF awaited, the controller settled (no key queued or in work in the pod, port-claim, port-pool and port-refresh controllers, and no OpenStack request for 1 s, 3 s on the real Neutron, polled on /metrics every 100 ms), the pods deleted (16 in flight, grace period 0), settled again. Neutron calls per pod lifecycle are every Neutron request from the first create to that last settle ÷ pods — claims, refills back to min, trims, cold creates and deletes alike.",
  "- pod → VIF: the create's answer → the watch event first showing `raven.openstack.org/vif` (this process's clock). pod → port claimed in Neutron: the create's answer → Neutron's answer to the request that made the port the pod's (`device_id`: a pool port's claim, `PUT ports/{id}`; a cold create, `POST ports`), noted by an interceptor on Raven's session (epoch clocks of one machine); raven-cni plugs a port only once its `device_id` is the pod's, so this is when the node can plug it. VIF → port claimed (warm rows): the watch event showing the VIF → that claim's answer, the time raven-cni (which waits at most 10 s) may wait for the port's `device_id` after reading the VIF. pods/s = pods ÷ (first create sent → last VIF seen).",
  `- Counts: on the simulator, \`/_sim/counters\` (every HTTP request that reached it, retries included; Keystone left out); on the real Neutron, an interceptor outermost on Raven's session (one per logical call). Kubernetes writes: MODIFIED pod events and ADDED/MODIFIED Events in the benchmark namespace seen on the watch over the wave, ÷ pods (this process only creates and deletes). Controller CPU: \`process.cpuUsage()\` of the controller over the wave (the /metrics polling included); peak RSS: its VmHWM, reset when the wave starts (\`/proc/self/clear_refs\`).`,
  `- Neutron-like latency: simulator fault rules, ${neutronLikeText}. Requests are delayed independently, so throughput grows with requests in flight; the real Neutron is CPU-bound (≈ 2 bound creates/s, a bulk create ≈ as slow per port), so those rows flatter refills and the cold path, and the real-Neutron rows are the check. On the real Neutron (${realClouds}, cloud raven-real-noauth; \`npm run openstack:start\`) each rig has a fresh cluster id, and deletes what it made afterwards (not timed); (b) keeps the target's 50 pods/s for only 2 s (100 pods): its pool pre-fill and the cold path's creates run at a few ports a second there (100 pre-filled in ≈ 20 s). \`RAVEN_BENCH_POOLS_QUICK=1\` runs (b) for 5 s, (c) with 250 pods and the restart over 2,000 pods on the simulator (1 s on the real Neutron), for a quick look; \`RAVEN_BENCH_POOLS_ONLY=<text>\` runs the rows whose cloud label and scenario letter contain it (\`restart\`: the restart row only; \`nested\`: the VM-node rows (e), (f) alone; the network-ready rows match \`network ready <cloud label> <letter>\`, so \`network ready\` runs them alone).`,
  `- Targets (issue 15): warm p99 ≤ ${targets.p99Ms} ms at 50 pods/s; Neutron ≤ ${targets.neutronPerPod} calls per pod lifecycle amortised; ${targets.kubeWrites} Kubernetes write per pod; real Neutron: a single pod ≥ ${targets.singleSpeedup}× faster than kuryr's warm pool (1.24 s → ≤ 25 ms), a 50-pod burst from a warm pool ≤ 1 s (kuryr's warm pool 8.4 s).`,
  "- (e), (f), simulator only (issue 29, nested pods): the same loads on Nova VM nodes — each node a server's port on a network of VMs and a Node whose `providerID` names it, Raven with `nested.mode: auto` making each VM's trunk in the warm-up. A pod gets a subport of its VM's trunk: COLD, a port create, its add to the trunk and its claim on the pod's path (then its removal and delete); WARM, a free subport of its VM's pool, already on the trunk (the refill made and added it), and its claim after the VIF; a deleted pod's subport goes back to the pool, on the trunk. The Neutron calls per pod lifecycle of a WARM row include each refill's add to the trunk (one request for its ports) and its one read of the ports after it.",
  "- (d), simulator only: issue 28's waves, a 140-pod burst (14 per node, as its 40 pods on 3 nodes) created then deleted, twice. `RAVEN_BENCH_POOLS_SIZES=defaults`: the WARM rows give no pool sizes, so Raven runs with its own defaults (what a user gets) instead of pools sized to cover the wave; the warm-up then waits for the default min (2). Cold-path share of a warm row: its Events per pod (a cold create writes `PortCreated`, a warm hit none).",
  ...restartNotes(restartPods),
];
