import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import {
  decidePoolChanges,
  DELETE_STEP,
  leftAlone,
  nextIdleCheck,
  nextStep,
  poolSizes,
  type PoolChange,
  type PoolWorld,
} from './pool-decisions.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { PoolState } from './pools.ts';
import type { CachedPod } from './trim.ts';
import { poolInUse } from './wiring.ts';
import type { RecordedPort } from './port-record.ts';

const WEB = ['sg-web'];
const DB = ['sg-db'];
const IDLE_MS = 600_000;

function port(id: string): RecordedPort {
  return {
    id,
    deviceId: '',
    name: 'raven/c1/pool/node-1',
    networkId: 'net-a',
    mac: 'fa:16:3e:00:00:01',
    fixedIps: [{ subnetId: 'sub-a', address: '10.0.0.9' }],
    active: false,
    hostId: 'node-1',
    plug: 'bridge',
    securityGroups: WEB,
    revision: 1,
    updatedAt: 0,
  };
}

/** A pool of node-1 on subnet `sub-a` with `free` free ports (p1, p2 …), used at `lastActivity`. */
function pool(free: number, o: Partial<PoolState> = {}): PoolState {
  const securityGroups = o.securityGroups ?? WEB;
  return {
    key: `node-1|sub-a|${securityGroups.join(',')}`,
    node: 'node-1',
    networkId: 'net-a',
    subnetIds: ['sub-a'],
    securityGroups,
    free: Array.from({ length: free }, (_, i) => port(`p${i + 1}`)),
    lastActivity: 0,
    demand: { rate: 0, lastTake: 0, held: 0, peak: 0 },
    ...o,
  };
}

/** min 2, max 4, batch 3; subnet `sub-a` is namespace shop's; a pod of it runs on the node; now is 1 s. */
function world(o: Partial<PoolWorld> & { portPools?: Partial<PoolWorld['config']['portPools']> } = {}): PoolWorld {
  const { portPools, ...rest } = o;
  return {
    node: 'node-1',
    nodeExists: true,
    pools: [],
    everyPool: () => [],
    making: new Map(),
    subnetOwner: () => ({ namespace: 'shop' }),
    inUse: () => true,
    config: {
      portPools: {
        enabled: true,
        sizing: 'static',
        min: 2,
        max: 4,
        batch: 3,
        demandWindowSeconds: 60,
        trimIdleSeconds: 120,
        prefillNodes: 0,
        idleSeconds: IDLE_MS / 1000,
        namespaces: [],
        ...portPools,
      },
    },
    now: 1_000,
    ...rest,
  };
}

/** The decision, in short: kind, key, ports made or deleted, why (and whose share capped it). */
const decided = (w: PoolWorld) =>
  decidePoolChanges(w).map((c) => ({
    kind: c.kind,
    key: c.key,
    ...(c.kind === 'refill' ? { make: c.make } : { remove: c.remove.map((p) => p.id) }),
    why: c.why,
    ...(c.capped !== undefined ? { capped: c.capped } : {}),
  }));

/** With the NetworkPolicy translation: namespace shop's share of `share` free ports; WEB and DB are its sets. */
function shared(share: number, o: Partial<PoolWorld> = {}): PoolWorld {
  const w = world(o);
  return {
    ...w,
    config: { ...w.config, quotas: { securityGroupsPerNamespace: 0, poolPortsPerNamespace: share } },
    setNamespace: (groups) => (groups.join(',') === 'sg-other' ? undefined : 'shop'),
    groupsWanted: () => true,
    ...o,
  };
}

