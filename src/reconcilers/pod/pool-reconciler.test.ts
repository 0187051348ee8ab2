/**
 * The pool reconciler applies what its decision says, against the OpenStack simulator on a real socket: the ports it
 * makes and deletes are Neutron's, and so are the quota refusals. Each test has a network, a subnet and two security
 * groups of its own.
 */
import assert from 'node:assert/strict';
import { simWithClients, type RunningOpenStackSim, type SimWithClients } from '../../../test/support/openstack-sim.ts';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, RavenError, silentLogger } from '../../core/index.ts';
import { RetryableError } from '../../controller/index.ts';
import type { Node } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { OctaviaClient, type NeutronClient, type OpenStackSession } from '../../openstack/index.ts';
import { listUntaggedPodPorts, type SubnetStrategy } from '../network/index.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { PoolReconciler, type PoolReconcilerOptions } from './pool-reconciler.ts';
import { PortPools } from './pools.ts';
import { PodPortRecord, type RecordedPort } from './port-record.ts';
import { PodPorts } from './ports.ts';

const signal = new AbortController().signal;

let sim: RunningOpenStackSim;
let session: OpenStackSession;
let neutron: NeutronClient;
let env: SimWithClients;
before(async () => {
  env = await simWithClients();
  ({ sim, session, neutron } = env);
});
after(() => env.close());

/** Static sizes min 2, max 4, batch 3, idle after 600 s; with `share`, each namespace's pool-port share. */
function config(share?: number, sizing: 'static' | 'adaptive' = 'static'): PoolReconcilerOptions['config'] {
  const windows = { demandWindowSeconds: 60, trimIdleSeconds: 120, prefillNodes: 0 };
  const portPools = { enabled: true, sizing, ...windows, min: 2, max: 4, batch: 3, idleSeconds: 600, namespaces: [] };
  const quotas = share === undefined ? undefined : { securityGroupsPerNamespace: 0, poolPortsPerNamespace: share };
  return { clusterId: 'c1', portPools, quotas };
}

let tests = 0;

/**
 * A pool reconciler of node `node-1` over a subnet of its own (namespace shop's), with groups `web` and `db`: min 2,
 * max 4, batch 3.
 */
async function rig(o: Partial<PoolReconcilerOptions> = {}, nodeOf?: (port: RecordedPort) => string) {
  const n = ++tests;
  const network = await neutron.networks.create({ name: `pools-${n}` });
  const subnet = await neutron.subnets.create({ network_id: network.id, cidr: `10.${n}.0.0/24`, ip_version: 4 });
  const place = { subnetId: subnet.id, networkId: network.id };
  const web = [(await neutron.securityGroups.create({ name: `web-${n}` })).id];
  const db = [(await neutron.securityGroups.create({ name: `db-${n}` })).id];
  const clock = new FakeClock(1_000_000);
  // The demand record decays over the same window the decision reads it with (as `warm.ts` wires them).
  const { demandWindowSeconds, trimIdleSeconds } = (o.config ?? config()).portPools;
  const demand = { windowMs: demandWindowSeconds * 1000, idleMs: trimIdleSeconds * 1000 };
  const pools = new PortPools({ anyGroups: false, demand, nodeOf }, clock);
  const ports = new PodPorts(neutron, new PodPortRecord());
  const known = new Set(['node-1']);
  const nodes = { get: (name: string) => (known.has(name) ? ({} as Node) : undefined) } as Lister<Node>;
  const subnets = { ownerOf: () => ({ namespace: 'shop' }) } as unknown as SubnetStrategy;
  const reconciler = new PoolReconciler({
    cloud: { neutron, octavia: new OctaviaClient(session) },
    config: config(),
    nodes,
    pools,
    ports,
    subnets,
    inUse: () => true,
    clock,
    logger: silentLogger,
    ...o,
  });
  /** `count` free ports made for node-1's pool in set `groups`, in Neutron (through the record's writer). */
  const fill = async (count: number, groups = web) => {
    const made = await ports.createBulk(
      Array.from({ length: count }, () => ({
        network_id: network.id,
        fixed_ips: [{ subnet_id: subnet.id }],
        'binding:host_id': 'node-1',
        security_groups: [...groups],
      })),
    );
    pools.refill('node-1', made);
    return made.map((p) => p.id);
  };
  const free = (groups = web) => pools.free(pools.keyFor('node-1', place, groups)).map((p) => p.id);
  /** Reconciles node-1 until it asks for no next step (as its work queue would); how many reconciles it took. */
  const settle = async (each: () => AbortSignal = () => signal): Promise<number> => {
    for (let n = 1; n <= 50; n++) if ((await reconciler.reconcile('node-1', each()))?.requeueAfterMs !== 1) return n;
    throw new Error('still requeueing after 50 reconciles');
  };
  /** The ports Neutron has on this test's network. */
  const inNeutron = async () => neutron.ports.list({ network_id: network.id });
  return { clock, pools, ports, reconciler, fill, free, settle, known, place, web, db, inNeutron, network };
}

