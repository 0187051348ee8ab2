/**
 * The refresh of ports pods gave back, against the OpenStack simulator on a real socket: what the pools hold after it
 * is what Neutron says, so a claim's `If-Match` is answered the first time, and a port another writer took meanwhile
 * is no longer handed out.
 */
import assert from 'node:assert/strict';
import { simWithClients, type RunningOpenStackSim, type SimWithClients } from '../../../test/support/openstack-sim.ts';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { EventChannel } from '../../controller/index.ts';
import { FakeClock, silentLogger } from '../../core/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { PendingClaims, PortClaimReconciler } from './claims.ts';
import { OctaviaClient, type NeutronClient, type OpenStackSession } from '../../openstack/index.ts';
import { PortPools } from './pools.ts';
import type { RecordedPort } from './port-record.ts';
import { PodPortRecord } from './port-record.ts';
import { PodPorts } from './ports.ts';
import { PortRefresh, REFRESH_AFTER_MS } from './refresh.ts';
import type { CachedPod } from './trim.ts';
import type { PortGone } from './verify.ts';

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

let tests = 0;

/** Node-1's pool on a subnet of its own, and `count` ports its pods held and gave back (recorded as Neutron had them). */
async function rig(count: number) {
  const n = ++tests;
  const network = await neutron.networks.create({ name: `refresh-${n}` });
  const subnet = await neutron.subnets.create({ network_id: network.id, cidr: `10.${n}.0.0/24`, ip_version: 4 });
  const place = { subnetId: subnet.id, networkId: network.id };
  const clock = new FakeClock(1_000_000);
  const pools = new PortPools({ anyGroups: true, demand: { windowMs: 3_000, idleMs: 120_000 } }, clock);
  const ports = new PodPorts(neutron, new PodPortRecord());
  // The cluster's live pods with a port: only another leader's here (this leader's own pods took none yet).
  const portWanted = (uid: string) => uid === 'other-leaders-pod';
  const refresh = new PortRefresh({
    cloud: { neutron, octavia: new OctaviaClient(session) },
    pools,
    ports,
    portWanted,
    clock,
  });
  const given = [];
  for (let i = 0; i < count; i++) {
    const port = await ports.create({
      network_id: network.id,
      fixed_ips: [{ subnet_id: subnet.id }],
      'binding:host_id': 'node-1',
      device_id: `pod-${i}`,
    });
    given.push(port);
  }
  for (const port of given) pools.give(port);
  const take = () => pools.take('node-1', place, []);
  const reads = () => sim.sim.faults.counters()['GET /network/v2.0/ports'] ?? 0;
  return { clock, pools, ports, refresh, given, take, reads, portWanted };
}

