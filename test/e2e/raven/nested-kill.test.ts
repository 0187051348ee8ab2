/**
 * Issue 29, nested pods and crashes: Raven SIGKILLed at seeded points during bursts of pods on a VM node, and
 * restarted each time. Then every pod has its own subport of the node's trunk, claimed for it alone, each VLAN id is
 * on the trunk once, and no two pods' VIFs name one port or one VLAN id. Neutron's trunk is the only record of the
 * VLAN ids, so a crash between an add and its answer leaves nothing to reconcile but the trunk itself. Then the same
 * with subport pools on: no port claimed twice, no VLAN id twice, and the free subports a killed Raven left on the
 * trunk are adopted by the next one (its trunks read slowly, so that its first sweeps come before) and handed out
 * before it makes any.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../support/node-test.ts';
import { parseVif, VIF_ANNOTATION, type Pod } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { Port } from '../../../src/openstack/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  createVmNode,
  inParallel,
  podBody,
  ravenSettings,
  seeded,
  killChild,
  startControllerChild,
  startEnv,
  type ControllerChild,
  type Env,
} from './support.ts';

const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 29_292_929);
const CLUSTER = 'nestedkill';
const NS = 'nk';
const BURSTS = 3;
const PER_BURST = 8;

describe(`nested pods: Raven SIGKILLed during bursts (seed ${SEED})`, { timeout: 420_000 }, () => {
  let env: Env;
  let child: ControllerChild | undefined;
  let vmPort: Port;
  const random = seeded(SEED);

  before(async () => {
    env = await startEnv(SEED);
    vmPort = await createVmNode(env, 'vm-1', '192.168.50.0/24');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    // Neutron-like latencies, so that kills land between a port's create, its add to the trunk and its claim.
    env.sim.sim.faults.addRule({ method: 'POST', path: '/network/v2.0/ports', latency: { p50Ms: 150, p99Ms: 300 } });
    env.sim.sim.faults.addRule({ method: 'PUT', path: '/network/v2.0/ports/{id}', latency: { p50Ms: 40, p99Ms: 80 } });
    env.sim.sim.faults.addRule({
      method: 'PUT',
      path: '/network/v2.0/trunks/{id}/add_subports',
      latency: { p50Ms: 60, p99Ms: 120 },
    });
  });
  after(async () => {
    await killChild(child);
    await env.stop();
  });
  const settings = {
    ...ravenSettings(CLUSTER, 'shared'),
    RAVEN_NESTED_MODE: 'auto',
    RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
  };

  const trunk = () => [...env.sim.sim.neutron.trunks.values()].find((t) => t.port_id === vmPort.id);
  const livePods = async () => (await env.client.listAll<Pod>(resources.pods, { namespace: NS })).items;
  let serial = 0;

  /** Bursts of pods on the VM, Raven SIGKILLed at a seeded moment of each; then Raven again until all are wired. */
  async function burstsAndConverge(startChild: () => ControllerChild) {
    for (let burst = 0; burst < BURSTS; burst++) {
      child = startChild();
      await child.opsUrl;
      const pods = Array.from({ length: PER_BURST }, () => podBody(NS, `p-${serial++}`, 'vm-1'));
      await inParallel(pods, PER_BURST, (p) => env.client.create(resources.pods, p, { namespace: NS }));
      await sleep(100 + Math.floor(random() * 900));
      child.proc.kill('SIGKILL');
      await child.exited;
    }
    child = startChild();
    const converged = await waitFor(
      'every pod on a subport of its own',
      async () => {
        const pods = await livePods();
        const vifs = pods.map((p) => parseVif(p.metadata.annotations?.[VIF_ANNOTATION]));
        const t = trunk();
        const ok =
          t &&
          vifs.every((v, i) => v?.nested && v.podUid === pods[i]!.metadata.uid) &&
          vifs.every((v) => env.sim.sim.neutron.ports.get(v!.portId)?.device_id === v!.podUid);
        return ok ? { pods, vifs: vifs.map((v) => v!), trunk: t } : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const { vifs, trunk: t } = converged;
    assert.equal(new Set(vifs.map((v) => v.portId)).size, vifs.length, 'two pods name one port');
    assert.equal(new Set(vifs.map((v) => v.nested!.vlan)).size, vifs.length, 'two pods name one VLAN id');
    const vlans = t.sub_ports.map((s) => s.segmentation_id);
    assert.equal(new Set(vlans).size, vlans.length, 'a VLAN id is on the trunk twice');
    const onTrunk = new Map(t.sub_ports.map((s) => [s.port_id, s.segmentation_id]));
    for (const vif of vifs)
      assert.equal(onTrunk.get(vif.portId), vif.nested!.vlan, 'a VIF names a VLAN id its port is not on');
    return { vifs, trunk: t };
  }

  it('leaves no subport claimed twice and no VLAN id twice on the trunk', async () => {
    const { vifs, trunk: t } = await burstsAndConverge(() =>
      startControllerChild(env, { ...settings, RAVEN_PORT_POOLS: 'false' }),
    );
    assert.equal(vifs.length, BURSTS * PER_BURST);
    // A subport a crash left between its add and its claim is taken up by its pod: none is claimed by no live pod.
    const uids = new Set(vifs.map((v) => v.podUid));
    for (const s of t.sub_ports)
      assert.ok(
        uids.has(env.sim.sim.neutron.ports.get(s.port_id)?.device_id ?? ''),
        `subport ${s.port_id} is no pod's`,
      );
  });

  it('with subport pools: the same, and the free subports on the trunk are adopted into the pool at a restart', async () => {
    await killChild(child);
    for (const pod of await livePods()) await env.client.delete(resources.pods, pod.metadata.name!, NS);
    // Pools on, the garbage collector sweeping every second with no grace: a free subport it took would show.
    const pooled = () =>
      startControllerChild(env, {
        ...settings,
        RAVEN_PORT_POOL_SIZING: 'static',
        RAVEN_PORT_POOL_MIN: '3',
        RAVEN_PORT_POOL_MAX: '16',
        RAVEN_PORT_POOL_BATCH: '3',
        RAVEN_GC_INTERVAL_SECONDS: '1',
        RAVEN_GC_GRACE_SECONDS: '0',
      });
    const { vifs } = await burstsAndConverge(pooled);
    assert.equal(vifs.length, (await livePods()).length);
    // Free subports on the trunk (the pool's), then Raven killed: the next one finds them on the trunk and hands
    // them out before it makes any.
    const uids = async () => new Set((await livePods()).map((p) => p.metadata.uid));
    const free = async () => {
      const live = await uids();
      return (trunk()?.sub_ports ?? [])
        .map((s) => env.sim.sim.neutron.ports.get(s.port_id)!)
        .filter((p) => p.name.startsWith(`raven/${CLUSTER}/`) && !live.has(p.device_id));
    };
    // A restarted Raven knows a pool from its free ports or a pod's take: the last kill may have left none free.
    await env.client.create(resources.pods, podBody(NS, 'primer', 'vm-1'), { namespace: NS });
    await waitFor('free subports on the trunk', async () => ((await free()).length >= 3 ? true : undefined), {
      timeoutMs: 60_000,
    });
    child!.proc.kill('SIGKILL');
    await child!.exited;
    const before = new Map((await free()).map((p) => [p.id, trunk()!.sub_ports.find((s) => s.port_id === p.id)!]));
    // The trunks read slowly: the garbage collector's first sweep comes before Raven knows the free ports are subports
    // of a live VM's trunk.
    env.sim.sim.faults.addRule({
      method: 'GET',
      path: '/network/v2.0/trunks',
      latency: { p50Ms: 2_500, p99Ms: 3_000 },
    });
    child = pooled();
    await child.opsUrl;
    await env.client.create(resources.pods, podBody(NS, 'after', 'vm-1'), { namespace: NS });
    const vif = await waitFor(
      "the new pod's VIF",
      async () => {
        const pod = await env.client.get<Pod>(resources.pods, 'after', NS);
        return parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])?.nested
          ? parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(before.has(vif.portId), 'the pod got a new subport: the free ones on the trunk were not adopted');
    assert.equal(vif.nested?.vlan, before.get(vif.portId)!.segmentation_id);
    await waitFor('the claim', () => env.sim.sim.neutron.ports.get(vif.portId)?.device_id === vif.podUid || undefined, {
      timeoutMs: 30_000,
    });
    // Some sweeps later, the free subports not taken are still on the trunk: the garbage collector left them.
    await sleep(3_000);
    for (const [id, sub] of before)
      assert.deepEqual(
        trunk()?.sub_ports.find((s) => s.port_id === id),
        sub,
        `free subport ${id} left the trunk`,
      );
    const vlans = trunk()!.sub_ports.map((s) => s.segmentation_id);
    assert.equal(new Set(vlans).size, vlans.length, 'a VLAN id is on the trunk twice');
  });
});
