import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import {
  client,
  type Call,
  type Network,
  type Port,
  neutronError,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

interface Trunk {
  id: string;
  status: string;
  revision_number: number;
  sub_ports: { port_id: string; segmentation_type: string; segmentation_id: number }[];
}
type WiredPort = Port & { 'binding:profile': Record<string, unknown>; 'binding:vif_type': string };

/**
 * The simulator's default trunk driver, ML2/OVN's (docs/openstack.md, "Trunks"; measured on the OVN rig): a bound
 * parent can be trunked, subports become `trunk:subport` with the parent's status and `{parent_name, tag}`, and the
 * trunk is ACTIVE. What both drivers share is held to real Neutron by test/contract/openstack/neutron-trunks.test.ts;
 * this file also covers the wire details that contract does not reach (the raw bodies).
 */
describe('simulated Neutron trunks, OVN driver', () => {
  let sim: RunningOpenStackSim;
  let api: Call;
  let net: Network;

  const create = async <T>(path: string, key: string, body: Record<string, unknown>): Promise<T> => {
    const res = await api<Record<string, T>>('POST', path, { [key]: body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body[key]!;
  };
  const port = (extra: Record<string, unknown> = {}) =>
    create<Port>('/ports', 'port', { network_id: net.id, ...extra });
  const show = async (id: string) => (await api<{ port: WiredPort }>('GET', `/ports/${id}`)).body.port;
  const error = (method: string, path: string, body?: unknown) => neutronError(api, method, path, body);

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', seed: 29, linuxbridgeHosts: ['lb-node'] });
    api = client(`${sim.neutronUrl}/v2.0`);
    net = await create('/networks', 'network', { name: 'pods' });
    await create('/subnets', 'subnet', { network_id: net.id, cidr: '10.29.0.0/24', ip_version: 4 });
  });
  after(() => sim.close());

  it('trunks a bound VM port; subports are wired to it and unwired on removal and on delete', async () => {
    const vm = await port({ 'binding:host_id': 'host-ovs-filter-active' });
    const [a, b] = [await port(), await port()];
    const trunk = await create<Trunk>('/trunks', 'trunk', {
      port_id: vm.id,
      sub_ports: [{ port_id: a.id, segmentation_type: 'vlan', segmentation_id: 101 }],
    });
    assert.equal(trunk.status, 'ACTIVE');
    const wired = await show(a.id);
    assert.equal(wired.device_owner, 'trunk:subport');
    assert.equal(wired.device_id, '', 'Neutron never sets a subport device_id');
    assert.equal(wired.status, 'ACTIVE', "the parent's status, before any pod exists");
    assert.equal(wired['binding:vif_type'], 'ovs');
    assert.deepEqual(wired['binding:profile'], { parent_name: vm.id, tag: 101 });

    const added = await api<Trunk>('PUT', `/trunks/${trunk.id}/add_subports`, {
      sub_ports: [{ port_id: b.id, segmentation_type: 'vlan', segmentation_id: 102 }],
    });
    assert.equal(added.status, 200);
    assert.equal(added.body.status, 'ACTIVE');
    assert.equal((await show(b.id)).device_owner, 'trunk:subport');

    await api('PUT', `/trunks/${trunk.id}/remove_subports`, { sub_ports: [{ port_id: a.id }] });
    const unwired = await show(a.id);
    assert.deepEqual(
      [unwired.device_owner, unwired.status, unwired['binding:vif_type'], unwired['binding:profile']],
      ['', 'DOWN', 'unbound', {}],
    );

    // A parent bound later carries its subports along (status only: nothing about a pod).
    const later = await port();
    const spare = await port();
    await create<Trunk>('/trunks', 'trunk', {
      port_id: later.id,
      sub_ports: [{ port_id: spare.id, segmentation_type: 'vlan', segmentation_id: 7 }],
    });
    assert.equal((await show(spare.id)).status, 'DOWN');
    await api('PUT', `/ports/${later.id}`, { port: { 'binding:host_id': 'host-ovs-filter-active' } });
    assert.equal((await show(spare.id)).status, 'ACTIVE');

    // OVN can untrunk a bound parent: the delete goes through and unwires the rest.
    assert.equal((await api('DELETE', `/trunks/${trunk.id}`)).status, 204);
    assert.equal((await show(b.id)).device_owner, '');
  });

  it('refuses a parent bound where the driver cannot trunk (linuxbridge)', async () => {
    const lb = await port({ 'binding:host_id': 'lb-node' });
    assert.deepEqual(await error('POST', '/trunks', { trunk: { port_id: lb.id } }), {
      status: 409,
      type: 'ParentPortInUse',
      message: `Port ${lb.id} is currently in use and is not eligible for use as a parent port.`,
    });
  });

  it('answers the wire details as Zed does', async () => {
    const [parent, sub] = [await port(), await port()];
    const trunk = await create<Trunk>('/trunks', 'trunk', { port_id: parent.id });
    const path = `/trunks/${trunk.id}`;
    assert.deepEqual(await error('PUT', `${path}/add_subports`, {}), {
      status: 500,
      type: 'HTTPInternalServerError',
      message: 'Request Failed: internal server error while processing your request.',
    });
    assert.equal((await error('GET', `${path}/add_subports`)).status, 405);
    assert.equal((await error('PUT', `${path}/get_subports`, {})).status, 405);
    const twice = { port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 1 };
    assert.deepEqual(
      await error('POST', '/trunks', {
        trunk: { port_id: sub.id, sub_ports: [twice, { ...twice, segmentation_id: 2 }] },
      }),
      {
        status: 400,
        type: 'HTTPBadRequest',
        message: `Invalid input for sub_ports. Reason: Non unique UUID for subport: '${sub.id}'.`,
      },
    );
    assert.deepEqual(
      await error('PUT', `${path}/remove_subports`, { sub_ports: [{ port_id: sub.id, segmentation_id: 3 }] }),
      {
        status: 400,
        type: 'InvalidInput',
        message: `Invalid input for operation: Invalid subport details '{'port_id': '${sub.id}', 'segmentation_id': 3}': missing segmentation information. Must specify both segmentation_id and segmentation_type.`,
      },
    );
    // `inherit` takes the network's segmentation: VXLAN here, which no trunk driver takes.
    assert.deepEqual(
      await error('PUT', `${path}/add_subports`, { sub_ports: [{ port_id: sub.id, segmentation_type: 'inherit' }] }),
      { status: 400, type: 'InvalidInput', message: "Invalid input for operation: Unknown segmentation_type 'vxlan'." },
    );
    assert.deepEqual(await error('POST', '/trunks', { trunk: { port_id: sub.id, tags: ['a'] } }), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "Attribute 'tags' not allowed in POST",
    });
    assert.deepEqual(await error('GET', '/trunks?status=ACTIVE'), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "['status'] is invalid attribute for filtering",
    });
  });

  it('counts trunks against the project quota', async () => {
    const quota = await api<{ quota: Record<string, number> }>('GET', '/quotas/fake_project_id');
    assert.equal(quota.body.quota.trunk, -1);
    await api('PUT', '/quotas/fake_project_id', { quota: { trunk: 0 } });
    const parent = await port();
    assert.deepEqual(await error('POST', '/trunks', { trunk: { port_id: parent.id } }), {
      status: 409,
      type: 'OverQuota',
      message: "Quota exceeded for resources: ['trunk'].",
    });
  });
});
