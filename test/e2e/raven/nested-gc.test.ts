/**
 * Nested pods, what the garbage collector and the node controller leave behind: a trunk Raven made whose Node went —
 * while no Raven ran (the collector) or while it runs (the node controller) — goes with the subports of its gone pods,
 * an operator's trunk never; a pod's subport taken off its trunk but not deleted (a crash between), which ML2/OVN
 * leaves without a `device_owner`, is deleted. Raven in process, on the embedded API server and the OpenStack simulator
 * (its OVN trunk driver).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from '../../support/node-test.ts';
import { parseVif, VIF_ANNOTATION, type Pod, type Vif } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { Port } from '../../../src/openstack/index.ts';
import { waitFor } from '../../support/wait.ts';
import { createVmNode, podBody, ravenSettings, startEnv, startRavenInProcess, type Env } from './support.ts';

const CLUSTER = 'nestedgc';
const NS = 'apps';

describe('nested pods: trunks of gone nodes and detached subports are collected', { timeout: 240_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  const settings = {
    ...ravenSettings(CLUSTER, 'shared'),
    RAVEN_NESTED_MODE: 'auto',
    RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
    RAVEN_PORT_POOLS: 'false',
  };
  const collecting = { ...settings, RAVEN_GC_INTERVAL_SECONDS: '1', RAVEN_GC_GRACE_SECONDS: '0' };
  // The collector's first round finds nothing past this grace: what goes, the node controller deletes.
  const notCollecting = { ...settings, RAVEN_GC_INTERVAL_SECONDS: '3600', RAVEN_GC_GRACE_SECONDS: '3600' };

  before(async () => {
    env = await startEnv(2_931);
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  const restart = async (ravenEnv: Record<string, string>) => {
    await raven?.stop();
    raven = startRavenInProcess(env, ravenEnv);
  };
  const vifOf = async (name: string): Promise<Vif | undefined> =>
    parseVif((await env.client.get<Pod>(resources.pods, name, NS)).metadata.annotations?.[VIF_ANNOTATION]);
  /** Pods on a node, each waited for until it has a subport. */
  const wiredPods = async (node: string, names: string[]): Promise<Vif[]> => {
    for (const n of names) await env.client.create(resources.pods, podBody(NS, n, node), { namespace: NS });
    return Promise.all(
      names.map((n) => waitFor(`${n}'s VIF`, async () => (await vifOf(n))?.nested && vifOf(n), { timeoutMs: 60_000 })),
    );
  };
  /** A VM node (Raven started on it) with pods wired: its port, its trunk, their VIFs. */
  const vmWithPods = async (node: string, cidr: string, pods: string[]) => {
    const vm = await createVmNode(env, node, cidr);
    await restart(notCollecting);
    const vifs = await wiredPods(node, pods);
    const trunk = trunkOf(vm);
    assert.ok(trunk, `${node} has a trunk`);
    return { vm, trunk, vifs };
  };
  const trunkOf = (port: Port) => [...env.sim.sim.neutron.trunks.values()].find((t) => t.port_id === port.id);
  const hasPort = (id: string) => env.sim.sim.neutron.ports.has(id);
  const trunkDeleted = (id: string) =>
    waitFor('the gone node’s trunk deleted', () => !env.sim.sim.neutron.trunks.has(id) || undefined, {
      timeoutMs: 60_000,
    });
  const subportsOf = (trunkId: string) => env.sim.sim.neutron.trunks.get(trunkId)?.sub_ports.map((s) => s.port_id);

  it("collects a trunk Raven made whose node went while no Raven ran, with its gone pods' subports; never an operator's", async () => {
    // An operator's VM: its trunk made before Raven saw the node (nested.mode existing's case).
    const opNet = await env.neutron.networks.create({ name: 'vms-op' });
    await env.neutron.subnets.create({ network_id: opNet.id, cidr: '192.168.52.0/24', ip_version: 4 });
    const opServer = randomUUID();
    const opPort = await env.neutron.ports.create({
      network_id: opNet.id,
      device_id: opServer,
      device_owner: 'compute:nova',
    });
    const opTrunk = await env.neutron.trunks.create({ port_id: opPort.id, name: 'operators' });
    await env.client.create(resources.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'vm-op' },
      spec: { providerID: `openstack:///${opServer}` },
    });
    const { vm, trunk, vifs } = await vmWithPods('vm-a', '192.168.51.0/24', ['a-0', 'a-1']);
    const [opVif] = await wiredPods('vm-op', ['op-0']);
    assert.ok(opVif);

    await raven?.stop();
    for (const name of ['a-0', 'a-1', 'op-0']) await env.client.delete(resources.pods, name, NS);
    for (const name of ['vm-a', 'vm-op']) await env.client.delete(resources.nodes, name);
    await restart(collecting);
    await trunkDeleted(trunk.id);
    for (const vif of vifs) assert.ok(!hasPort(vif.portId), `the subport ${vif.portId} of a gone pod is left`);
    assert.ok(hasPort(vm.id), "the VM's own port is not Raven's to delete");
    // The operator's trunk stays; only the gone pod's subport left it (and Neutron).
    await waitFor('op-0’s subport deleted', () => !hasPort(opVif.portId) || undefined, { timeoutMs: 60_000 });
    assert.deepEqual(subportsOf(opTrunk.id), [], "the operator's trunk is kept");
  });

  it("the node controller deletes a node's trunk the same way when the node goes while Raven runs", async () => {
    const { vm, trunk, vifs } = await vmWithPods('vm-b', '192.168.53.0/24', ['b-0']);
    const [vif] = vifs;
    assert.ok(vif);
    // b-0 goes while no Raven runs; past no grace period, the collector leaves its subport to the node controller.
    await raven?.stop();
    await env.client.delete(resources.pods, 'b-0', NS);
    await restart(notCollecting);
    // A pod wired proves this Raven knows vm-b's trunk (it would not see a node gone before it listed it).
    const [known] = await wiredPods('vm-b', ['b-1']);
    await env.client.delete(resources.pods, 'b-1', NS);
    await waitFor('b-1’s subport deleted', () => (known && !hasPort(known.portId)) || undefined, { timeoutMs: 30_000 });
    await env.client.delete(resources.nodes, 'vm-b');
    await trunkDeleted(trunk.id);
    assert.ok(!hasPort(vif.portId), "the gone pod's subport is left");
    assert.ok(hasPort(vm.id), "the VM's own port is not Raven's to delete");
  });

  it('deletes a subport taken off its trunk whose delete a crash cut short (ML2/OVN cleared its owner)', async () => {
    const { trunk, vifs } = await vmWithPods('vm-c', '192.168.54.0/24', ['c-0']);
    const [vif] = vifs;
    assert.ok(vif);
    await raven?.stop();
    await env.client.delete(resources.pods, 'c-0', NS);
    // What the pod's delete did before it crashed: the subport off the trunk, not yet deleted.
    await env.neutron.trunks.removeSubports(trunk.id, [vif.portId]);
    assert.equal(env.sim.sim.neutron.ports.get(vif.portId)?.device_owner, '');
    await restart(collecting);
    await waitFor('the detached subport deleted', () => !hasPort(vif.portId) || undefined, { timeoutMs: 60_000 });
    assert.ok(env.sim.sim.neutron.trunks.has(trunk.id), "the live node's trunk is kept");
  });
});
