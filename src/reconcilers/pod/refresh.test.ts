/**
 * The refresh of ports pods gave back, against the OpenStack simulator on a real socket: what the pools hold after it
 * is what Neutron says, so a claim's `If-Match` is answered the first time, and a port another writer took meanwhile
 * is no longer handed out.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { EventChannel } from '../../controller/index.ts';
import { FakeClock, silentLogger } from '../../core/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { PendingClaims, PortClaimReconciler } from './claims.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../openstack/index.ts';
import { PortPools } from './pools.ts';
import { PodPortRecord } from './port-record.ts';
import { PodPorts } from './ports.ts';
import { PortRefresh, REFRESH_AFTER_MS } from './refresh.ts';
import type { CachedPod } from './trim.ts';
import type { PortGone } from './verify.ts';

const signal = new AbortController().signal;

let sim: RunningOpenStackSim;
let session: OpenStackSession;
let neutron: NeutronClient;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'raven-refresh-'));
  const cloudsYamlOut = join(dir, 'clouds.yaml');
  sim = await runOpenStackSim({ port: 0, auth: 'noauth', provisioningDelayMs: 0, cloudsYamlOut });
  session = new OpenStackSession({
    cloud: loadCloudConfig({ cloud: 'raven-sim-noauth', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
    timeoutMs: 30_000,
  });
  neutron = new NeutronClient(session);
});
after(async () => {
  await session.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

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
  const refresh = new PortRefresh({ cloud: { neutron, octavia: new OctaviaClient(session) }, pools, ports, clock });
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
  return { clock, pools, ports, refresh, given, take, reads };
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
    const { clock, refresh, given, take, ports, pools } = await rig(1);
    const port = take()!;
    ports.reserve({ ...port, deviceId: 'new-pod' });
    await neutron.tags.add('ports', port.id, 'changed');
    clock.advance(REFRESH_AFTER_MS);
    assert.equal(await refresh.reconcile('node-1', signal), undefined);
    assert.equal(ports.record.get(given[0]!.id)?.deviceId, 'new-pod', 'the reservation stands');
    // A read that comes back after the take (it was in flight) is not taken up either.
    const fresh = (await neutron.ports.list({ id: port.id }))[0]!;
    assert.equal(pools.refresh({ ...port, revision: fresh.revision_number }), false);
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

  it('has a claim read first a port taken before its refresh: one read and one update, no 412', async () => {
    const { pools, ports, given, take } = await rig(1);
    await neutron.tags.add('ports', given[0]!.id, 'down'); // the agent's DOWN, not read yet
    const taken = take()!;
    const pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-p' },
      spec: { nodeName: 'node-1' },
      status: { phase: 'Pending' },
    } as unknown as CachedPod;
    const reserved = { ...taken, deviceId: 'uid-p', name: 'raven/c1/ns/p' };
    ports.reserve(reserved);
    const claims = new PendingClaims();
    claims.add(taken.id, { uid: 'uid-p', from: taken, reserved }, 'ns/p');
    const lost: PortGone[] = [];
    const gone = new EventChannel<PortGone>('gone');
    gone.source((e) => (lost.push(e), [])).start(() => undefined, silentLogger);
    const reconciler = new PortClaimReconciler({
      cloud: { neutron, octavia: new OctaviaClient(session) },
      pods: { get: (key: string) => (key === 'ns/p' ? pod : undefined) } as unknown as Lister<CachedPod>,
      ports,
      claims,
      portsGone: gone,
      podExists: (uid) => uid === 'uid-p',
      stale: (id) => pools.isStale(id),
      logger: silentLogger,
    });
    const refused = () => sim.sim.faults.errors()['PUT /network/v2.0/ports/{id} 412'] ?? 0;
    const before = refused();
    await reconciler.reconcile('ns/p', signal);
    assert.equal((await neutron.ports.list({ id: taken.id }))[0]?.device_id, 'uid-p');
    assert.equal(claims.size, 0);
    assert.deepEqual(lost, []);
    assert.equal(refused() - before, 0, 'no update answered 412');
  });
});
