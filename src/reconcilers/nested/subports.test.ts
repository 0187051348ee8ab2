import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  loadCloudConfig,
  NeutronClient,
  OpenStackSession,
  type Interceptor,
  type Port,
} from '../../openstack/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import { deleteTrunkAndPodSubports } from '../network/index.ts';
import { TrunkSubports } from './subports.ts';

describe('TrunkSubports on the simulator (ML2/OVN trunk driver)', () => {
  let sim: RunningOpenStackSim;
  let dir: string;
  let session: OpenStackSession;
  let neutron: NeutronClient;
  let networkId = '';
  const signal = new AbortController().signal;

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth' });
    dir = await mkdtemp(join(tmpdir(), 'raven-subports-'));
    await writeFile(
      join(dir, 'clouds.yaml'),
      `clouds:\n  sim:\n    auth_type: none\n    network_endpoint_override: ${sim.neutronUrl}\n`,
    );
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'sim', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
    });
    neutron = new NeutronClient(session);
    networkId = (await neutron.networks.create({ name: 'pods' })).id;
    await neutron.subnets.create({ network_id: networkId, cidr: '10.9.0.0/24', ip_version: 4 });
  });
  after(async () => {
    await session.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  const newTrunk = async () => {
    const parent = await neutron.ports.create({ network_id: networkId, device_owner: 'compute:nova', device_id: 'vm' });
    return neutron.trunks.create({ port_id: parent.id });
  };
  const ports = (n: number): Promise<Port[]> =>
    Promise.all(Array.from({ length: n }, () => neutron.ports.create({ network_id: networkId })));

  it('two Ravens attaching at once: Neutron refuses a taken VLAN id, the loser re-reads and picks again', async () => {
    const trunk = await newTrunk();
    const [a, b] = [new TrunkSubports(), new TrunkSubports()];
    const mine = await ports(4);
    const theirs = await ports(4);
    const vlans = await Promise.all([
      ...mine.map((p) => a.attach(neutron, trunk.id, p.id, signal)),
      ...theirs.map((p) => b.attach(neutron, trunk.id, p.id, signal)),
    ]);
    assert.equal(new Set(vlans).size, 8, `a VLAN id given twice: ${vlans.join(',')}`);
    const onTrunk = await neutron.trunks.getSubports(trunk.id);
    assert.deepEqual(
      onTrunk.map((s) => s.segmentation_id).sort((x, y) => x - y),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (const [i, p] of [...mine, ...theirs].entries())
      assert.equal(onTrunk.find((s) => s.port_id === p.id)?.segmentation_id, vlans[i]);
  });

  it("a refill's ports in one add: each on its own free VLAN id; ids another Raven took meanwhile are picked again", async () => {
    const trunk = await newTrunk();
    const [a, b] = [new TrunkSubports(), new TrunkSubports()];
    await a.read(neutron, trunk.id, signal);
    // b adds two ports a has not seen: a's picks 1 and 2 are taken, Neutron refuses a's whole list
    for (const p of await ports(2)) await b.attach(neutron, trunk.id, p.id, signal);
    const refill = await ports(3);
    const vlans = await a.attachAll(
      neutron,
      trunk.id,
      refill.map((p) => p.id),
      signal,
    );
    const onTrunk = new Map((await neutron.trunks.getSubports(trunk.id)).map((s) => [s.port_id, s.segmentation_id]));
    assert.equal(onTrunk.size, 5);
    assert.equal(new Set(onTrunk.values()).size, 5, 'a VLAN id twice');
    for (const p of refill) {
      assert.equal(vlans.get(p.id), onTrunk.get(p.id));
      assert.equal(a.vlanOf(trunk.id, p.id), onTrunk.get(p.id));
    }
    // again: all are on the trunk already, the same ids
    assert.deepEqual(
      await a.attachAll(
        neutron,
        trunk.id,
        refill.map((p) => p.id),
        signal,
      ),
      vlans,
    );
  });

  it('a port another trunk holds refuses the whole list: attachAll throws, one by one only that port fails', async () => {
    const [mine, theirs] = [await newTrunk(), await newTrunk()];
    const subports = new TrunkSubports();
    const [taken, ...fine] = await ports(3);
    await subports.attach(neutron, theirs.id, taken!.id, signal);
    await assert.rejects(
      subports.attachAll(neutron, mine.id, [taken!.id, ...fine.map((p) => p.id)], signal),
      /in use|subport/i,
    );
    assert.deepEqual(await neutron.trunks.getSubports(mine.id), [], 'Neutron took none of the list');
    const one = await Promise.allSettled([taken!, ...fine].map((p) => subports.attach(neutron, mine.id, p.id, signal)));
    assert.deepEqual(
      one.map((r) => r.status),
      ['rejected', 'fulfilled', 'fulfilled'],
    );
  });

  it('an add answered after a later one (answers out of order) loses no subport from the cache', async () => {
    const trunk = await newTrunk();
    const [first, second] = await ports(2);
    // The first add's answer is held back on its way to Raven, past the second's: Neutron made the first change
    // first, so its answer (the whole trunk) does not show the second port.
    let held: Promise<void> | undefined;
    let release = (): void => undefined;
    const slowFirst: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (req.path.endsWith('/add_subports') && !held) {
        held = new Promise((resolve) => (release = resolve));
        await held;
      }
      return res;
    };
    const delayed = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'sim', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
      interceptors: [slowFirst],
    });
    try {
      const slow = new NeutronClient(delayed);
      const cache = new TrunkSubports();
      const a = cache.attach(slow, trunk.id, first!.id, signal);
      while (!held) await sleep(5);
      const b = await cache.attach(slow, trunk.id, second!.id, signal);
      release();
      const vlanA = await a;
      assert.equal(cache.vlanOf(trunk.id, second!.id), b, 'the later add was lost from the cache');
      assert.equal(cache.trunkOf(second!.id), trunk.id);
      assert.equal(cache.vlanOf(trunk.id, first!.id), vlanA);
      const onTrunk = new Map((await neutron.trunks.getSubports(trunk.id)).map((x) => [x.port_id, x.segmentation_id]));
      assert.deepEqual(
        onTrunk,
        new Map([
          [first!.id, vlanA],
          [second!.id, b],
        ]),
      );
    } finally {
      release();
      await delayed.close();
    }
  });

  it('an add whose answer was lost finds the port on the trunk; detach frees the id and allows the delete', async () => {
    const trunk = await newTrunk();
    const [port] = await ports(1);
    await neutron.trunks.addSubports(trunk.id, [{ port_id: port!.id, segmentation_type: 'vlan', segmentation_id: 7 }]);
    const cache = new TrunkSubports();
    assert.equal(await cache.attach(neutron, trunk.id, port!.id, signal), 7);
    await cache.detach(neutron, port!.id, signal);
    assert.deepEqual(await neutron.trunks.getSubports(trunk.id), []);
    assert.equal(await neutron.ports.delete(port!.id), true);
  });
  it("a gone node's trunk: Raven's pod subports off, those of gone pods deleted, an operator's left with the trunk", async () => {
    const trunk = await newTrunk();
    const [gone, live, operators] = (await ports(3)) as [Port, Port, Port];
    await neutron.trunks.addSubports(
      trunk.id,
      [gone, live, operators].map((p, i) => ({ port_id: p.id, segmentation_type: 'vlan', segmentation_id: i + 1 })),
    );
    // Raven's pod ports: its tags, and claimed once they are subports.
    for (const [port, uid] of [
      [gone, 'uid-gone'],
      [live, 'uid-live'],
    ] as const) {
      await neutron.tags.replace('ports', port.id, ['raven.cluster=c', 'raven.kind=pod']);
      await neutron.ports.update(port.id, { device_id: uid });
    }
    const shown = await neutron.trunks.get(trunk.id);
    const deleted = await deleteTrunkAndPodSubports(neutron, 'c', shown, (p) => p.device_id !== 'uid-live', signal);
    assert.deepEqual(
      deleted.map((p) => p.id),
      [gone.id],
    );
    assert.deepEqual(await neutron.trunks.list({ id: trunk.id }), []);
    // The live pod's port and the operator's are off the trunk (ML2/OVN: no device_owner), not deleted.
    const left = await neutron.ports.list({ id: [gone.id, live.id, operators.id] });
    assert.deepEqual(left.map((p) => `${p.id} ${p.device_owner}`).sort(), [`${live.id} `, `${operators.id} `].sort());
  });
});