describe('decidePoolChanges', () => {
  describe('adaptive sizing', () => {
    /** Adaptive, min 2, max 20; trimmed after 120 s without a take; now is 1 s. */
    const adaptive = (o: Partial<PoolWorld> = {}, share?: number): PoolWorld => {
      const w = world({ portPools: { sizing: 'adaptive', max: 20 }, ...o });
      const quotas = { securityGroupsPerNamespace: 0, poolPortsPerNamespace: share ?? 0 };
      return share === undefined ? w : { ...w, config: { ...w.config, quotas } };
    };
    const demand = (d: Partial<PoolState['demand']>) => ({ rate: 0, lastTake: 0, held: 0, peak: 0, ...d });

    it('refills the deficit to the target in one bulk create: the takes expected over one measured refill', () => {
      // 4 takes/s, refills take 1.5 s: 6 wanted, 1 free.
      const pools = [pool(1, { demand: demand({ rate: 4, lastTake: 1_000, held: 10, peak: 10 }) })];
      assert.deepEqual(decided(adaptive({ pools, refillSeconds: 1.5 })), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 5, why: 'below its target 6' },
      ]);
    });

    it('keeps the ports pods gave back while the pool is in use, and trims the surplus only once it idled', () => {
      // Its pods held 12 at most and gave them back: 14 free (12 + the floor the refills kept).
      const held = demand({ rate: 0.2, lastTake: 0, held: 0, peak: 12 });
      assert.deepEqual(decided(adaptive({ pools: [pool(14, { demand: held })] })), [], 'no trim, no refill');
      assert.deepEqual(decided(adaptive({ pools: [pool(14, { demand: held })], now: 119_999 })), []);
      assert.deepEqual(
        decidePoolChanges(adaptive({ pools: [pool(14, { demand: held })], now: 120_000 })).map((c) => [
          c.kind,
          c.remove.map((p) => p.id),
        ]),
        [['trim', ['p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'p10', 'p11', 'p12', 'p13', 'p14']]],
        'idle: down to the floor, the ports that joined last',
      );
    });

    it('follows rising demand past the floor, never trims while pods take, and above max at once', () => {
      const rising = demand({ rate: 5, lastTake: 900, held: 30, peak: 30 });
      // 5 takes/s over a 1 s refill: 5 wanted though 3 is above min; a batch (3) at least.
      assert.deepEqual(decided(adaptive({ pools: [pool(3, { demand: rising })] })), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 3, why: 'below its target 5' },
      ]);
      assert.deepEqual(decided(adaptive({ pools: [pool(15, { demand: rising })] })), [], 'above its target, in use');
      assert.deepEqual(
        decidePoolChanges(adaptive({ pools: [pool(22, { demand: rising })] })).map((c) => [
          c.kind,
          c.remove.length,
          c.why,
        ]),
        [['trim', 2, 'above max 20']],
      );
    });

    it('a namespace’s adaptive growth above min is bounded by its share, over all its pools', () => {
      const busy = demand({ rate: 10, lastTake: 1_000, held: 0, peak: 0 });
      // Another node's pool of the namespace holds 7 free: 5 above the floor; share 8 → 3 more above the floor.
      const everyPool = () => [{ securityGroups: WEB, subnetIds: ['sub-a'], free: 7 }];
      assert.deepEqual(decided(adaptive({ pools: [pool(0, { demand: busy })], everyPool }, 8)), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 5, why: 'below its target 10', capped: 'shop' },
      ]);
      // The floor is never cut: a full share still refills to min.
      const full = () => [{ securityGroups: WEB, subnetIds: ['sub-a'], free: 30 }];
      assert.deepEqual(
        decidePoolChanges(adaptive({ pools: [pool(0, { demand: busy })], everyPool: full }, 8))[0]?.make,
        2,
      );
      // A namespace with sizes of its own takes static sizes (kuryr's override).
      const own = adaptive({ pools: [pool(0, { demand: busy })], everyPool });
      const configured = { ...own.config.portPools, namespaces: [{ namespace: 'shop', min: 1, batch: 1 }] };
      assert.deepEqual(decided({ ...own, config: { ...own.config, portPools: configured } }), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 1, why: 'below min 1' },
      ]);
    });
  });

  describe('refill', () => {
    it('below min: one bulk create of batch ports, where the pool’s ports are made', () => {
      const [change, ...more] = decidePoolChanges(world({ pools: [pool(1)] }));
      assert.deepEqual(more, []);
      assert.deepEqual(change, {
        kind: 'refill',
        key: 'node-1|sub-a|sg-web',
        make: 3,
        remove: [],
        why: 'below min 2',
        place: { node: 'node-1', networkId: 'net-a', subnetIds: ['sub-a'], securityGroups: WEB },
      });
    });

    it('at least up to min when min is more than a batch, never past max', () => {
      assert.deepEqual(
        decidePoolChanges(world({ pools: [pool(0)], portPools: { min: 5, max: 8, batch: 1 } }))[0]?.make,
        5,
      );
      assert.deepEqual(
        decidePoolChanges(world({ pools: [pool(1)], portPools: { min: 2, max: 3, batch: 10 } }))[0]?.make,
        2,
      );
    });

    it('nothing between min and max', () => {
      assert.deepEqual(decided(world({ pools: [pool(2), pool(4, { securityGroups: DB })] })), []);
    });

    it('a namespace’s own sizes win over the global ones', () => {
      const w = world({ pools: [pool(2)], portPools: { namespaces: [{ namespace: 'shop', min: 6, batch: 1 }] } });
      assert.deepEqual(decided(w), [{ kind: 'refill', key: 'node-1|sub-a|sg-web', make: 2, why: 'below min 6' }]);
      assert.deepEqual(decided({ ...w, subnetOwner: () => ({ namespace: 'other' }) }), [], 'another namespace');
    });

    it('no refill (and no drain) while a subnet of the pool is not known yet', () => {
      assert.deepEqual(decided(world({ pools: [pool(0)], subnetOwner: () => undefined })), []);
      const idle = pool(3, { lastActivity: -IDLE_MS });
      assert.deepEqual(decided(world({ pools: [idle], subnetOwner: () => undefined, inUse: () => false })), []);
    });

    it('capped by the namespace’s share: its sets’ free ports on every node and its refills in flight count', () => {
      const everyPool = () => [
        { securityGroups: WEB, subnetIds: ['sub-a'], free: 2 },
        { securityGroups: ['sg-other'], subnetIds: ['sub-a'], free: 50 },
      ];
      const w = shared(6, { pools: [pool(0)], everyPool, making: new Map([['shop', 1]]) });
      assert.deepEqual(decided(w), [{ kind: 'refill', key: 'node-1|sub-a|sg-web', make: 3, why: 'below min 2' }]);
      assert.deepEqual(decided({ ...w, making: new Map([['shop', 2]]) }), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 2, why: 'below min 2', capped: 'shop' },
      ]);
    });

    it('a full share: no port made, but the change says whose share it was (its Warning)', () => {
      const w = shared(2, {
        pools: [pool(0)],
        everyPool: () => [{ securityGroups: WEB, subnetIds: ['sub-a'], free: 2 }],
      });
      assert.deepEqual(
        decidePoolChanges(w).map((c) => [c.make, c.capped]),
        [[0, 'shop']],
      );
    });

    it('two pools of one namespace on the node share its room: the first takes it', () => {
      const w = shared(4, {
        pools: [pool(0), pool(0, { securityGroups: DB }), pool(0, { securityGroups: ['sg-other'] })],
      });
      assert.deepEqual(decided(w), [
        { kind: 'refill', key: 'node-1|sub-a|sg-web', make: 3, why: 'below min 2' },
        { kind: 'refill', key: 'node-1|sub-a|sg-db', make: 1, why: 'below min 2', capped: 'shop' },
        { kind: 'refill', key: 'node-1|sub-a|sg-other', make: 3, why: 'below min 2' },
      ]);
    });

    it('no share without the quota or without the translation', () => {
      const everyPool = () => [{ securityGroups: WEB, subnetIds: ['sub-a'], free: 100 }];
      assert.equal(decidePoolChanges(shared(0, { pools: [pool(0)], everyPool }))[0]?.make, 3);
      assert.equal(
        decidePoolChanges({ ...shared(1, { pools: [pool(0)], everyPool }), setNamespace: undefined })[0]?.make,
        3,
      );
    });
  });

  describe('trim', () => {
    it('above max: the free ports past the first max (those that joined last) are deleted', () => {
      assert.deepEqual(decided(world({ pools: [pool(6)] })), [
        { kind: 'trim', key: 'node-1|sub-a|sg-web', remove: ['p5', 'p6'], why: 'above max 4' },
      ]);
    });

    it('at max: nothing', () => {
      assert.deepEqual(decided(world({ pools: [pool(4)] })), []);
    });
  });

  describe('drain', () => {
    const all = ['p1', 'p2', 'p3'];

    it('a gone node: every free port of each of its pools, whatever else', () => {
      const w = world({ nodeExists: false, pools: [pool(3), pool(1, { securityGroups: DB })] });
      assert.deepEqual(decided({ ...w, subnetOwner: () => undefined }), [
        { kind: 'drain', key: 'node-1|sub-a|sg-web', remove: all, why: 'its node is gone' },
        { kind: 'drain', key: 'node-1|sub-a|sg-db', remove: ['p1'], why: 'its node is gone' },
      ]);
    });

    it('a gone subnet (its namespace deleted), even beside one not known yet', () => {
      const w = world({ pools: [pool(3, { subnetIds: ['sub-a', 'sub-b'] })] });
      const owners: Record<string, 'gone' | undefined> = { 'sub-a': 'gone', 'sub-b': undefined };
      assert.deepEqual(decided({ ...w, subnetOwner: (id) => owners[id] }), [
        { kind: 'drain', key: 'node-1|sub-a|sg-web', remove: all, why: 'its subnet is no pod subnet now' },
      ]);
    });

    it('a group set that is no longer wanted', () => {
      const w = world({ pools: [pool(3), pool(2, { securityGroups: DB })], groupsWanted: (g) => g !== DB });
      assert.deepEqual(decided(w), [
        {
          kind: 'drain',
          key: 'node-1|sub-a|sg-db',
          remove: ['p1', 'p2'],
          why: 'a security group of its set is no longer wanted',
        },
      ]);
    });

    it('idle: unused for idleSeconds and no pod of its namespace (of its set, with the translation) on the node', () => {
      const asked: unknown[] = [];
      const inUse = (...args: unknown[]) => (asked.push(args), false);
      const w = world({ pools: [pool(3, { lastActivity: 1_000 - IDLE_MS })], inUse });
      assert.deepEqual(decided(w), [{ kind: 'drain', key: 'node-1|sub-a|sg-web', remove: all, why: 'idle' }]);
      assert.deepEqual(decided({ ...w, now: 999 }), [], 'a millisecond short of idle');
      assert.deepEqual(decided({ ...w, inUse: () => true }), [], 'a pod of it runs there');
      decided({ ...w, groupsWanted: () => true });
      assert.deepEqual(asked, [
        ['node-1', 'shop', undefined],
        ['node-1', 'shop', WEB],
      ]);
    });

    it('a pool that goes with no free port: nothing to do', () => {
      assert.deepEqual(decided(world({ nodeExists: false, pools: [pool(0)] })), []);
    });
  });

  it('reads only its argument: the same world, the same decision; nothing in it changed', () => {
    const making = new Map([['shop', 1]]);
    const pools = [pool(0), pool(6, { securityGroups: DB })];
    const w = shared(3, { pools, making, everyPool: () => [{ securityGroups: WEB, subnetIds: ['sub-a'], free: 1 }] });
    const first = decidePoolChanges(w);
    assert.deepEqual(decidePoolChanges(w), first);
    assert.deepEqual([...making], [['shop', 1]]);
    assert.deepEqual(
      pools.map((p) => p.free.length),
      [0, 6],
    );
  });
});