describe('PortRefresh', () => {
  it('reads ports given back once they settled: a claim on what the pool hands out is answered the first time', async () => {
    const { clock, refresh, given, take } = await rig(3);
    // What the agent does when a pod leaves (the port goes DOWN), or a cold create's tagging: a revision Raven missed.
    for (const port of given) await neutron.tags.add('ports', port.id, 'changed-behind-ravens-back');

    const early = await refresh.reconcile('node-1', signal);
    assert.equal(early?.requeueAfterMs, REFRESH_AFTER_MS, 'not read before it settled; looked at again then');
    clock.advance(REFRESH_AFTER_MS);
    assert.equal(await refresh.reconcile('node-1', signal), undefined);

    for (let i = 0; i < given.length; i++) {
      const port = take();
      assert.ok(port, 'still free: the same previous owner');
      const claimed = await neutron.ports.update(port.id, { device_id: `new-${i}` }, { ifRevision: port.revision });
      assert.equal(claimed.device_id, `new-${i}`);
    }
  });

  it('takes a port another writer claimed meanwhile out of its pool, and records its owner', async () => {
    const { clock, refresh, given, take, ports } = await rig(2);
    const [stolen, kept] = given;
    // A stale leader's claim landed on one of them.
    await neutron.ports.update(stolen!.id, { device_id: 'other-leaders-pod' });
    clock.advance(REFRESH_AFTER_MS);
    await refresh.reconcile('node-1', signal);

    assert.equal(ports.record.get(stolen!.id)?.deviceId, 'other-leaders-pod');
    assert.equal(take()?.id, kept!.id);
    assert.equal(take(), undefined, 'the claimed port is not handed to a pod of this leader');
  });

  it('leaves a port a pod took before its read as the pod has it', async () => {
    const { clock, refresh, given, take, ports, pools, portWanted } = await rig(1);
    const port = take()!;
    ports.reserve({ ...port, deviceId: 'new-pod' });
    await neutron.tags.add('ports', port.id, 'changed');
    clock.advance(REFRESH_AFTER_MS);
    assert.equal(await refresh.reconcile('node-1', signal), undefined);
    assert.equal(ports.record.get(given[0]!.id)?.deviceId, 'new-pod', 'the reservation stands');
    // A read that comes back after the take (it was in flight) is not taken up either.
    const fresh = (await neutron.ports.list({ id: port.id }))[0]!;
    assert.equal(pools.refresh({ ...port, revision: fresh.revision_number }, portWanted), false);
  });

  it('keeps a port free whose claim landed for a pod that is gone (deleted while its claim was in flight)', async () => {
    const { clock, refresh, given, take, ports } = await rig(1);
    const [port] = given;
    // The claim of a pod deleted before it was answered lands after the port was given back.
    await neutron.ports.update(port!.id, { device_id: 'pod-deleted-meanwhile' });
    clock.advance(REFRESH_AFTER_MS);
    await refresh.reconcile('node-1', signal);

    const [now] = await neutron.ports.list({ id: port!.id });
    assert.equal(ports.record.get(port!.id)?.revision, now!.revision_number, 'recorded as Neutron has it');
    const again = take();
    assert.equal(again?.id, port!.id, 'still in its pool');
    const claimed = await neutron.ports.update(again.id, { device_id: 'next-pod' }, { ifRevision: again.revision });
    assert.equal(claimed.device_id, 'next-pod', 'and its next claim is answered the first time');
  });

  it("reads a node's ports given back over a while in one request, once none came back for a settle time", async () => {
    const { clock, pools, refresh, given, reads } = await rig(3);
    const [first, second, third] = given;
    for (const port of given) await neutron.tags.add('ports', port.id, 'changed');
    const before = reads();
    clock.advance(REFRESH_AFTER_MS - 1);
    pools.give(second!); // given back again a moment later: the wave is still leaving
    assert.equal((await refresh.reconcile('node-1', signal))?.requeueAfterMs, REFRESH_AFTER_MS);
    clock.advance(REFRESH_AFTER_MS);
    assert.equal(await refresh.reconcile('node-1', signal), undefined);
    assert.equal(reads() - before, 1, 'one read for the three');
    const copies = new Map(pools.staleOn('node-1').map((s) => [s.port.id, s]));
    assert.equal(copies.size, 0, 'none left to read');
    for (const port of [first!, second!, third!]) {
      const [now] = await neutron.ports.list({ id: port.id });
      const held = pools.free(pools.keyOf(port)).find((p) => p.id === port.id);
      assert.equal(held?.revision, now!.revision_number);
    }
  });

  it('has claims of ports taken before their refresh read them first, together, in one request: no 412', async () => {
    const { pools, ports, given, take, refresh, reads } = await rig(3);
    for (const port of given) await neutron.tags.add('ports', port.id, 'down'); // the agent's DOWN, not read yet
    const claims = new PendingClaims();
    const pods = new Map<string, CachedPod>();
    const taken: RecordedPort[] = [];
    /** Pod i takes a port (its claim pending), as the pod reconciler does. */
    const podTakes = (i: number) => {
      const port = take()!;
      taken.push(port);
      const uid = `uid-${i}`;
      pods.set(`ns/p${i}`, {
        metadata: { name: `p${i}`, namespace: 'ns', uid },
        spec: { nodeName: 'node-1' },
        status: { phase: 'Pending' },
      } as unknown as CachedPod);
      const reserved = { ...port, deviceId: uid, name: `raven/c1/ns/p${i}` };
      ports.reserve(reserved);
      claims.add(port.id, { uid, from: port, reserved }, `ns/p${i}`);
    };
    const lost: PortGone[] = [];
    const gone = new EventChannel<PortGone>('gone');
    gone.source((e) => (lost.push(e), [])).start(() => undefined, silentLogger);
    const reconciler = new PortClaimReconciler({
      cloud: { neutron, octavia: new OctaviaClient(session) },
      pods: { get: (key: string) => pods.get(key) } as unknown as Lister<CachedPod>,
      ports,
      claims,
      portsGone: gone,
      podExists: (uid) => uid.startsWith('uid-'),
      stale: (id) => pools.isStale(id),
      readStale: (port, s) => refresh.read(port, s),
      logger: silentLogger,
    });
    const refused = () => sim.sim.faults.errors()['PUT /network/v2.0/ports/{id} 412'] ?? 0;
    const [refusedBefore, readsBefore] = [refused(), reads()];
    // A wave: two pods took ports before any read, and their claims run together: one read, with the node's free one.
    podTakes(0);
    podTakes(1);
    await Promise.all([reconciler.reconcile('ns/p0', signal), reconciler.reconcile('ns/p1', signal)]);
    for (const [i, port] of taken.entries())
      assert.equal((await neutron.ports.list({ id: port.id }))[0]?.device_id, `uid-${i}`);
    assert.equal(claims.size, 0);
    assert.deepEqual(lost, []);
    assert.equal(refused() - refusedBefore, 0, 'no update answered 412');
    assert.equal(reads() - readsBefore, 3, 'one read for both claims (and the free port), then the two checks above');
    const left = pools.free(pools.keyOf(given[2]!))[0]!;
    assert.equal(
      left.revision,
      (await neutron.ports.list({ id: left.id }))[0]!.revision_number,
      'the free one read too',
    );
  });
});
