import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import type { Vif } from '../kube/api/index.ts';
import { CniError } from './spec/index.ts';
import { defaultRoutes } from './veth.ts';
import { verifyPort, type NeutronView } from './verify.ts';

const pod = { namespace: 'ns', name: 'web', uid: 'pod-uid' };
const vif: Vif = {
  version: 1,
  podUid: 'pod-uid',
  portId: 'b3f0c2d1-7a4e-4c9b-8e21-5d6f7a8b9c0d',
  networkId: '4a7e9c1b-2d3f-4e5a-8b6c-7d8e9f0a1b2c',
  subnetId: 'subnet-1',
  mac: 'fa:16:3e:12:34:56',
  ips: [{ address: '10.244.3.17', prefixLength: 24, gateway: '10.244.3.1' }],
  mtu: 1450,
  active: false,
};
const view: NeutronView = {
  port: {
    id: vif.portId,
    network_id: vif.networkId,
    mac_address: 'FA:16:3E:12:34:56',
    fixed_ips: [{ subnet_id: 'subnet-1', ip_address: '10.244.3.17' }],
    device_id: 'pod-uid',
    device_owner: 'compute:raven',
    'binding:host_id': 'node-1',
    'binding:vif_type': 'bridge',
    'binding:vif_details': {},
  },
  subnet: { id: 'subnet-1', network_id: vif.networkId, cidr: '10.244.3.0/24', gateway_ip: '10.244.3.1' },
  network: { id: vif.networkId, mtu: 1400 },
};

function refusal(change: {
  vif?: Partial<Vif>;
  port?: Partial<NeutronView['port']>;
  subnet?: Partial<NeutronView['subnet']>;
}) {
  try {
    verifyPort({ ...vif, ...change.vif }, pod, 'node-1', {
      port: { ...view.port, ...change.port },
      subnet: { ...view.subnet, ...change.subnet },
      network: view.network,
    });
  } catch (err) {
    assert.ok(err instanceof CniError);
    return { code: err.cniCode, msg: err.message };
  }
  assert.fail('accepted');
}

