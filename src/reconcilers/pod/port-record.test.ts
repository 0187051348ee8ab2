import assert from 'node:assert/strict';
import { heapPerItem } from '../../../test/support/heap.ts';
import { describe, it } from '../../../test/support/node-test.ts';
import type { Port } from '../../openstack/index.ts';
import { PodPortRecord, recordedPort } from './port-record.ts';

const NETWORK = '28f80316-0c00-4cac-bdce-a4caaeb8e27c';
const SUBNET = 'af2ff1c6-34f2-4927-b6ee-e72803a852d7';
const GROUPS = ['9844c8f2-18b9-497c-be4f-9a3714a3536e', 'a81e8966-e9ba-4595-a6a0-48bceefb59a6'];

/** Port i as Neutron's answer parses: every id a string of its own. */
function parsedPort(i: number, device = `pod-uid-${i}`): Port {
  return JSON.parse(
    JSON.stringify({
      id: `port-${i}`,
      device_id: device,
      name: `raven/bench/ns/pod-${i}`,
      network_id: NETWORK,
      mac_address: `fa:16:3e:00:${(i >> 8) & 255}:${i & 255}`,
      fixed_ips: [{ subnet_id: SUBNET, ip_address: `10.244.${(i >> 8) & 255}.${i & 255}` }],
      status: 'ACTIVE',
      'binding:host_id': 'node-01',
      security_groups: [...GROUPS].reverse(),
      revision_number: 3,
      updated_at: '2026-11-28T12:00:00Z',
    }),
  ) as Port;
}

describe('recordedPort', () => {
  it('keeps what a VIF is built from, the groups sorted', () => {
    const port = recordedPort(parsedPort(1));
    assert.deepEqual(port, {
      id: 'port-1',
      deviceId: 'pod-uid-1',
      name: 'raven/bench/ns/pod-1',
      networkId: NETWORK,
      mac: 'fa:16:3e:00:0:1',
      fixedIps: [{ subnetId: SUBNET, address: '10.244.0.1' }],
      active: true,
      hostId: 'node-01',
      plug: '',
      securityGroups: GROUPS,
      revision: 3,
      updatedAt: Date.parse('2026-11-28T12:00:00Z'),
    });
  });

  it('how the node plugs it, from binding:vif_type: what a signed VIF tells the node', () => {
    const plug = (vifType: string, details: Record<string, unknown> = {}) =>
      recordedPort({ ...parsedPort(1), 'binding:vif_type': vifType, 'binding:vif_details': details }).plug;
    assert.equal(plug('bridge'), 'bridge');
    assert.equal(plug('ovs', { port_filter: true }), 'ovs');
    assert.equal(plug('ovs', { ovs_hybrid_plug: true }), '', 'raven-cni does not do hybrid plugs');
    assert.equal(plug('unbound'), '');
    assert.equal(plug('binding_failed'), '');
  });

  it('ports in the same groups share one list of them', () => {
    assert.equal(recordedPort(parsedPort(1)).securityGroups, recordedPort(parsedPort(2)).securityGroups);
  });

  it('the ids every port repeats are kept once: under 400 bytes a recorded port', () => {
    // Neutron's answers as text: what the record keeps of them is measured, the parsed bodies are dropped.
    const perPort = heapPerItem(
      10_000,
      (n) => Array.from({ length: n }, (_, i) => JSON.stringify(parsedPort(i))),
      (bodies) => bodies.map((body) => recordedPort(JSON.parse(body) as Port)),
    );
    // Each port's own copies of the network, subnet, node and group ids (and its own list) made it about 600.
    assert.ok(perPort < 400, `${perPort.toFixed(0)} bytes a port`);
  });
});

describe('PodPortRecord', () => {
  it('finds a pod’s ports by device and by name, one or several', () => {
    const record = new PodPortRecord();
    const a = recordedPort(parsedPort(1, 'uid-a'));
    const again = { ...recordedPort(parsedPort(2, 'uid-a')), name: a.name };
    record.put(a);
    assert.equal(record.forPod('uid-a'), a);
    record.put(again);
    assert.deepEqual(record.allForPod('uid-a'), [a, again]);
    assert.deepEqual(record.named(a.name), [a, again]);
    record.remove(a.id);
    assert.equal(record.forPod('uid-a'), again);
    assert.deepEqual(record.named(a.name), [again]);
    record.remove(again.id);
    assert.equal(record.forPod('uid-a'), undefined);
    assert.deepEqual(record.named(a.name), []);
  });
});
