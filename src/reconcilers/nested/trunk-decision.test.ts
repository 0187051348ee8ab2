import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { decideTrunk, type NodeTrunk, type ServerPort, type TrunkInputs } from './trunk-decision.ts';

const SERVER = 'srv';
const port = (id: string, network = 'net-a', owner = 'compute:nova'): ServerPort => ({
  id,
  network_id: network,
  device_owner: owner,
  mac_address: `fa:16:3e:00:00:0${id.length}`,
});
const trunk = (id: string, portId: string, up = true): NodeTrunk => ({
  id,
  port_id: portId,
  name: '',
  description: '',
  tags: [],
  admin_state_up: up,
  sub_ports: [],
});
const inputs = (o: Partial<TrunkInputs>): TrunkInputs => ({
  mode: 'auto',
  parentNetworks: [],
  serverId: SERVER,
  serverPorts: [],
  trunks: [],
  ...o,
});

describe('decideTrunk', () => {
  it("uses the trunk on the VM's one port, or makes one (auto)", () => {
    const p = port('p1');
    const t = trunk('t1', 'p1');
    assert.deepEqual(decideTrunk(inputs({ serverPorts: [p], trunks: [t] })), { action: 'use', parent: p, trunk: t });
    assert.deepEqual(decideTrunk(inputs({ serverPorts: [p] })), { action: 'create', parent: p });
  });

  it('existing: a missing trunk is refused, not made', () => {
    const d = decideTrunk(inputs({ mode: 'existing', serverPorts: [port('p1')] }));
    assert.equal(d.action === 'refuse' && d.reason, 'NestedTrunkMissing');
  });

  it('no Nova port (none, or only other owners) is refused', () => {
    assert.equal(decideTrunk(inputs({})).action, 'refuse');
    const others = [port('p1', 'net-a', 'network:dhcp'), port('p2', 'net-a', 'compute:raven')];
    const d = decideTrunk(inputs({ serverPorts: others }));
    assert.equal(d.action === 'refuse' && d.reason, 'NestedNoPort');
  });

  it('several ports: the configured network picks, else the one already trunked, else refused', () => {
    const a = port('pa', 'net-a');
    const b = port('pb', 'net-b');
    const ambiguous = decideTrunk(inputs({ serverPorts: [a, b] }));
    assert.equal(ambiguous.action === 'refuse' && ambiguous.reason, 'NestedParentAmbiguous');
    assert.deepEqual(decideTrunk(inputs({ serverPorts: [a, b], parentNetworks: ['net-b'] })), {
      action: 'create',
      parent: b,
    });
    const t = trunk('t', 'pa');
    assert.deepEqual(decideTrunk(inputs({ serverPorts: [a, b], trunks: [t] })), { action: 'use', parent: a, trunk: t });
    const none = decideTrunk(inputs({ serverPorts: [a, b], parentNetworks: ['net-c'] }));
    assert.equal(none.action === 'refuse' && none.reason, 'NestedNoPort');
  });

  it('a disabled trunk is refused (Neutron adds no subports to it)', () => {
    const d = decideTrunk(inputs({ serverPorts: [port('p1')], trunks: [trunk('t1', 'p1', false)] }));
    assert.equal(d.action === 'refuse' && d.reason, 'NestedTrunkDisabled');
  });
});
