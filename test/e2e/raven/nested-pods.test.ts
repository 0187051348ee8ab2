/**
 * Issue 29, nested pods: a pod on a VM node gets a subport of the node's trunk — its own port on the pod's subnet,
 * bound to no host, on a VLAN id unique on the trunk, claimed for the pod after it is a subport — and a VIF that says
 * where the VM reaches it (trunk, VLAN id, the parent's MAC), signed for the node with `plug: 'vlan'` when Raven holds
 * a VIF key. A deleted pod's subport leaves the trunk and Neutron. Raven in process, on the embedded API server and the
 * OpenStack simulator (its OVN trunk driver).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../support/node-test.ts';
import { parseVif, VIF_ANNOTATION, vifSignatureValid, type Pod, type Vif } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { Port } from '../../../src/openstack/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  createVmNode,
  inParallel,
  podBody,
  ravenSettings,
  startEnv,
  startRavenInProcess,
  type Env,
} from './support.ts';

const CLUSTER = 'nestedpods';
const NS = 'apps';
const PODS = 6;

describe('nested pods: subports on the VM node’s trunk', { timeout: 180_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  let vmPort: Port;
  const key = randomBytes(32);
  let settings: Record<string, string> = {};

  before(async () => {
    env = await startEnv(2_930);
    const keyFile = join(env.server.dir, 'vif.key');
    await writeFile(keyFile, key, { mode: 0o600 });
    vmPort = await createVmNode(env, 'vm-1', '192.168.50.0/24');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    settings = {
      ...ravenSettings(CLUSTER, 'shared'),
      RAVEN_NESTED_MODE: 'auto',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
      RAVEN_PORT_POOLS: 'false',
      RAVEN_VIF_KEY_FILE: keyFile,
    };
    raven = startRavenInProcess(env, settings);
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  const vifOf = async (name: string): Promise<Vif | undefined> =>
    parseVif((await env.client.get<Pod>(resources.pods, name, NS)).metadata.annotations?.[VIF_ANNOTATION]);
  const wired = (name: string) =>
    waitFor(`${name}'s VIF`, async () => (await vifOf(name))?.nested && vifOf(name), { timeoutMs: 60_000 });
  const trunk = () => [...env.sim.sim.neutron.trunks.values()].find((t) => t.port_id === vmPort.id);

  it('gives each pod its own subport on a unique VLAN id, with a VIF signed for the VM', async () => {
    const names = Array.from({ length: PODS }, (_, i) => `p-${i}`);
    await inParallel(names, PODS, (n) => env.client.create(resources.pods, podBody(NS, n, 'vm-1'), { namespace: NS }));
    const vifs = await Promise.all(names.map(async (n) => await wired(n)));
    const t = trunk();
    assert.ok(t, 'the VM has a trunk');
    const vlans = new Map(t.sub_ports.map((s) => [s.port_id, s.segmentation_id]));
    assert.equal(new Set(vlans.values()).size, vlans.size, 'a VLAN id is on the trunk twice');
    assert.equal(new Set(vifs.map((v) => v.portId)).size, PODS, 'two pods share a port');
    for (const vif of vifs) {
      assert.deepEqual(vif.nested, { trunkId: t.id, vlan: vlans.get(vif.portId), parentMac: vmPort.mac_address });
      const port = env.sim.sim.neutron.ports.get(vif.portId);
      assert.ok(port, 'the VIF names a port Neutron has');
      assert.equal(port.device_id, vif.podUid, 'the subport is claimed for its pod');
      assert.equal(port.host_id, '', 'a subport is bound by the trunk driver, not to a host');
      assert.equal(port.device_owner, 'trunk:subport');
      assert.equal(vif.signed?.node, 'vm-1');
      assert.equal(vif.signed?.plug, 'vlan');
      assert.ok(vifSignatureValid(vif, key), 'the signature does not verify');
    }
  });

  it("a deleted pod's subport leaves the trunk and Neutron; the next pod gets a free VLAN id", async () => {
    const gone = await wired('p-0');
    await env.client.delete(resources.pods, 'p-0', NS);
    await waitFor('p-0’s subport deleted', () => !env.sim.sim.neutron.ports.has(gone.portId) || undefined, {
      timeoutMs: 30_000,
    });
    assert.ok(!trunk()?.sub_ports.some((s) => s.port_id === gone.portId), 'the deleted port is still a subport');
    await env.client.create(resources.pods, podBody(NS, 'p-new', 'vm-1'), { namespace: NS });
    const next = await wired('p-new');
    assert.equal(next.nested?.vlan, gone.nested?.vlan, 'the lowest free VLAN id is the freed one');
  });

  it('the garbage collector takes a subport whose pod was deleted while no Raven ran off its trunk, and deletes it', async () => {
    const orphan = await wired('p-1');
    await raven?.stop();
    await env.client.delete(resources.pods, 'p-1', NS);
    raven = startRavenInProcess(env, { ...settings, RAVEN_GC_INTERVAL_SECONDS: '1', RAVEN_GC_GRACE_SECONDS: '0' });
    await waitFor('the orphan subport deleted', () => !env.sim.sim.neutron.ports.has(orphan.portId) || undefined, {
      timeoutMs: 60_000,
    });
    assert.ok(!trunk()?.sub_ports.some((s) => s.port_id === orphan.portId), 'the deleted port is still a subport');
    for (const name of ['p-2', 'p-new'])
      assert.ok(env.sim.sim.neutron.ports.has((await wired(name)).portId), `${name}'s subport was collected`);
  });
});

describe('nested pods with warm pools on: no port is bound to a VM node', { timeout: 180_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  let vmPort: Port;

  before(async () => {
    env = await startEnv(2_931);
    vmPort = await createVmNode(env, 'vm-1', '192.168.51.0/24');
    await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'host-1' } });
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    // Pools on, and filled ahead on the busiest nodes when a namespace's network is made (both defaults).
    raven = startRavenInProcess(env, {
      ...ravenSettings('nestedpools', 'namespace'),
      RAVEN_NESTED_MODE: 'auto',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
    });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  it("fills the bare node's pools with bound ports, the VM's only with subports", async () => {
    // The VM runs the most pods: it is among the first nodes a new namespace's pools are filled on.
    for (const [name, node] of [
      ['a', 'vm-1'],
      ['b', 'vm-1'],
      ['c', 'host-1'],
    ] as const)
      await env.client.create(resources.pods, podBody(NS, name, node), { namespace: NS });
    const vif = async (name: string) =>
      parseVif((await env.client.get<Pod>(resources.pods, name, NS)).metadata.annotations?.[VIF_ANNOTATION]);
    await waitFor(
      'every pod wired',
      async () => (await Promise.all(['a', 'b', 'c'].map(vif))).every(Boolean) || undefined,
      {
        timeoutMs: 60_000,
      },
    );
    assert.ok((await vif('a'))?.nested, 'a pod on the VM gets a subport');
    assert.equal((await vif('c'))?.nested, undefined, 'a pod on the bare node gets a bound port');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } });
    const bound = (host: string) => [...env.sim.sim.neutron.ports.values()].filter((p) => p.host_id === host);
    const free = () => bound('host-1').filter((p) => p.device_id === '');
    await waitFor('the bare node has free pool ports', () => free().length > 0 || undefined, { timeoutMs: 60_000 });
    await waitFor(
      'the new namespace filled on the bare node',
      () => new Set(free().map((p) => p.network_id)).size > 1 || undefined,
      {
        timeoutMs: 60_000,
      },
    );
    // The VM's pools hold free subports of its trunk, the new namespace's among them.
    const trunk = () => [...env.sim.sim.neutron.trunks.values()].find((t) => t.port_id === vmPort.id);
    const freeSubports = () =>
      (trunk()?.sub_ports ?? [])
        .map((sub) => env.sim.sim.neutron.ports.get(sub.port_id)!)
        .filter((p) => p.device_id === '' && p.host_id === '');
    await waitFor(
      'the new namespace filled on the VM, with subports',
      () => new Set(freeSubports().map((p) => p.network_id)).size > 1 || undefined,
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(bound('vm-1'), [], 'a port is bound to the VM node');
  });
});