describe('poolSizes', () => {
  it('a namespace’s own sizes, field by field, else the global ones', () => {
    const portPools = world({ portPools: { namespaces: [{ namespace: 'shop', max: 9 }] } }).config.portPools;
    assert.deepEqual(poolSizes(portPools, 'shop'), { min: 2, max: 9, batch: 3 });
    assert.deepEqual(poolSizes(portPools, 'other'), { min: 2, max: 4, batch: 3 });
    assert.deepEqual(poolSizes(portPools, undefined), { min: 2, max: 4, batch: 3 });
  });
});

describe('nextIdleCheck', () => {
  it('the least time left before a pool with free ports turns idle; none for empty or already idle pools', () => {
    const pools = [pool(2, { lastActivity: 10_000 }), pool(1, { lastActivity: 4_000 })];
    pools.push(pool(0, { lastActivity: 1_000 }), pool(3, { lastActivity: -10_000 }));
    assert.equal(nextIdleCheck(pools, 10, 12_000), 2_000);
    assert.equal(nextIdleCheck([pool(0, { lastActivity: 11_000 })], 10, 12_000), undefined);
  });
});

describe('poolInUse', () => {
  /** Pods by node, as the pod cache's `byNode` index gives them. */
  const pod = (name: string, namespace: string, node: string, more: Partial<CachedPod['spec']> = {}) =>
    ({
      metadata: { name, namespace, uid: `uid-${name}` },
      spec: { nodeName: node, containers: [], ...more },
      status: {},
    }) as unknown as CachedPod;
  const all = [pod('web', 'shop', 'node-1'), pod('agent', 'infra', 'node-2', { hostNetwork: true })];
  const pods = {
    byIndex: (_: string, node: string) => all.filter((p) => p.spec.nodeName === node),
  } as Lister<CachedPod>;

  it('a pod that wants a port on the node, of the namespace and set when asked', () => {
    const inUse = poolInUse(pods, (p) => (p.metadata.name === 'web' ? WEB : undefined));
    assert.ok(inUse('node-1', undefined));
    assert.ok(inUse('node-1', 'shop'));
    assert.ok(!inUse('node-1', 'other'));
    assert.ok(inUse('node-1', 'shop', WEB));
    assert.ok(!inUse('node-1', 'shop', DB));
    assert.ok(!inUse('node-2', undefined), 'a hostNetwork pod wants no port');
  });
});

