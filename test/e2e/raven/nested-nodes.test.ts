/**
 * Issue 29, nested pods, the node side: a Node whose `providerID` names a Nova server gets a trunk on the server's
 * port (made by Raven with `nested.mode: auto`, or the one already there); a VM node Raven cannot give a trunk says
 * why in a Warning Event on the Node, and nothing is made; a gone Node's Raven-made trunk is deleted, an operator's
 * never. Raven runs in process on the embedded API server and the OpenStack simulator (its OVN trunk driver).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { Event } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { Network, Port } from '../../../src/openstack/index.ts';
import { waitFor } from '../../support/wait.ts';
import { ravenSettings, startEnv, startRavenInProcess, type Env } from './support.ts';

const CLUSTER = 'nested';

describe('nested pods: VM nodes and their trunks', { timeout: 120_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  let vms: Network;
  let other: Network;

  /** A Nova server's port, as Nova makes it. */
  const serverPort = async (serverId: string, network = vms): Promise<Port> =>
    env.neutron.ports.create({ network_id: network.id, device_id: serverId, device_owner: 'compute:nova' });
  const createNode = (name: string, providerID?: string) =>
    env.client.create(resources.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      ...(providerID ? { spec: { providerID } } : {}),
    });
  const nodeEvent = (name: string, reason: string) =>
    waitFor(
      `${reason} on node ${name}`,
      async () =>
        (await env.client.listAll<Event>(resources.events, { namespace: 'default' })).items.find(
          (e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === name && e.reason === reason,
        ),
      { timeoutMs: 30_000 },
    );
  const trunks = () => [...env.sim.sim.neutron.trunks.values()];

  before(async () => {
    env = await startEnv(2_929);
    vms = await env.neutron.networks.create({ name: 'vms' });
    await env.neutron.subnets.create({ network_id: vms.id, cidr: '192.168.50.0/24', ip_version: 4 });
    other = await env.neutron.networks.create({ name: 'storage' });
    await env.neutron.subnets.create({ network_id: other.id, cidr: '192.168.60.0/24', ip_version: 4 });
    raven = startRavenInProcess(env, {
      ...ravenSettings(CLUSTER, 'shared'),
      RAVEN_NESTED_MODE: 'auto',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
    });
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  it("makes a trunk on a VM node's port, tagged for the node; deletes it when the node goes", async () => {
    const server = randomUUID();
    const port = await serverPort(server);
    const node = await createNode('vm-1', `openstack:///${server}`);
    const trunk = await waitFor('a trunk on vm-1’s port', () => trunks().find((t) => t.port_id === port.id), {
      timeoutMs: 30_000,
    });
    assert.equal(trunk.name, `raven/${CLUSTER}/vm-1`);
    await waitFor('the trunk tagged', () => trunk.tags.includes('raven.kind=node') || undefined);
    assert.deepEqual(
      [...trunk.tags].sort(),
      [`raven.cluster=${CLUSTER}`, 'raven.kind=node', `raven.uid=${node.metadata.uid}`].sort(),
    );
    await nodeEvent('vm-1', 'TrunkCreated');

    await env.client.delete(resources.nodes, 'vm-1');
    await waitFor('the trunk of the gone node deleted', () => !env.sim.sim.neutron.trunks.has(trunk.id) || undefined, {
      timeoutMs: 30_000,
    });
    assert.ok(env.sim.sim.neutron.ports.has(port.id), "the VM's own port is not Raven's to delete");
  });

  it('uses the trunk a VM already has, and never deletes it', async () => {
    const server = randomUUID();
    const port = await serverPort(server);
    const theirs = await env.neutron.trunks.create({ port_id: port.id, name: 'operators-trunk' });
    await createNode('vm-2', `openstack://RegionOne/${server}`);
    await createNode('vm-3', `openstack:///${randomUUID()}`);
    // vm-3 (no port) is reconciled too: once its Warning is there, vm-2 has had its turn as well.
    await nodeEvent('vm-3', 'NestedNoPort');
    assert.deepEqual(
      trunks()
        .filter((t) => t.port_id === port.id)
        .map((t) => t.id),
      [theirs.id],
      'a second trunk was made on a trunked port',
    );
    await env.client.delete(resources.nodes, 'vm-2');
    await env.client.delete(resources.nodes, 'vm-3');
    // A node Raven knows of, created after the deletes: once its trunk exists, the deletes were handled.
    const later = randomUUID();
    const laterPort = await serverPort(later);
    await createNode('vm-4', `openstack:///${later}`);
    await waitFor('vm-4’s trunk', () => trunks().find((t) => t.port_id === laterPort.id), { timeoutMs: 30_000 });
    assert.ok(env.sim.sim.neutron.trunks.has(theirs.id), 'Raven deleted a trunk it did not make');
    assert.deepEqual(env.sim.sim.neutron.trunks.get(theirs.id)?.tags, [], 'Raven tagged a trunk it did not make');
  });

  it('a VM node without a usable port gets a Warning and no trunk', async () => {
    const before = trunks().length;
    const two = randomUUID();
    await serverPort(two, vms);
    await serverPort(two, other);
    await createNode('vm-two-ports', `openstack:///${two}`);
    await createNode('vm-bad-id', 'openstack:///not-a-server');
    const ambiguous = await nodeEvent('vm-two-ports', 'NestedParentAmbiguous');
    assert.equal(ambiguous.type, 'Warning');
    assert.match(ambiguous.message ?? '', /nested\.parentNetworks/);
    const invalid = await nodeEvent('vm-bad-id', 'NestedProviderIdInvalid');
    assert.equal(invalid.type, 'Warning');
    await createNode('bare-metal');
    assert.equal(trunks().length, before, 'a trunk was made for a node that cannot have one');
  });
});