describe('PoolReconciler', () => {
  it('applies what changes() decided, and then has nothing more to do', async () => {
    const { pools, ports, reconciler, free, place, web, inNeutron } = await rig();
    pools.take('node-1', place, web); // a pod found the pool empty: it exists now
    const refilled: string[] = [];
    pools.refilled.source((e) => (refilled.push(e.node), [])).start(() => undefined, silentLogger);
    const planned = reconciler.changes('node-1');
    assert.deepEqual(
      planned.map((c) => [c.kind, c.make]),
      [['refill', 3]],
    );
    await reconciler.reconcile('node-1', signal);
    assert.equal(free().length, 3);
    assert.deepEqual(
      (await inNeutron()).map((p) => [p['binding:host_id'], p.security_groups, p.device_id, p.name]),
      Array.from({ length: 3 }, () => ['node-1', web, '', 'raven/c1/pool/node-1/shop']),
      'made ready for a pod of that node and set, named for a person: node and namespace',
    );
    assert.deepEqual(
      ports.record
        .all()
        .map((p) => p.id)
        .sort(),
      free().sort(),
    );
    assert.deepEqual(refilled, ['node-1']);
    assert.deepEqual(reconciler.changes('node-1'), []);
    // What the topology view shows of it: no refill in flight, the last one's duration.
    const state = pools.refillOf(pools.keyFor('node-1', place, web));
    assert.equal(state.refilling, false);
    assert.equal(typeof state.lastMs, 'number');
  });

  it("a VM node's refill puts its ports on the node's trunk; its trunk not known, the pool is drained", async () => {
    const vms = await neutron.networks.create({ name: 'vms' });
    await neutron.subnets.create({ network_id: vms.id, cidr: '192.168.9.0/24', ip_version: 4 });
    const parent = await neutron.ports.create({ network_id: vms.id, device_owner: 'compute:nova', device_id: 'vm' });
    const trunk = await neutron.trunks.create({ port_id: parent.id });
    // The node's trunk as nested mode gives it (`TrunkSubports` in reconcilers/nested): VLAN ids in turn.
    const vlans = new Map<string, number>();
    let nextVlan = 1;
    let known = true;
    const nested = {
      trunkOf: () => (known ? { trunkId: trunk.id } : ('pending' as const)),
      attach: async (trunkId: string, portId: string, s: AbortSignal) => {
        const sub = { port_id: portId, segmentation_type: 'vlan', segmentation_id: nextVlan++ };
        await neutron.trunks.addSubports(trunkId, [sub], { signal: s });
        vlans.set(portId, sub.segmentation_id);
        return sub.segmentation_id;
      },
      // a refill's adds: one request for all its ports
      attachAll: async (trunkId: string, portIds: readonly string[], s: AbortSignal) => {
        const subs = portIds.map((id) => ({ port_id: id, segmentation_type: 'vlan', segmentation_id: nextVlan++ }));
        await neutron.trunks.addSubports(trunkId, subs, { signal: s });
        for (const sub of subs) vlans.set(sub.port_id, sub.segmentation_id);
        return new Map(subs.map((sub) => [sub.port_id, sub.segmentation_id]));
      },
      detach: async (portId: string, s: AbortSignal) => {
        if (vlans.delete(portId)) await neutron.trunks.removeSubports(trunk.id, [portId], { signal: s });
      },
    };
    const { pools, reconciler, free, place, web, inNeutron, settle } = await rig({ nested }, (port) =>
      vlans.has(port.id) ? 'node-1' : port.hostId,
    );
    pools.take('node-1', place, web);
    await reconciler.reconcile('node-1', signal);
    const onTrunk = await neutron.trunks.getSubports(trunk.id);
    assert.deepEqual(onTrunk.map((s) => s.port_id).sort(), [...free()].sort(), 'the free ports are its subports');
    assert.equal(new Set(onTrunk.map((s) => s.segmentation_id)).size, 3, 'a VLAN id twice');
    for (const port of await inNeutron()) {
      assert.equal(port['binding:host_id'] ?? '', '', 'a subport bound to a host');
      assert.equal(port.device_id, '');
      assert.equal(port.device_owner, 'trunk:subport');
    }
    // Read after the adds: a claim's If-Match is on the revision Neutron has.
    const revisions = new Map((await inNeutron()).map((p) => [p.id, p.revision_number]));
    for (const port of pools.free(pools.keyFor('node-1', place, web)))
      assert.equal(port.revision, revisions.get(port.id));
    known = false;
    await settle();
    assert.deepEqual(await neutron.trunks.getSubports(trunk.id), [], 'taken off the trunk');
    assert.deepEqual(await inNeutron(), [], 'and deleted');
  });

  it('trims a pool above max to max: the ports that joined last are deleted, from Neutron and the record', async () => {
    const { ports, reconciler, fill, free, pools, inNeutron } = await rig();
    const made = await fill(6);
    await reconciler.reconcile('node-1', signal);
    assert.deepEqual(free(), made.slice(0, 4));
    assert.deepEqual((await inNeutron()).map((p) => p.id).sort(), [...free()].sort());
    assert.deepEqual(
      ports.record
        .all()
        .map((p) => p.id)
        .sort(),
      [...free()].sort(),
    );
    assert.deepEqual(pools.nodes(), ['node-1'], 'the pool stays');
  });

  it('drains the pools of a gone node and forgets them', async () => {
    const { ports, reconciler, fill, pools, known, db, inNeutron, settle } = await rig();
    await fill(3);
    await fill(1, db);
    known.delete('node-1');
    assert.deepEqual(
      reconciler.changes('node-1').map((c) => [c.kind, c.remove.length, c.why]),
      [
        ['drain', 3, 'its node is gone'],
        ['drain', 1, 'its node is gone'],
      ],
    );
    assert.equal(await settle(), 2, 'one step per pool');
    assert.deepEqual([(await inNeutron()).length, ports.record.all().length], [0, 0]);
    assert.deepEqual(pools.nodes(), []);
  });

  it('a refill cut short by the namespace’s share says so, with the share', async () => {
    const reached: [string, number][] = [];
    const { reconciler, pools, free, place, web } = await rig({
      config: config(2),
      setNamespace: () => 'shop',
      groupsWanted: () => true,
      onShareReached: (namespace, share) => reached.push([namespace, share]),
    });
    pools.take('node-1', place, web);
    await reconciler.reconcile('node-1', signal);
    assert.equal(free().length, 2);
    assert.deepEqual(reached, [['shop', 2]]);
  });

  it('a full quota: a retryable QuotaExceeded, and the refill no longer counts against the share', async () => {
    const { reconciler, pools, place, web } = await rig({
      config: config(3),
      setNamespace: () => 'shop',
    });
    // The project's port quota is what it uses now: Neutron refuses the refill's bulk create.
    const project = (await neutron.ports.create({ network_id: place.networkId })).project_id;
    const quotas = await neutron.quotas.details(project);
    await neutron.quotas.update(project, { port: quotas.port!.used });
    try {
      pools.take('node-1', place, web);
      await assert.rejects(
        reconciler.reconcile('node-1', signal),
        (err) => err instanceof RetryableError && err.reason === 'QuotaExceeded',
      );
      // A failed refill is no longer in flight, and left no duration.
      assert.deepEqual(pools.refillOf(pools.keyFor('node-1', place, web)), { refilling: false, lastMs: undefined });
      assert.deepEqual(
        reconciler.changes('node-1').map((c) => [c.make, c.capped]),
        [[3, undefined]],
      );
    } finally {
      await neutron.quotas.update(project, { port: -1 });
    }
  });

  it('under a slow Neutron: a refill whose reconcile times out lands tagged and pooled, none left untagged', async () => {
    const { reconciler, pools, free, place, web, inNeutron, network } = await rig();
    pools.take('node-1', place, web);
    // Neutron takes 1.5 s to answer a create; the reconcile's timeout fires after 0.3 s.
    sim.sim.faults.addRule({ method: 'POST', path: '/network/v2.0/ports', delayMs: 1_500 });
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new RavenError('RECONCILE_TIMEOUT', 'timed out')), 300);
    try {
      await reconciler.reconcile('node-1', timeout.signal).catch(() => undefined);
      // Neutron made the ports whatever the client did.
      await waitFor('the refill made in Neutron', async () => (await inNeutron()).length === 3);
    } finally {
      clearTimeout(timer);
      sim.sim.faults.clearRules();
    }
    const untagged = await listUntaggedPodPorts(neutron, 'c1');
    assert.deepEqual(
      {
        untagged: untagged.filter((p) => p.network_id === network.id).length,
        pooled: free().length,
        tagged: (await inNeutron()).filter((p) => p.tags.includes('raven.cluster=c1')).length,
      },
      { untagged: 0, pooled: 3, tagged: 3 },
    );
  });

  it('under a slow Neutron: a trim is bounded steps, each far within the timeout, and completes', async () => {
    const { fill, free, inNeutron, settle } = await rig();
    await fill(44);
    sim.sim.faults.addRule({ method: 'DELETE', path: '/network/v2.0/ports/', delayMs: 150 });
    try {
      // Each reconcile with a timeout of 3 s: 40 deletes one after the other (6 s) would not fit in one.
      const steps = await settle(() => AbortSignal.timeout(3_000));
      assert.equal(steps, 4, 'steps of at most 10 deletes');
    } finally {
      sim.sim.faults.clearRules();
    }
    assert.deepEqual([free().length, (await inNeutron()).length], [4, 4]);
  });

  it('looks again when the first pool with free ports turns idle, and drains it then', async () => {
    const { clock, reconciler, fill, free } = await rig({ inUse: () => false });
    await fill(2);
    assert.deepEqual(await reconciler.reconcile('node-1', signal), { requeueAfterMs: 601_000 });
    clock.advance(600_000);
    assert.equal(await reconciler.reconcile('node-1', signal), undefined);
    assert.deepEqual(free(), []);
  });

  it('adaptive, under a slow Neutron: ports pods gave back stay while the pool is in use, and go once it idled', async () => {
    const adaptive = config(undefined, 'adaptive');
    const portPools = { ...adaptive.portPools, max: 64 };
    const { clock, pools, ports, reconciler, fill, free, place, web, inNeutron, settle, network } = await rig({
      config: { ...adaptive, portPools },
    });
    sim.sim.faults.addRule({ method: 'POST', path: '/network/v2.0/ports', delayMs: 300 });
    sim.sim.faults.addRule({ method: 'DELETE', path: '/network/v2.0/ports/', delayMs: 150 });
    try {
      await fill(2);
      // A wave of 12 pods: 2 take the pool's ports, 10 find it empty and get their own (the cold path).
      const taken = Array.from({ length: 12 }, () => pools.take('node-1', place, web)).filter((p) => p !== undefined);
      const cold = await ports.createBulk(
        Array.from({ length: 10 }, (_, i) => ({
          network_id: network.id,
          fixed_ips: [{ subnet_id: place.subnetId }],
          'binding:host_id': 'node-1',
          security_groups: [...web],
          device_id: `pod-${i}`,
        })),
      );
      await settle(); // back to its floor (a batch: 3) while the pods hold their ports
      assert.equal(free().length, 3);
      // The wave goes: its 12 ports back to the pool.
      clock.advance(30_000);
      for (const port of [...taken, ...cold]) pools.give(port);
      await settle();
      assert.deepEqual([free().length, (await inNeutron()).length], [15, 15], 'kept for the next wave');
      clock.advance(89_999);
      await settle();
      assert.equal(free().length, 15, 'not idle yet: no take for 119.999 s');
      clock.advance(1);
      const result = await reconciler.reconcile('node-1', signal);
      assert.deepEqual(result, { requeueAfterMs: 1 }, 'a trim in steps');
      await settle(() => AbortSignal.timeout(3_000));
    } finally {
      sim.sim.faults.clearRules();
    }
    const left = await inNeutron();
    assert.deepEqual(
      {
        free: free().length,
        inNeutron: left.length,
        tagged: left.filter((p) => p.tags.includes('raven.cluster=c1')).length,
        untagged: (await listUntaggedPodPorts(neutron, 'c1')).filter((p) => p.network_id === network.id).length,
      },
      { free: 2, inNeutron: 2, tagged: 2, untagged: 0 },
      'idle: down to the floor, nothing untagged or surplus',
    );
  });
});