describe('nextStep: what one reconcile applies', () => {
  const change = (kind: PoolChange['kind'], make: number, remove: number): PoolChange => ({
    kind,
    key: kind,
    make,
    remove: Array.from({ length: remove }, (_, i) => port(`p${i + 1}`)),
    why: '',
    place: { node: 'node-1', networkId: 'net-a', subnetIds: ['sub-a'], securityGroups: WEB },
  });

  it('one change, at most DELETE_STEP deletes of it, and whether more is left', () => {
    const trim = nextStep([change('trim', 0, DELETE_STEP + 3)]);
    assert.deepEqual([trim.step?.remove.length, trim.more], [DELETE_STEP, true]);
    const two = nextStep([change('refill', 4, 0), change('drain', 0, 2)]);
    assert.deepEqual([two.step?.kind, two.step?.make, two.more], ['refill', 4, true]);
    const last = nextStep([change('drain', 0, 2)]);
    assert.deepEqual([last.step?.remove.length, last.more], [2, false]);
  });

  it('a refill with no room left (the share) is no step: nothing to requeue for', () => {
    assert.deepEqual(nextStep([{ ...change('refill', 0, 0), capped: 'shop' }]), { step: undefined, more: false });
  });
});

describe('leftAlone: the pools the garbage collector may sweep', () => {
  it("only a live node's pool on a subnet not known yet", () => {
    assert.ok(leftAlone(true, [undefined]));
    assert.ok(!leftAlone(false, [undefined]), 'a gone node: drained by the pool reconciler');
    assert.ok(!leftAlone(true, [undefined, 'gone']), 'a gone subnet: drained');
    assert.ok(!leftAlone(true, [{ namespace: 'shop' }]));
  });
});