describe('verifyPort', () => {
  it('plugs with Neutron’s values: MAC, addresses, MTU, tap and bridge names', () => {
    assert.deepEqual(verifyPort(vif, pod, 'node-1', view), {
      kind: 'bridge',
      portId: vif.portId,
      deviceId: 'pod-uid',
      networkId: vif.networkId,
      tap: 'tapb3f0c2d1-7a',
      bridge: 'brq4a7e9c1b-2d',
      mac: 'fa:16:3e:12:34:56',
      mtu: 1400,
      ips: [{ address: '10.244.3.17', prefixLength: 24, gateway: '10.244.3.1' }],
    });
  });

  it('plugs an OVS port (ML2/OVN) into the node’s integration bridge, or the one Neutron’s vif_details name', () => {
    const ovn = {
      ...view,
      port: {
        ...view.port,
        'binding:vif_type': 'ovs',
        'binding:vif_details': { port_filter: true, connectivity: 'l2' },
      },
    };
    const plan = verifyPort(vif, pod, 'node-1', ovn);
    assert.deepEqual([plan.kind, plan.tap, plan.bridge, plan.mtu], ['ovs', 'tapb3f0c2d1-7a', 'br-int', 1400]);
    const own = verifyPort(vif, pod, 'node-1', ovn, { bridge: 'br-pods', interfacePrefix: 'rvo' });
    assert.deepEqual([own.tap, own.bridge], ['rvob3f0c2d1-7a', 'br-pods']);
    const named = { ...ovn, port: { ...ovn.port, 'binding:vif_details': { bridge_name: 'br-trunk' } } };
    assert.equal(verifyPort(vif, pod, 'node-1', named).bridge, 'br-trunk');
  });

  const cases: [string, Parameters<typeof refusal>[0], number, RegExp][] = [
    ['a stale annotation', { vif: { podUid: 'old' } }, 11, /written for pod uid old, this pod is pod-uid/],
    ['another pod’s port', { port: { device_id: 'other' } }, 100, /belongs to device "other", not to this pod/],
    ['a port Raven did not make', { port: { device_owner: 'network:router_interface' } }, 100, /device_owner/],
    ['another network', { vif: { networkId: 'net-x' } }, 100, /the annotation says net-x/],
    ['another MAC', { vif: { mac: 'fa:16:3e:00:00:01' } }, 100, /has MAC FA:16:3E:12:34:56/],
    ['another subnet', { vif: { subnetId: 'subnet-2' } }, 100, /not the annotation's subnet subnet-2/],
    [
      'an address not on the port',
      { vif: { ips: [{ address: '10.244.3.99', prefixLength: 24, gateway: '10.244.3.1' }] } },
      100,
      /10.244.3.99 is not one of/,
    ],
    [
      'a wrong prefix',
      { vif: { ips: [{ address: '10.244.3.17', prefixLength: 16, gateway: '10.244.3.1' }] } },
      100,
      /prefix \/16/,
    ],
    [
      'a wrong gateway',
      { vif: { ips: [{ address: '10.244.3.17', prefixLength: 24, gateway: '10.244.3.254' }] } },
      100,
      /gateway 10.244.3.254/,
    ],
    ['another host', { port: { 'binding:host_id': 'node-2' } }, 100, /bound to host "node-2", this node is "node-1"/],
    ['an unbound port', { port: { 'binding:vif_type': 'unbound' } }, 11, /is unbound on host "node-1"/],
    ['a vhost-user port', { port: { 'binding:vif_type': 'vhostuser' } }, 101, /binding:vif_type "vhostuser"/],
    [
      'an OVS hybrid plug',
      { port: { 'binding:vif_type': 'ovs', 'binding:vif_details': { ovs_hybrid_plug: true } } },
      101,
      /OVS hybrid plug/,
    ],
  ];
  for (const [what, change, code, msg] of cases)
    it(`refuses ${what} (code ${code})`, () => {
      const out = refusal(change);
      assert.equal(out.code, code);
      assert.match(out.msg, msg);
      assert.match(out.msg, /^pod ns\/web: /);
    });
});

describe('verifyPort, dual-stack', () => {
  const v6 = { id: 'subnet-6', network_id: vif.networkId, cidr: 'fd00:10:244::/64', gateway_ip: 'fd00:10:244::' };
  const dual: NeutronView = {
    ...view,
    port: {
      ...view.port,
      fixed_ips: [...view.port.fixed_ips, { subnet_id: 'subnet-6', ip_address: 'fd00:10:244::17' }],
    },
    others: [v6, { id: 'elsewhere', network_id: 'another-net', cidr: '10.9.0.0/24', gateway_ip: '10.9.0.1' }],
  };
  const both: Vif = {
    ...vif,
    ips: [...vif.ips, { address: 'fd00:10:244::17', prefixLength: 64, gateway: 'fd00:10:244::' }],
  };

  it("plugs the port's address of each family, each with its subnet's prefix and gateway; default routes for both", () => {
    const plan = verifyPort(both, pod, 'node-1', dual);
    assert.deepEqual(plan.ips, [
      { address: '10.244.3.17', prefixLength: 24, gateway: '10.244.3.1' },
      { address: 'fd00:10:244::17', prefixLength: 64, gateway: 'fd00:10:244::' },
    ]);
    assert.deepEqual(defaultRoutes(plan), [
      { dst: '0.0.0.0/0', gw: '10.244.3.1' },
      { dst: '::/0', gw: 'fd00:10:244::' },
    ]);
  });

  it("refuses an IPv6 address that is not the port's, or another subnet's prefix or gateway", () => {
    const refused = (ips: Vif['ips']) =>
      assert.throws(
        () => verifyPort({ ...both, ips }, pod, 'node-1', dual),
        (err: unknown) => err instanceof CniError,
      );
    refused([vif.ips[0]!, { address: 'fd00:10:244::99', prefixLength: 64, gateway: 'fd00:10:244::' }]);
    refused([vif.ips[0]!, { address: 'fd00:10:244::17', prefixLength: 24, gateway: 'fd00:10:244::' }]);
    refused([vif.ips[0]!, { address: 'fd00:10:244::17', prefixLength: 64, gateway: '10.244.3.1' }]);
    // Without the other family's subnet in view the IPv6 address is not the port's.
    assert.throws(() => verifyPort(both, pod, 'node-1', { ...dual, others: [] }), /is not one of port/);
  });
});
