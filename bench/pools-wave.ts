/**
 * One measured wave of the `pools` group: a load of pre-scheduled pods (one at a time, a steady rate, or a burst),
 * every pod's life from create to delete, and the rig settled after it — so the Neutron calls counted are the whole
 * lifecycle's, refills and trims included, and nothing of one wave spills into the next.
 */
import { performance } from 'node:perf_hooks';
import type { CreatedPod, PoolsRig } from './pools-rig.ts';
import { delay, runPool } from './support.ts';

export type Load =
  | { kind: 'sequential'; pods: number }
  | { kind: 'steady'; perSecond: number; seconds: number }
  | { kind: 'burst'; pods: number };

export interface WaveCaps {
  /** Creates stop being sent after this. */
  createMs: number;
  /** Then every pod has this long to get its VIF. */
  vifMs: number;
  /** Each wait for the controller to settle (after the creates, after the deletes). */
  settleMs: number;
}

export interface Wave {
  created: number;
  annotated: number;
  /** pod → VIF (create answered → the watch shows the annotation), ms. */
  vif: number[];
  /** pod → its port the pod's in Neutron (create answered → Neutron's answer to the claim or create), ms. */
  claimed: number[];
  /**
   * VIF → port claimed (the watch shows the annotation → Neutron's answer to the claim), ms: how long `raven-cni` may
   * wait for the port's `device_id` after it reads the VIF. Negative on the cold path (the create comes first).
   */
  claimLag: number[];
  /** First create sent → last VIF seen. */
  spanMs: number;
  /** First create sent → last create answered. */
  createSpanMs: number;
  /** Last delete answered → the controller settled (ports back in their pool, or deleted). */
  deleteSettleMs: number;
  neutron: { counts: Record<string, number>; isNeutron: (key: string) => boolean; source: string };
  podWrites: number;
  eventWrites: number;
  cpuSeconds: number;
  peakRss: number;
  incomplete: string;
}

export const loadPods = (load: Load): number => (load.kind === 'steady' ? load.perSecond * load.seconds : load.pods);

/** Creates the load's pods (pod i on node i mod n), as the load says; returns them with when each create answered. */
async function drive(rig: PoolsRig, load: Load, prefix: string, capMs: number): Promise<CreatedPod[]> {
  const { nodes } = rig.options;
  const name = (i: number) => `${prefix}-${String(i).padStart(5, '0')}`;
  const node = (i: number) => nodes[i % nodes.length]!;
  const created: CreatedPod[] = [];
  const stopAt = performance.now() + capMs;
  if (load.kind === 'sequential') {
    for (let i = 0; i < load.pods && performance.now() < stopAt; i++) {
      const pod = await rig.createPod(name(i), node(i));
      created.push(pod);
      await rig.watch.until(() => rig.watch.annotatedAt.has(pod.key), Math.max(0, stopAt - performance.now()));
    }
  } else if (load.kind === 'steady') {
    // Open loop: pod i is sent at t0 + i / rate whatever the answers so far (a cluster's pods do not wait for Raven).
    const t0 = performance.now();
    const sent: Promise<void>[] = [];
    for (let i = 0; i < load.perSecond * load.seconds && performance.now() < stopAt; i++) {
      const wait = t0 + (i * 1000) / load.perSecond - performance.now();
      if (wait > 0) await delay(wait);
      sent.push(rig.createPod(name(i), node(i)).then((pod) => void created.push(pod)));
    }
    await Promise.all(sent);
  } else {
    await runPool(load.pods, 16, capMs, async (i) => {
      created.push(await rig.createPod(name(i), node(i)));
    });
  }
  return created;
}

/** One wave: its pods created, wired, settled, deleted, settled again; every count from a fresh start. */
export async function runWave(rig: PoolsRig, load: Load, prefix: string, caps: WaveCaps): Promise<Wave> {
  await rig.resetCounts();
  const before = await rig.raven.usage(true);
  const t0 = performance.now();
  const pods = await drive(rig, load, prefix, caps.createMs);
  const createSpanMs = Math.max(...pods.map((p) => p.createdAt)) - t0;
  const { annotatedAt } = rig.watch;
  const all = await rig.watch.until(() => pods.every((p) => annotatedAt.has(p.key)), caps.vifMs);
  const wired = pods.filter((p) => annotatedAt.has(p.key));
  const spanMs = Math.max(...wired.map((p) => annotatedAt.get(p.key)!)) - t0;
  await rig.settle(caps.settleMs);
  const claims = await rig.raven.claims(false);

  await runPool(pods.length, 16, caps.createMs, (i) => rig.deletePod(pods[i]!.name));
  const settleMs = await rig.settle(caps.settleMs);
  const after = await rig.raven.usage(false);
  const neutron = await rig.neutronCounts();

  const toEpoch = (t: number) => performance.timeOrigin + t;
  return {
    created: pods.length,
    annotated: wired.length,
    vif: wired.map((p) => Math.max(0, annotatedAt.get(p.key)! - p.createdAt)),
    claimed: wired.flatMap((p) => (claims[p.uid] === undefined ? [] : [claims[p.uid]! - toEpoch(p.createdAt)])),
    claimLag: wired.flatMap((p) =>
      claims[p.uid] === undefined ? [] : [claims[p.uid]! - toEpoch(annotatedAt.get(p.key)!)],
    ),
    spanMs,
    createSpanMs,
    deleteSettleMs: settleMs,
    neutron,
    podWrites: rig.watch.podWrites,
    eventWrites: rig.watch.eventWrites,
    cpuSeconds: (after.cpuMicros - before.cpuMicros) / 1e6,
    peakRss: after.peakRss,
    incomplete: all ? '' : `INCOMPLETE: ${wired.length} of ${pods.length} pods got a VIF within ${caps.vifMs / 1000} s`,
  };
}
