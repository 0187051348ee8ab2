import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, silentLogger } from '../../core/index.ts';
import { RetryableError } from '../../controller/index.ts';
import type { Node } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { OpenStackError, type Port, type PortCreate } from '../../openstack/index.ts';
import type { Cloud, SubnetStrategy } from '../network/index.ts';
import { PoolReconciler, type PoolReconcilerOptions } from './pool-reconciler.ts';
import { PortPools } from './pools.ts';
import { PodPortRecord, recordedPort } from './port-record.ts';

const SUBNET = { subnetId: 'sub-a', networkId: 'net-a' };
const WEB = ['sg-web'];
const signal = new AbortController().signal;

/** Neutron's ports, as far as a pool reconcile sees them: a bulk create, a delete; `quotaFull` refuses creates. */
class FakeNeutron {
  readonly ports = new Map<string, Port>();
  quotaFull = false;
  #next = 1;

  readonly cloud = {
    neutron: {
      ports: {
        createBulk: (specs: readonly PortCreate[]): Promise<Port[]> => {
          if (this.quotaFull)
            return Promise.reject(
              new OpenStackError(
                {
                  service: 'network',
                  method: 'POST',
                  path: '/v2.0/ports',
                  status: 409,
                  type: 'OverQuota',
                  requestId: undefined,
                },
                'quota',
              ),
            );
          return Promise.resolve(specs.map((spec) => this.#make(spec)));
        },
        delete: (id: string): Promise<boolean> => Promise.resolve(this.ports.delete(id)),
      },
    },
  } as unknown as Cloud;

  #make(spec: PortCreate): Port {
    const n = this.#next++;
    const port = {
      id: `made-${n}`,
      name: spec.name ?? '',
      network_id: spec.network_id,
      mac_address: `fa:16:3e:00:00:${n}`,
      status: 'DOWN',
      device_id: spec.device_id ?? '',
      device_owner: spec.device_owner ?? '',
      fixed_ips: (spec.fixed_ips ?? []).map((f, i) => ({ subnet_id: f.subnet_id!, ip_address: `10.0.${i}.${n}` })),
      security_groups: [...(spec.security_groups ?? [])],
      'binding:host_id': spec['binding:host_id'] ?? '',
      tags: [...(spec.tags ?? [])],
      revision_number: 1,
      updated_at: '2026-11-28T12:00:00Z',
    } as unknown as Port;
    this.ports.set(port.id, port);
    return port;
  }
}

/** min 2, max 4, batch 3, idle after 600 s; with `share`, each namespace's pool-port share. */
function config(share?: number): PoolReconcilerOptions['config'] {
  const portPools = { enabled: true, min: 2, max: 4, batch: 3, idleSeconds: 600, namespaces: [] };
  const quotas = share === undefined ? undefined : { securityGroupsPerNamespace: 0, poolPortsPerNamespace: share };
  return { clusterId: 'c1', portPools, quotas };
}

/** A pool reconciler of nodes `node-1` (and any in `nodes`) over subnet `sub-a` of namespace shop: min 2, max 4, batch 3. */
function rig(o: Partial<PoolReconcilerOptions> & { nodes?: string[] } = {}) {
  const clock = new FakeClock(1_000_000);
  const neutron = new FakeNeutron();
  const pools = new PortPools({ anyGroups: false }, clock);
  const record = new PodPortRecord();
  const known = new Set(o.nodes ?? ['node-1']);
  const nodes = { get: (name: string) => (known.has(name) ? ({} as Node) : undefined) } as Lister<Node>;
  const subnets = { ownerOf: () => ({ namespace: 'shop' }) } as unknown as SubnetStrategy;
  const reconciler = new PoolReconciler({
    cloud: neutron.cloud,
    config: config(),
    nodes,
    pools,
    record,
    subnets,
    inUse: () => true,
    clock,
    logger: silentLogger,
    ...o,
  });
  /** `n` free ports made for node-1's pool in set `groups`, in Neutron and the record. */
  const fill = async (n: number, groups = WEB) => {
    const made = await neutron.cloud.neutron.ports.createBulk(
      Array.from({ length: n }, () => ({
        network_id: SUBNET.networkId,
        fixed_ips: [{ subnet_id: SUBNET.subnetId }],
        'binding:host_id': 'node-1',
        security_groups: [...groups],
      })),
    );
    for (const port of made.map(recordedPort)) {
      record.put(port);
      pools.add(port);
    }
  };
  const free = (groups = WEB) => pools.free(pools.keyFor('node-1', SUBNET, groups)).map((p) => p.id);
  return { clock, neutron, pools, record, reconciler, fill, free, known };
}

describe('PoolReconciler', () => {
  it('applies what changes() decided, and then has nothing more to do', async () => {
    const { neutron, pools, record, reconciler, free } = rig();
    pools.take('node-1', SUBNET, WEB); // a pod found the pool empty: it exists now
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
      [...neutron.ports.values()].map((p) => [p['binding:host_id'], p.security_groups, p.device_id, p.name]),
      Array.from({ length: 3 }, () => ['node-1', WEB, '', 'raven/c1/pool/node-1']),
      'made ready for a pod of that node and set',
    );
    assert.deepEqual(
      record
        .all()
        .map((p) => p.id)
        .sort(),
      free().sort(),
    );
    assert.deepEqual(refilled, ['node-1']);
    assert.deepEqual(reconciler.changes('node-1'), []);
  });

  it('trims a pool above max to max: the ports that joined last are deleted, from Neutron and the record', async () => {
    const { neutron, record, reconciler, fill, free, pools } = rig();
    await fill(6);
    await reconciler.reconcile('node-1', signal);
    assert.deepEqual(free(), ['made-1', 'made-2', 'made-3', 'made-4']);
    assert.deepEqual([...neutron.ports.keys()], free());
    assert.deepEqual(
      record.all().map((p) => p.id),
      free(),
    );
    assert.deepEqual(pools.nodes(), ['node-1'], 'the pool stays');
  });

  it('drains the pools of a gone node and forgets them', async () => {
    const { neutron, record, reconciler, fill, pools, known } = rig();
    await fill(3);
    await fill(1, ['sg-db']);
    known.delete('node-1');
    assert.deepEqual(
      reconciler.changes('node-1').map((c) => [c.kind, c.remove.length, c.why]),
      [
        ['drain', 3, 'its node is gone'],
        ['drain', 1, 'its node is gone'],
      ],
    );
    await reconciler.reconcile('node-1', signal);
    assert.deepEqual([neutron.ports.size, record.all().length], [0, 0]);
    assert.deepEqual(pools.nodes(), []);
  });

  it('a refill cut short by the namespace’s share says so, with the share', async () => {
    const reached: [string, number][] = [];
    const { reconciler, pools, free } = rig({
      config: config(2),
      setNamespace: () => 'shop',
      groupsWanted: () => true,
      onShareReached: (namespace, share) => reached.push([namespace, share]),
    });
    pools.take('node-1', SUBNET, WEB);
    await reconciler.reconcile('node-1', signal);
    assert.equal(free().length, 2);
    assert.deepEqual(reached, [['shop', 2]]);
  });

  it('a full quota: a retryable QuotaExceeded, and the refill no longer counts against the share', async () => {
    const { reconciler, pools, neutron } = rig({
      config: config(3),
      setNamespace: () => 'shop',
    });
    pools.take('node-1', SUBNET, WEB);
    neutron.quotaFull = true;
    await assert.rejects(
      reconciler.reconcile('node-1', signal),
      (err) => err instanceof RetryableError && err.reason === 'QuotaExceeded',
    );
    assert.deepEqual(
      reconciler.changes('node-1').map((c) => [c.make, c.capped]),
      [[3, undefined]],
    );
  });

  it('looks again when the first pool with free ports turns idle, and drains it then', async () => {
    const { clock, reconciler, fill, free } = rig({ inUse: () => false });
    await fill(2);
    assert.deepEqual(await reconciler.reconcile('node-1', signal), { requeueAfterMs: 601_000 });
    clock.advance(600_000);
    assert.equal(await reconciler.reconcile('node-1', signal), undefined);
    assert.deepEqual(free(), []);
  });
});
