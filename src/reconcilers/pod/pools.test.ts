import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, silentLogger } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import type { RecordedPort } from './port-record.ts';
import { PortPools, type PoolActivity } from './pools.ts';

const NETWORK = 'net-a';
const SUBNET = { subnetId: 'sub-a', networkId: NETWORK };
const WEB = ['sg-web'];
const DB = ['sg-db'];
/** The demand record's windows (`portPools.demandWindowSeconds`, `trimIdleSeconds` defaults). */
const WINDOW = { windowMs: 3_000, idleMs: 120_000 };

/** A free pod port of this cluster on `node`, subnet `sub-a`, in `groups` (a pool port never given: no device). */
function port(id: string, o: Partial<RecordedPort> & { subnet?: string } = {}): RecordedPort {
  const { subnet = SUBNET.subnetId, ...rest } = o;
  return {
    id,
    deviceId: '',
    name: 'raven/c1/pool/node-1',
    networkId: NETWORK,
    mac: 'fa:16:3e:00:00:01',
    fixedIps: [{ subnetId: subnet, address: `10.0.0.${id.length}` }],
    active: false,
    hostId: 'node-1',
    plug: 'bridge',
    securityGroups: WEB,
    revision: 1,
    updatedAt: 0,
    ...rest,
  };
}

/** The nodes sent on a channel, in order. */
function sent(channel: EventChannel<PoolActivity>): string[] {
  const nodes: string[] = [];
  channel.source((e) => (nodes.push(e.node), [])).start(() => undefined, silentLogger);
  return nodes;
}

/** No pod owns any port, no claim is pending, no grace. */
const NO_OWNERS = { portWanted: () => false, claimed: () => false, graceMs: 0 };

const ids = (ports: readonly RecordedPort[]) => ports.map((p) => p.id);

