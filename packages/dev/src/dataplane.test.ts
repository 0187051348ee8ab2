import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { dataplaneConfig, ravenConflist, readDataplaneRig } from './dataplane.ts';

const common = [
  'RAVEN_DATAPLANE_NEUTRON_URL=http://127.0.0.1:39696',
  'RAVEN_DATAPLANE_CLOUDS=/state/clouds.yaml',
  'RAVEN_DATAPLANE_CLOUD=dataplane-ovn',
  'RAVEN_DATAPLANE_HOST=rvo-node-1',
];

describe('the dataplane rig’s env file', () => {
  let dir = '';
  const file = async (name: string, lines: string[]) => {
    const path = join(dir, name);
    await writeFile(path, `# written by a rig\n${lines.join('\n')}\n`);
    return path;
  };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-rig-env-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('an OVN rig gives raven-cni its Open vSwitch and the pods their own names', async () => {
    const rig = await readDataplaneRig(
      await file('ovn', [
        ...common,
        'RAVEN_DATAPLANE_BACKEND=ovn',
        'RAVEN_DATAPLANE_OVS_DATABASE=unix:/state/run/db.sock',
        'RAVEN_DATAPLANE_OVS_BRIDGE=rvo-br-int',
        'RAVEN_DATAPLANE_INTERFACE_PREFIX=rvo',
        'RAVEN_DATAPLANE_NETNS_PREFIX=rvo-pod-',
        'RAVEN_DATAPLANE_OCTAVIA_URL=http://127.0.0.1:39876',
        'RAVEN_DATAPLANE_OCTAVIA_PROVIDER=ovn',
      ]),
    );
    const ovs = { database: 'unix:/state/run/db.sock', bridge: 'rvo-br-int', interfacePrefix: 'rvo' };
    const octavia = { url: 'http://127.0.0.1:39876', provider: 'ovn' };
    assert.deepEqual([rig.backend, rig.ovs, rig.netnsPrefix, rig.octavia], ['ovn', ovs, 'rvo-pod-', octavia]);
    assert.deepEqual(ravenConflist(rig, '/k').plugins[0]?.ovs, ovs);
  });

  it('a linuxbridge rig (no backend key) keeps tap and raven-pod-, and no ovs for raven-cni', async () => {
    const rig = await readDataplaneRig(await file('lb', common));
    assert.deepEqual(
      [rig.backend, rig.ovs, rig.interfacePrefix, rig.netnsPrefix, rig.octavia],
      ['linuxbridge', undefined, 'tap', 'raven-pod-', undefined],
    );
    assert.equal(ravenConflist(rig, '/k').plugins[0]?.ovs, undefined);
  });

  it('refuses an unknown backend, and an OVN rig without its switch', async () => {
    await assert.rejects(
      readDataplaneRig(await file('x', [...common, 'RAVEN_DATAPLANE_BACKEND=ovs'])),
      /backend "ovs"/,
    );
    await assert.rejects(
      readDataplaneRig(await file('y', [...common, 'RAVEN_DATAPLANE_BACKEND=ovn'])),
      /has no RAVEN_DATAPLANE_OVS_DATABASE/,
    );
  });

  it('Services are translated only on a rig with Octavia, with its provider unless one is configured', async () => {
    const env = { RAVEN_CLUSTER_ID: 'dev', FLANNEL_NET: '10.244.0.0/16', RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12' };
    const config = loadRavenConfig({ env });
    const lb = dataplaneConfig(config, await readDataplaneRig(await file('lb2', common)));
    assert.deepEqual([lb.translations.services, lb.emulateKubeProxy], [false, false]);
    const octavia = ['RAVEN_DATAPLANE_OCTAVIA_URL=http://127.0.0.1:39876', 'RAVEN_DATAPLANE_OCTAVIA_PROVIDER=ovn'];
    const rig = await readDataplaneRig(await file('ovn2', [...common, ...octavia]));
    const ovn = dataplaneConfig(config, rig);
    assert.deepEqual([ovn.translations.services, ovn.emulateKubeProxy, ovn.loadBalancer.provider], [true, true, 'ovn']);
    const own = loadRavenConfig({ env: { ...env, RAVEN_LOAD_BALANCER_PROVIDER: 'other' } });
    assert.equal(dataplaneConfig(own, rig).loadBalancer.provider, 'other');
  });
});
