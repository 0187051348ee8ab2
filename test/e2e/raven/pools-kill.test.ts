/**
 * Issue 15's crash safety: Raven with warm port pools SIGKILLed at ten seeded points while pods come and go — pools
 * refilling (bulk creates, then tags), pool ports being handed out (VIF written, claim not yet in Neutron), ports
 * going back — and restarted each time. The simulator's Neutron answers with a Neutron-like delay, so kills land
 * inside those windows. At the end: every pod wired to a port whose `device_id` is the pod's, no port claimed by two
 * pods, nothing leaked (every other Raven port is a free pool port on a live node, within the pool's max; none is left
 * untagged).
 *
 * VIFs are signed (`vif.keyFile`), so a node may plug a port before its claim reaches Neutron: a sampler checks all
 * along that no two live pods of a node carry validly signed VIFs naming the same port (a port a node could be asked
 * to plug twice), and at the end every VIF is signed for its pod's node.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../support/node-test.ts';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { vifSignatureValid, type KubeObject, type Pod } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  createNamespaces,
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

const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 15_151_515);
const CLUSTER = 'poolkill';
const NAMESPACES = ['pk-a', 'pk-b'];
const NODES = ['node-1', 'node-2'];
const MAX = 6;

describe(`warm pools: Raven SIGKILLed at ten seeded points and restarted (seed ${SEED})`, { timeout: 240_000 }, () => {
  let env: Env;
  let child: ControllerChild | undefined;
  const random = seeded(SEED);
  const vifKey = randomBytes(32);
  let vifKeyFile = '';

  before(async () => {
    env = await startEnv(SEED, {}, { linuxbridgeHosts: NODES });
    vifKeyFile = join(env.server.dir, 'vif.key');
    await writeFile(vifKeyFile, vifKey, { mode: 0o600 });
    for (const name of NODES)
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
    await createNamespaces(env.client, NAMESPACES);
    // Neutron-like: a port create (one or a bulk) takes ~150 ms, an update ~40 ms, a tag ~20 ms.
    env.sim.sim.faults.addRule({ method: 'POST', path: '/network/v2.0/ports', latency: { p50Ms: 150, p99Ms: 300 } });
    env.sim.sim.faults.addRule({ method: 'PUT', path: '/network/v2.0/ports/{id}', latency: { p50Ms: 40, p99Ms: 80 } });
    env.sim.sim.faults.addRule({
      method: 'PUT',
      path: '/network/v2.0/ports/{id}/tags',
      latency: { p50Ms: 20, p99Ms: 40 },
    });
  });
  after(async () => {
    await killChild(child);
    await env.stop();
  });

  const startChild = (): ControllerChild =>
    startControllerChild(env, {
      ...ravenSettings(CLUSTER, 'namespace'),
      RAVEN_PORT_POOL_MIN: '3',
      RAVEN_PORT_POOL_MAX: String(MAX),
      RAVEN_PORT_POOL_BATCH: '4',
      RAVEN_GC_INTERVAL_SECONDS: '1',
      RAVEN_GC_GRACE_SECONDS: '0',
      RAVEN_VIF_KEY_FILE: vifKeyFile,
    });

  let serial = 0;
  /** `count` new pods, spread over the namespaces and nodes. */
  async function createSome(count: number): Promise<void> {
    const pods = Array.from({ length: count }, () => {
      const i = serial++;
      return podBody(NAMESPACES[i % NAMESPACES.length]!, `p-${i}`, NODES[i % NODES.length]);
    });
    await inParallel(pods, 8, (p) => env.client.create(resources.pods, p, { namespace: p.metadata.namespace }));
  }

  async function livePods(): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    for (const ns of NAMESPACES) out.push(...(await env.client.listAll(resources.pods, { namespace: ns })).items);
    return out;
  }

  /** Deletes `count` pods chosen by the seed. */
  async function deleteSome(count: number): Promise<void> {
    const pods = await livePods();
    const chosen = pods.sort(() => random() - 0.5).slice(0, count);
    await inParallel(chosen, 8, (p) => env.client.delete(resources.pods, p.metadata.name!, p.metadata.namespace));
  }

  /** Live pods of one node whose own, validly signed VIFs name the same port: what a node must never be asked. */
  function signedTwice(pods: readonly KubeObject[]): string[] {
    const byPort = new Map<string, string>();
    const out: string[] = [];
    for (const pod of pods as Pod[]) {
      const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
      if (!vif || vif.podUid !== pod.metadata.uid || pod.metadata.deletionTimestamp || !vifSignatureValid(vif, vifKey))
        continue;
      const key = `${pod.spec?.nodeName}|${vif.portId}`;
      const other = byPort.get(key);
      if (other)
        out.push(`${other} and ${pod.metadata.namespace}/${pod.metadata.name} both signed for port ${vif.portId}`);
      byPort.set(key, `${pod.metadata.namespace}/${pod.metadata.name}`);
    }
    return out;
  }

  /** What is wrong with pods and ports now (empty: converged). */
  async function problems(): Promise<string[]> {
    const pods = await livePods();
    const ports = (await env.neutron.ports.list({ device_owner: POD_DEVICE_OWNER })).filter((p) =>
      p.name.startsWith(`raven/${CLUSTER}/`),
    );
    const out: string[] = [];
    const uids = new Set(pods.map((p) => p.metadata.uid));
    const named = new Map<string, string>();
    for (const pod of pods) {
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      const mine = ports.filter((p) => p.device_id === pod.metadata.uid);
      if (mine.length !== 1)
        out.push(
          `${key}: ${mine.length} ports claimed (${mine.map((p) => `${p.id} ${p.name} [${p.tags.join(' ')}] rev ${p.revision_number}`).join(', ')})`,
        );
      const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
      if (!vif || vif.podUid !== pod.metadata.uid || vif.portId !== mine[0]?.id) out.push(`${key}: VIF not its port`);
      else if (!vifSignatureValid(vif, vifKey) || vif.signed.node !== (pod as Pod).spec?.nodeName)
        out.push(`${key}: VIF not signed for its node`);
      if (vif && named.has(vif.portId)) out.push(`${key} and ${named.get(vif.portId)} name port ${vif.portId}`);
      if (vif) named.set(vif.portId, key);
    }
    const free = ports.filter((p) => !uids.has(p.device_id));
    for (const p of free) {
      if (!p.tags.includes(`raven.cluster=${CLUSTER}`)) out.push(`port ${p.id} (${p.name}) untagged: leaked`);
      if (!NODES.includes(p['binding:host_id'])) out.push(`port ${p.id} pooled on ${p['binding:host_id']}`);
    }
    for (const node of NODES)
      for (const ns of NAMESPACES) {
        const network = ports.find((p) =>
          pods.some((pod) => pod.metadata.namespace === ns && pod.metadata.uid === p.device_id),
        )?.network_id;
        const pooled = free.filter((p) => p['binding:host_id'] === node && p.network_id === network).length;
        if (pooled > MAX) out.push(`pool of ${node}/${ns}: ${pooled} free ports, above max ${MAX}`);
      }
    return out;
  }

  it('converges after every kill: each pod its own claimed port, none claimed twice, none leaked', async () => {
    await createSome(12);
    const kills: string[] = [];
    const twice: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        twice.push(...signedTwice(await livePods()));
        await sleep(100);
      }
    })();
    for (let i = 0; i < 10; i++) {
      child = startChild();
      // Work arrives while it runs: new pods (takes, refills) and gone pods (ports back to the pools).
      await createSome(6);
      if (i % 2 === 1) await deleteSome(4);
      const at = Math.floor(100 + random() * 1400);
      await sleep(at);
      assert.equal(child.proc.exitCode, null, `the controller exited by itself: ${child.stderr()}`);
      child.proc.kill('SIGKILL');
      await child.exited;
      kills.push(`${at} ms`);
    }
    child = startChild();
    let last: string[] = [];
    try {
      await waitFor(
        'converged',
        async () => {
          last = await problems();
          return last.length === 0;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    } catch {
      assert.fail(`not converged: ${last.length} problems, e.g. ${last.slice(0, 8).join('; ')}`);
    }
    sampling = false;
    await sampler;
    assert.deepEqual(twice, [], 'a port signed for two live pods of a node');
    process.stdout.write(`# kills after ${kills.join(', ')}; ${(await livePods()).length} pods wired\n`);
    child.proc.kill('SIGTERM');
    await child.exited;
  });
});