describe('PortPools', () => {
  it("a subport's pool is its trunk's node's; one whose trunk is not read yet joins it once it is", () => {
    const trunkNode = new Map<string, string>([['s1', 'vm-1']]);
    const nodeOf = (p: RecordedPort) => p.hostId || (trunkNode.get(p.id) ?? '');
    const pools = new PortPools({ anyGroups: false, demand: WINDOW, nodeOf }, new FakeClock(1_000));
    const subport = (id: string) => port(id, { hostId: '', plug: '' });
    pools.rebuild([subport('s1'), subport('s2'), port('bound')], NO_OWNERS);
    const vm = pools.keyFor('vm-1', SUBNET, WEB);
    assert.deepEqual(ids(pools.free(vm)), ['s1']);
    assert.equal(pools.take('vm-1', SUBNET, WEB)?.id, 's1');
    assert.equal(pools.take('vm-1', SUBNET, WEB), undefined, 's2 is no known trunk’s subport yet');
    assert.deepEqual(pools.placeUnplaced(), [], 'still unknown');
    trunkNode.set('s2', 'vm-1');
    assert.deepEqual(pools.placeUnplaced(), ['vm-1']);
    assert.deepEqual(ids(pools.free(vm)), ['s2']);
    const activity = sent(pools.activity);
    pools.give(subport('s1'));
    assert.equal(activity.at(-1), 'vm-1', "a subport given back wakes its trunk's node's pools");
    assert.deepEqual(ids(pools.free(vm)), ['s2', 's1']);
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), ['bound']);
  });

  it('a pod takes the first free port of its own set’s pool, and it is no longer free', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock(1_000));
    for (const id of ['p1', 'p2']) pools.add(port(id));
    pools.add(port('p3', { securityGroups: DB }));
    const key = pools.keyFor('node-1', SUBNET, WEB);
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'p1');
    assert.deepEqual(ids(pools.free(key)), ['p2']);
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'p2');
    assert.equal(pools.take('node-1', SUBNET, WEB), undefined, 'the DB set’s port is not handed over without regroup');
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, DB))), ['p3']);
    assert.deepEqual(pools.stats, { hits: 2, misses: 1 });
  });

  it('an empty pool gives nothing, and exists from then on (its refill follows), used now', () => {
    const clock = new FakeClock(5_000);
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, clock);
    assert.equal(pools.take('node-1', SUBNET, WEB), undefined);
    assert.deepEqual(
      pools.statesOf('node-1').map((p) => [p.key, p.free.length, p.lastActivity]),
      [['node-1|sub-a|sg-web', 0, 5_000]],
    );
    assert.deepEqual(pools.stats, { hits: 0, misses: 1 });
  });

  it('with regroup, an empty own pool falls back to a never-plugged port of another set of the node and subnet', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.add(port('plugged', { securityGroups: DB, active: true }));
    pools.add(port('other-subnet', { securityGroups: DB, subnet: 'sub-b' }));
    pools.add(port('other-node', { securityGroups: DB, hostId: 'node-2' }));
    assert.equal(pools.take('node-1', SUBNET, WEB, true), undefined, 'plugged, or another subnet or node: none');
    pools.add(port('fresh', { securityGroups: DB }));
    assert.equal(pools.take('node-1', SUBNET, WEB, false), undefined, 'no fallback without regroup');
    assert.equal(pools.take('node-1', SUBNET, WEB, true)?.id, 'fresh');
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, DB))), ['plugged']);
  });

  it('a port given back by a pod is never handed to another set (its chains may hold the old rules)', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.give(port('released', { securityGroups: DB, deviceId: 'old-pod' }));
    assert.equal(pools.take('node-1', SUBNET, WEB, true), undefined);
    assert.equal(pools.take('node-1', SUBNET, DB)?.id, 'released', 'its own set takes it');
  });

  it('without groups in the key (anyGroups), every set takes from one pool per node and subnet', () => {
    const pools = new PortPools({ anyGroups: true, demand: WINDOW }, new FakeClock());
    pools.add(port('p1', { securityGroups: [] }));
    assert.equal(pools.keyFor('node-1', SUBNET, WEB), 'node-1|sub-a|');
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'p1');
  });

  it('a dual-stack pool is keyed by both subnets, sorted, as a port with an address on each is', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    const dual = {
      ...SUBNET,
      subnetId: 'sub-v6',
      secondary: { subnetId: 'sub-v4', cidr: '10.0.0.0/24', gatewayIp: '10.0.0.1' },
    };
    const both = port('dual', {
      fixedIps: [
        { subnetId: 'sub-v6', address: 'fd00::5' },
        { subnetId: 'sub-v4', address: '10.0.0.5' },
      ],
    });
    assert.equal(pools.keyOf(both), pools.keyFor('node-1', dual, WEB));
    pools.add(both);
    assert.equal(pools.take('node-1', dual, WEB)?.id, 'dual');
  });

  it('takePort takes that very port, only from the pool the pod takes from', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.add(port('p1'));
    pools.add(port('p2'));
    pools.add(port('db', { securityGroups: DB }));
    assert.equal(pools.takePort('db', 'node-1', SUBNET, WEB), undefined, 'another set’s pool');
    assert.equal(pools.takePort('p2', 'node-2', SUBNET, WEB), undefined, 'another node’s pool');
    assert.equal(pools.takePort('nope', 'node-1', SUBNET, WEB), undefined, 'no such free port');
    assert.equal(pools.takePort('p2', 'node-1', SUBNET, WEB)?.id, 'p2');
    assert.equal(pools.takePort('p2', 'node-1', SUBNET, WEB), undefined, 'taken once only');
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), ['p1']);
  });

  it('a port given back joins its pool, free at once whatever its age, and the pool counts as used now', () => {
    const clock = new FakeClock(1_000);
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, clock);
    pools.add(port('p1'));
    clock.advance(60_000);
    const back = port('p2', { deviceId: 'gone-pod', updatedAt: 60_500 });
    pools.give(back);
    const [pool] = pools.statesOf('node-1');
    assert.deepEqual([pool?.free.length, pool?.lastActivity], [2, 61_000]);
    assert.deepEqual(ids(pools.free(pools.keyOf(back))), ['p1', 'p2'], 'behind the ports already free');
    const unseen = port('p3', { deviceId: 'unseen-pod', updatedAt: 60_500 });
    pools.rebuild([port('p1'), back, unseen], { ...NO_OWNERS, graceMs: 30_000 });
    assert.deepEqual(
      ids(pools.free(pools.keyOf(back))),
      ['p1', 'p2'],
      'its pod seen leaving: free within the grace age, where a port of a pod never seen is not',
    );
  });

  it('a port given back to a pool that was drained and forgotten makes the pool again', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.add(port('p1'));
    const key = pools.keyFor('node-1', SUBNET, WEB);
    pools.withdraw([port('p1')]);
    assert.ok(pools.forgetDrained(key));
    assert.deepEqual(pools.nodes(), []);
    pools.give(port('p2', { deviceId: 'gone-pod' }));
    assert.deepEqual(ids(pools.free(key)), ['p2'], 'its pool reconcile drains it if its subnet is gone');
  });

  it('a drained pool that a port joined meanwhile is not forgotten', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.add(port('p1'));
    const key = pools.keyFor('node-1', SUBNET, WEB);
    pools.withdraw([port('p1')]);
    pools.give(port('p2', { deviceId: 'gone-pod' }));
    assert.ok(!pools.forgetDrained(key));
    assert.deepEqual(ids(pools.free(key)), ['p2']);
  });

  it('a port a pod took while its refill was still under way does not join the pool again when the refill ends', () => {
    // A relist of the record during the refill (its subports' adds to the trunk, its read after) finds the new ports
    // free and bound to the node: the rebuild puts them in the pool, and a pod takes one before the refill ends.
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock(1_000));
    const made = [port('r1'), port('r2')];
    pools.rebuild(made, NO_OWNERS);
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'r1');
    pools.refill('node-1', made);
    const key = pools.keyFor('node-1', SUBNET, WEB);
    assert.deepEqual(ids(pools.free(key)), ['r2'], 'r1 is the pod’s: never handed to a second one');
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'r2');
    assert.equal(pools.take('node-1', SUBNET, WEB), undefined);
  });

  it('a subport unplaced at a rebuild whose refill then ended and which a pod took is not placed again', () => {
    // The relist came while the refill's add to the trunk was unanswered: the port was on no known trunk yet.
    const trunkNode = new Map<string, string>();
    const nodeOf = (p: RecordedPort) => p.hostId || (trunkNode.get(p.id) ?? '');
    const pools = new PortPools({ anyGroups: false, demand: WINDOW, nodeOf }, new FakeClock(1_000));
    const made = port('s1', { hostId: '', plug: '' });
    pools.rebuild([made], NO_OWNERS);
    trunkNode.set('s1', 'vm-1');
    pools.refill('vm-1', [made]);
    assert.equal(pools.take('vm-1', SUBNET, WEB)?.id, 's1');
    assert.deepEqual(pools.placeUnplaced(), [], 'nothing to place: s1 is the pod’s');
    assert.equal(pools.take('vm-1', SUBNET, WEB), undefined, 'never handed to a second pod');
  });

  it("a port of a live pod's name with no device (a VM's cold path between its add and its claim) is not free", () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock(1_000));
    const cold = port('cold', { name: 'raven/c1/ns/web-0' });
    const left = port('left', { name: 'raven/c1/ns/gone-0' });
    pools.rebuild([cold, left], { ...NO_OWNERS, named: (name) => name === 'raven/c1/ns/web-0' });
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), ['left'], 'a gone pod’s name: free');
  });

  it('withdrawn ports are no longer free, so no pod takes one while it is deleted', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    for (const id of ['p1', 'p2', 'p3']) pools.add(port(id));
    pools.withdraw([port('p1'), port('p3')]);
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), ['p2']);
    assert.equal(pools.takePort('p1', 'node-1', SUBNET, WEB), undefined);
  });

  it('a port joins one pool only: added again with other groups, it moves', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    pools.add(port('p1'));
    pools.add(port('p1', { securityGroups: DB }));
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), []);
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, DB))), ['p1']);
  });

  it('rebuilds from the record: the ports no pod owns, bound to a node; known pools keep their last use', () => {
    const clock = new FakeClock(1_000);
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, clock);
    pools.add(port('old'));
    clock.advance(10_000);
    pools.rebuild(
      [
        port('p1'),
        port('owned', { deviceId: 'live-pod' }),
        port('unbound', { hostId: '' }),
        port('p2', { hostId: 'node-2' }),
      ],
      { ...NO_OWNERS, portWanted: (uid) => uid === 'live-pod' },
    );
    assert.deepEqual(
      pools.statesOf('node-1').map((p) => [p.key, p.free.length, p.lastActivity]),
      [['node-1|sub-a|sg-web', 1, 1_000]],
      'the known pool keeps its last use',
    );
    assert.deepEqual(ids(pools.free('node-1|sub-a|sg-web')), ['p1']);
    assert.deepEqual(
      pools.statesOf('node-2').map((p) => [p.free.length, p.lastActivity]),
      [[1, 11_000]],
      'a pool first seen counts as used now: a restart does not drain it at once',
    );
    pools.rebuild([port('p1')], NO_OWNERS);
    assert.deepEqual(
      pools.sizes().map((p) => [p.place.node, p.place.subnetIds, p.place.securityGroups, p.free]),
      [
        ['node-1', ['sub-a'], ['sg-web'], 1],
        ['node-2', ['sub-a'], ['sg-web'], 0],
      ],
      'a pool left empty stays (its reconcile drains or refills it)',
    );
  });

  it('a port a live pod’s signed VIF names is kept for that pod alone (its node may have plugged it)', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock(100_000));
    const rule = { ...NO_OWNERS, signedFor: (id: string) => id === 'plugged' };
    pools.rebuild([port('plugged', { deviceId: 'dead-pod' }), port('free')], rule);
    assert.deepEqual(ids(pools.free('node-1|sub-a|sg-web')), ['free'], 'not free for another pod');
    assert.equal(pools.take('node-1', SUBNET, WEB)?.id, 'free');
    assert.equal(pools.take('node-1', SUBNET, WEB), undefined);
    assert.equal(pools.takePort('plugged', 'node-2', SUBNET, WEB), undefined, 'only in its own pool');
    assert.equal(pools.takePort('plugged', 'node-1', SUBNET, WEB)?.id, 'plugged', 'the pod its VIF is for gets it');
    assert.equal(pools.takePort('plugged', 'node-1', SUBNET, WEB), undefined, 'once');
    pools.rebuild([port('plugged', { deviceId: 'dead-pod' })], NO_OWNERS);
    assert.deepEqual(ids(pools.free('node-1|sub-a|sg-web')), ['plugged'], 'free again once no signed VIF names it');
  });

  it('what is free: no pod that wants a port, no claim, and a pod never seen only past the grace age', () => {
    const clock = new FakeClock(100_000);
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, clock);
    pools.give(port('released', { deviceId: 'gone-pod', updatedAt: 99_000 }));
    const rule = {
      portWanted: (uid: string) => uid === 'live-pod',
      claimed: (id: string) => id === 'claimed',
      graceMs: 30_000,
    };
    const record = [
      port('made'),
      port('live', { deviceId: 'live-pod', updatedAt: 0 }),
      port('claimed'),
      port('recent', { deviceId: 'unseen-pod', updatedAt: 99_000 }),
      port('old', { deviceId: 'unseen-pod', updatedAt: 70_000 }),
      port('released', { deviceId: 'gone-pod', updatedAt: 99_000 }),
    ];
    pools.rebuild(record, rule);
    assert.deepEqual(ids(pools.free('node-1|sub-a|sg-web')), ['made', 'old', 'released']);
    pools.rebuild([], rule);
    pools.rebuild(record, rule);
    assert.deepEqual(
      ids(pools.free('node-1|sub-a|sg-web')),
      ['made', 'old'],
      'a released port that left the record is forgotten as released',
    );
  });

  it('a take or a give is activity on its node; takePort and rebuild are not; a refill tells the node’s pods', () => {
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, new FakeClock());
    const activity = sent(pools.activity);
    const refilled = sent(pools.refilled);
    pools.refill('node-1', [port('p1'), port('p2')]);
    assert.deepEqual(ids(pools.free(pools.keyFor('node-1', SUBNET, WEB))), ['p1', 'p2']);
    pools.take('node-1', SUBNET, WEB);
    pools.take('node-3', SUBNET, WEB);
    pools.takePort('p2', 'node-1', SUBNET, WEB);
    pools.give(port('p9', { hostId: 'node-2', deviceId: 'gone-pod' }));
    pools.rebuild([], NO_OWNERS);
    assert.deepEqual(activity, ['node-1', 'node-3', 'node-2']);
    assert.deepEqual(refilled, ['node-1']);
  });

  it('states and every pool: what the pool decision reads', () => {
    const clock = new FakeClock(7_000);
    const pools = new PortPools({ anyGroups: false, demand: WINDOW }, clock);
    pools.add(port('p1'));
    pools.add(port('p2', { securityGroups: DB, hostId: 'node-2' }));
    assert.deepEqual(pools.statesOf('node-1'), [
      {
        key: 'node-1|sub-a|sg-web',
        node: 'node-1',
        networkId: NETWORK,
        subnetIds: ['sub-a'],
        securityGroups: WEB,
        free: [port('p1')],
        lastActivity: 7_000,
        demand: { rate: 0, lastTake: 7_000, held: 0, peak: 0 },
      },
    ]);
    assert.deepEqual(
      [...pools.everyPool()],
      [
        { securityGroups: WEB, subnetIds: ['sub-a'], free: 1 },
        { securityGroups: DB, subnetIds: ['sub-a'], free: 1 },
      ],
    );
  });

  it('the demand record: takes decay into a rate, pods hold ports and give them back, the peak restarts after idling', () => {
    const clock = new FakeClock(0);
    const pools = new PortPools({ anyGroups: false, demand: { windowMs: 10_000, idleMs: 30_000 } }, clock);
    for (const id of ['p1', 'p2']) pools.add(port(id));
    const demand = () => pools.statesOf('node-1')[0]!.demand;
    const taken = [1, 2, 3].map(() => pools.take('node-1', SUBNET, WEB)); // the third finds the pool empty
    assert.deepEqual(demand(), { rate: 0.30000000000000004, lastTake: 0, held: 3, peak: 3 });
    clock.advance(10_000);
    pools.give(taken[0]!);
    const again = pools.take('node-1', SUBNET, WEB);
    // 0.3 decayed over one window (× e⁻¹) plus this take's 0.1.
    assert.equal(demand().rate.toFixed(4), (0.3 * Math.exp(-1) + 0.1).toFixed(4));
    assert.deepEqual([demand().held, demand().peak], [3, 3]);
    pools.give(taken[1]!);
    pools.give(again!);
    clock.advance(30_000);
    pools.take('node-1', SUBNET, WEB);
    assert.deepEqual([demand().held, demand().peak], [2, 2], 'after an idle spell the peak starts from what is held');
    // A rebuild counts what pods hold from the record: the one port whose pod exists.
    pools.rebuild([port('p1', { deviceId: 'pod-a' }), port('p2', { deviceId: 'gone' })], {
      ...NO_OWNERS,
      portWanted: (uid) => uid === 'pod-a',
    });
    assert.equal(demand().held, 1);
  });
});
