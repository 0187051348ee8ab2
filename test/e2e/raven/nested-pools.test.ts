/**
 * Issue 29, warm pools of subports: a VM node's pool holds free subports already on its trunk (no `device_id`, no
 * host), each on its own VLAN id; a pod on the VM takes one (its VIF names the trunk, the VLAN id and the parent's
 * MAC, signed with `plug: 'vlan'`), and the claim is written after. A deleted pod's subport goes back to the pool, on
 * the trunk on its VLAN id, and the garbage collector — sweeping every second with no grace — leaves it there. A trunk
 * replaced behind Raven's back has its free subports deleted and the pool refilled on the new one; a VM node gone
 * drains its pools. Raven in process, on the embedded API server and the OpenStack simulator (OVN's trunk
 * driver); every assertion is on the simulator's Neutron state.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../support/node-test.ts';
import { parseVif, VIF_ANNOTATION, vifSignatureValid, type Pod, type Vif } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { Port } from '../../../src/openstack/index.ts';
import { waitFor } from '../../support/wait.ts';
import { createVmNode, podBody, ravenSettings, startEnv, startRavenInProcess, type Env } from './support.ts';

const CLUSTER = 'nestedpools';
const NS = 'apps';
const MIN = 3;

describe('nested pods: warm pools of subports on the VM’s trunk', { timeout: 180_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  let vmPort: Port;
  const key = randomBytes(32);

  before(async () => {
    env = await startEnv(2_932);
    const keyFile = join(env.server.dir, 'vif.key');
    await writeFile(keyFile, key, { mode: 0o600 });
    vmPort = await createVmNode(env, 'vm-1', '192.168.52.0/24');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    raven = startRavenInProcess(env, {
      ...ravenSettings(CLUSTER, 'shared'),
      RAVEN_NESTED_MODE: 'auto',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
      RAVEN_VIF_KEY_FILE: keyFile,
      RAVEN_PORT_POOL_SIZING: 'static',
      RAVEN_PORT_POOL_MIN: String(MIN),
      RAVEN_PORT_POOL_MAX: '8',
      RAVEN_PORT_POOL_BATCH: String(MIN),
      // A sweep every second, with no grace: it would take a free subport, were it not the pool's.
      RAVEN_GC_INTERVAL_SECONDS: '1',
      RAVEN_GC_GRACE_SECONDS: '0',
    });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  const neutron = () => env.sim.sim.neutron;
  const trunk = () => [...neutron().trunks.values()].find((t) => t.port_id === vmPort.id);
  const vlanOf = (portId: string) => trunk()?.sub_ports.find((s) => s.port_id === portId)?.segmentation_id;
  const uids = async () =>
    new Set((await env.client.listAll<Pod>(resources.pods, { namespace: NS })).items.map((p) => p.metadata.uid));
  /** Raven's subports on the trunk that no live pod holds: the pool's, by port id → VLAN id. */
  const free = async (): Promise<Map<string, number>> => {
    const live = await uids();
    return new Map(
      (trunk()?.sub_ports ?? [])
        .filter((s) => {
          const p = neutron().ports.get(s.port_id);
          return p?.name.startsWith(`raven/${CLUSTER}/`) && !live.has(p.device_id);
        })
        .map((s) => [s.port_id, s.segmentation_id]),
    );
  };
  const vifOf = async (name: string): Promise<Vif | undefined> =>
    parseVif((await env.client.get<Pod>(resources.pods, name, NS)).metadata.annotations?.[VIF_ANNOTATION]);
  const wired = (name: string) =>
    waitFor(`${name}'s VIF`, async () => (await vifOf(name))?.nested && vifOf(name), { timeoutMs: 60_000 });
  const claimed = (vif: Vif) =>
    waitFor(
      `port ${vif.portId} claimed`,
      () => neutron().ports.get(vif.portId)?.device_id === vif.podUid || undefined,
      {
        timeoutMs: 30_000,
      },
    );
  const assertVlansUnique = () => {
    const vlans = trunk()?.sub_ports.map((s) => s.segmentation_id) ?? [];
    assert.equal(new Set(vlans).size, vlans.length, 'a VLAN id is on the trunk twice');
  };

  it('a pod takes a free subport of its pool: already on the trunk, claimed after', async () => {
    // A first pod makes the pool (the shared subnet's, on vm-1); its refill puts free subports on the trunk.
    await env.client.create(resources.pods, podBody(NS, 'first', 'vm-1'), { namespace: NS });
    await wired('first');
    const ready = await waitFor(
      'free subports on the trunk',
      async () => ((await free()).size >= MIN ? free() : undefined),
      { timeoutMs: 60_000 },
    );
    for (const id of ready.keys()) {
      const port = neutron().ports.get(id)!;
      assert.equal(port.host_id, '', 'a pool subport is bound to no host');
      assert.equal(port.device_id, '', 'a pool subport made by a refill names no device');
      assert.equal(port.device_owner, 'trunk:subport');
    }
    await env.client.create(resources.pods, podBody(NS, 'warm', 'vm-1'), { namespace: NS });
    const vif = await wired('warm');
    assert.ok(ready.has(vif.portId), 'the pod got a new port, not one of the pool’s free subports');
    assert.deepEqual(vif.nested, { trunkId: trunk()!.id, vlan: ready.get(vif.portId), parentMac: vmPort.mac_address });
    assert.equal(vif.signed?.node, 'vm-1');
    assert.equal(vif.signed?.plug, 'vlan');
    assert.ok(vifSignatureValid(vif, key), 'the signature does not verify');
    await claimed(vif);
    assert.equal(vlanOf(vif.portId), vif.nested?.vlan, 'the subport moved on the trunk');
    assertVlansUnique();
  });

  it("a deleted pod's subport stays on the trunk on its VLAN id, free; the garbage collector leaves it", async () => {
    const gone = await wired('warm');
    await env.client.delete(resources.pods, 'warm', NS);
    await waitFor('the pod gone', async () => !(await uids()).has(gone.podUid) || undefined, { timeoutMs: 30_000 });
    // Some sweeps of the garbage collector (every second, no grace).
    await sleep(3_000);
    assert.ok(neutron().ports.has(gone.portId), 'the subport was deleted');
    assert.equal(vlanOf(gone.portId), gone.nested?.vlan, 'the subport left the trunk or changed its VLAN id');
    const pool = await free();
    assert.ok(pool.has(gone.portId), 'the subport is not free');
    for (const id of pool.keys()) assert.ok(neutron().ports.has(id), `free subport ${id} was deleted`);
    // Pods take the pool's free subports in the order they joined: as many as it has take the one given back.
    const names = Array.from({ length: pool.size }, (_, i) => `again-${i}`);
    for (const name of names) await env.client.create(resources.pods, podBody(NS, name, 'vm-1'), { namespace: NS });
    const vifs = await Promise.all(names.map(wired));
    const back = vifs.find((v) => v.portId === gone.portId);
    assert.ok(back, 'no pod took the subport given back');
    assert.equal(back.nested?.vlan, gone.nested?.vlan);
    await Promise.all(vifs.map(claimed));
    assert.equal(new Set(vifs.map((v) => v.portId)).size, vifs.length, 'two pods share a subport');
    assertVlansUnique();
  });

  it('its trunk replaced: the old trunk’s free subports are deleted, the pool refilled on the new one', async () => {
    const old = trunk()!;
    const stale = [...(await free()).keys()];
    assert.ok(stale.length > 0, 'the pool has no free subport');
    // Deleted behind Raven's back: Neutron takes its subports off it (they are bound to nothing then, and no list of
    // Raven's pod ports finds them). The Node's next reconcile (a label here) finds no trunk and makes one.
    await env.neutron.trunks.delete(old.id);
    await env.client.patch(resources.nodes, 'vm-1', undefined, { metadata: { labels: { poke: '1' } } }, 'merge');
    await waitFor('a new trunk', () => (trunk() && trunk()!.id !== old.id) || undefined, { timeoutMs: 30_000 });
    await waitFor('the old free subports deleted', () => stale.every((id) => !neutron().ports.has(id)) || undefined, {
      timeoutMs: 30_000,
    });
    await waitFor('the pool refilled on the new trunk', async () => ((await free()).size >= MIN ? true : undefined), {
      timeoutMs: 30_000,
    });
    assertVlansUnique();
  });

  it('a VM node gone drains its subport pools (and its trunk goes)', async () => {
    assert.ok((await free()).size > 0, 'the pool has no free subport to drain');
    const pods = (await env.client.listAll<Pod>(resources.pods, { namespace: NS })).items;
    for (const pod of pods) await env.client.delete(resources.pods, pod.metadata.name!, NS);
    await env.client.delete(resources.nodes, 'vm-1');
    const ravens = () => [...neutron().ports.values()].filter((p) => p.name.startsWith(`raven/${CLUSTER}/`));
    await waitFor('no pod port left', () => ravens().length === 0 || undefined, { timeoutMs: 60_000 });
    assert.equal(trunk(), undefined, 'the trunk Raven made is still there');
  });
});
