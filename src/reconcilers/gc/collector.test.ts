import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { silentLogger } from '../../core/index.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../openstack/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import { POD_DEVICE_OWNER } from '../network/index.ts';
import { GarbageCollector } from './collector.ts';

describe('the garbage collector on a cloud with Neutron only', () => {
  let sim: RunningOpenStackSim;
  let dir: string;
  let session: OpenStackSession;
  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth' });
    dir = await mkdtemp(join(tmpdir(), 'raven-gc-'));
    // Like the real dataplane rig: a network endpoint and no load-balancer endpoint at all.
    const clouds = `clouds:\n  neutron-only:\n    auth_type: none\n    network_endpoint_override: ${sim.neutronUrl}\n`;
    await writeFile(join(dir, 'clouds.yaml'), clouds);
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'neutron-only', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
    });
  });
  after(async () => {
    await session.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sweeps orphan ports when told there are no load balancers, and fails without that', async () => {
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'gc-net' });
    const orphan = await neutron.ports.create({
      network_id: network.id,
      name: 'raven/neutron-only/ns/gone',
      device_id: 'uid-of-a-deleted-pod',
      device_owner: POD_DEVICE_OWNER,
      tags: ['raven.cluster=neutron-only', 'raven.kind=pod', 'raven.uid=uid-of-a-deleted-pod'],
    });
    const collector = (loadBalancers: boolean) =>
      new GarbageCollector({
        cloud: { neutron, octavia: new OctaviaClient(session) },
        config: { clusterId: 'neutron-only', gc: { graceSeconds: 0 } },
        ownerExists: () => false,
        logger: silentLogger,
        loadBalancers,
      });
    await assert.rejects(collector(true).collect({ routerId: undefined }), /load_balancer_endpoint_override/);
    const report = await collector(false).collect({ routerId: undefined });
    assert.deepEqual(
      report.orphans.map((o) => o.id),
      [orphan.id],
    );
    assert.equal(report.deleted, 1);
    assert.deepEqual(await neutron.ports.list({ id: orphan.id }), []);
  });

  it('counts only the deletes that deleted: an orphan someone else deleted meanwhile is not counted', async () => {
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'gc-net-2' });
    const uid = 'uid-of-another-deleted-pod';
    const orphan = await neutron.ports.create({
      network_id: network.id,
      name: 'raven/raced/ns/gone',
      device_id: uid,
      device_owner: POD_DEVICE_OWNER,
      tags: ['raven.cluster=raced', 'raven.kind=pod', `raven.uid=${uid}`],
    });
    const deleted: string[] = [];
    const collector = new GarbageCollector({
      cloud: { neutron, octavia: new OctaviaClient(session) },
      config: { clusterId: 'raced', gc: { graceSeconds: 0 } },
      // Asked while the sweep sorts what it listed: the port goes behind its back before its delete.
      ownerExists: () => {
        void neutron.ports.delete(orphan.id);
        return false;
      },
      logger: silentLogger,
      loadBalancers: false,
      onDeleted: (o) => deleted.push(o.id),
    });
    const report = await collector.collect({ routerId: undefined });
    assert.deepEqual(
      report.orphans.map((o) => o.id),
      [orphan.id],
    );
    assert.equal(report.deleted, 0);
    assert.deepEqual(deleted, []);
  });

  it("keeps free pool ports on an operator's untagged network: by the configured subnet, or as the pools' own", async () => {
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'operators-pods' });
    const subnet = await neutron.subnets.create({ network_id: network.id, cidr: '10.250.0.0/24', ip_version: 4 });
    const free = await neutron.ports.create({
      network_id: network.id,
      fixed_ips: [{ subnet_id: subnet.id }],
      name: 'raven/op/pool/node-1',
      device_id: '',
      device_owner: POD_DEVICE_OWNER,
      'binding:host_id': 'node-1',
      tags: ['raven.cluster=op', 'raven.kind=pod'],
    });
    const sweep = (o: { subnetIds?: string[]; owns?: (id: string) => boolean }) =>
      new GarbageCollector({
        cloud: { neutron, octavia: new OctaviaClient(session) },
        config: {
          clusterId: 'op',
          gc: { graceSeconds: 0 },
          subnets: { strategy: 'shared', shared: { subnetIds: o.subnetIds, subnetId: o.subnetIds?.[0] } },
        },
        ownerExists: () => false,
        logger: silentLogger,
        loadBalancers: false,
        pools: { nodeExists: (name) => name === 'node-1', owns: o.owns },
      }).collect({ routerId: undefined, dryRun: true });
    assert.deepEqual((await sweep({ subnetIds: [subnet.id] })).orphans, [], 'on the configured subnet');
    assert.deepEqual((await sweep({ owns: (id) => id === free.id })).orphans, [], "the pools' own");
    // Neither: an orphan (the backstop for a pool the pools leave alone).
    assert.deepEqual(
      (await sweep({})).orphans.map((o) => o.id),
      [free.id],
    );
  });
  it("deletes a pod's subport a trunk let go of (no device_owner), unless a live pod or a pool holds it", async () => {
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'gc-detached' });
    // What ML2/OVN leaves of a subport taken off its trunk: Raven's tags and claim, no device_owner.
    const detached = (name: string, deviceId: string) =>
      neutron.ports.create({
        network_id: network.id,
        name: `raven/detached/ns/${name}`,
        device_id: deviceId,
        device_owner: '',
        tags: ['raven.cluster=detached', 'raven.kind=pod'],
      });
    const gone = await detached('gone', 'uid-gone');
    const live = await detached('live', 'uid-live');
    const pooled = await detached('pooled', '');
    const sweep = (graceSeconds: number, dryRun: boolean) =>
      new GarbageCollector({
        cloud: { neutron, octavia: new OctaviaClient(session) },
        config: { clusterId: 'detached', gc: { graceSeconds } },
        ownerExists: (kind, uid) => kind === 'pod' && uid === 'uid-live',
        logger: silentLogger,
        loadBalancers: false,
        pools: { nodeExists: () => true, owns: (id) => id === pooled.id },
      }).collect({ routerId: undefined, dryRun });
    assert.deepEqual((await sweep(3600, true)).orphans, [], 'within the grace period');
    const report = await sweep(0, false);
    assert.deepEqual(
      report.orphans.map((o) => o.id),
      [gone.id],
    );
    assert.deepEqual(report.podPorts, [], 'a detached subport is no pod port for the verification');
    assert.deepEqual(await neutron.ports.list({ id: gone.id }), []);
    assert.equal((await neutron.ports.list({ id: [live.id, pooled.id] })).length, 2);
  });
});
