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

/**
 * Real Zed Neutron's less obvious answers, as measured against it (the contract suite checks the same on both): the
 * binding-aware port revisions, address pairs, tags, security group rule updates and empty pages.
 */
describe('simulated Neutron: Zed quirks', () => {
  let sim: RunningOpenStackSim;
  let api: Call;
  let net: Network;
  const missing = '00000000-0000-4000-8000-000000000000';

  const port = async (body: Record<string, unknown> = {}): Promise<Port & Record<string, unknown>> => {
    const res = await api<{ port: Port & Record<string, unknown> }>('POST', '/ports', {
      port: { network_id: net.id, ...body },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.port;
  };
  const revision = async (path: string): Promise<number> =>
    Object.values((await api<Record<string, { revision_number: number }>>('GET', path)).body)[0]!.revision_number;
  const error = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    neutronError(api, method, path, body, headers);

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', seed: 11 });
    api = client(`${sim.neutronUrl}/v2.0`);
    net = (await api<{ network: Network }>('POST', '/networks', { network: { name: 'q' } })).body.network;
    await api('POST', '/subnets', { subnet: { network_id: net.id, cidr: '10.30.0.0/24', ip_version: 4 } });
  });
  after(() => sim.close());

  it('counts subnet create, update and delete as revisions of the network', async () => {
    const n = (await api<{ network: Network }>('POST', '/networks', { network: { name: 'r' } })).body.network;
    const s = (
      await api<{ subnet: { id: string } }>('POST', '/subnets', {
        subnet: { network_id: n.id, cidr: '10.31.0.0/24', ip_version: 4 },
      })
    ).body.subnet;
    assert.equal(await revision(`/networks/${n.id}`), n.revision_number + 1);
    await api('PUT', `/subnets/${s.id}`, { subnet: { name: 'x' } });
    await api('DELETE', `/subnets/${s.id}`);
    assert.equal(await revision(`/networks/${n.id}`), n.revision_number + 3);
  });

  it('answers port updates part-way: description alone, binding-only changes and (re)binds lag behind a read', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, number, number][] = [
      [{}, { name: 'x' }, 1, 1],
      [{}, { description: 'x' }, 1, 2],
      [{}, { name: 'x', description: 'y' }, 1, 1],
      [{}, { 'binding:profile': { a: 1 } }, 0, 1],
      [{}, { 'binding:host_id': 'host-ovs-filter-active' }, 1, 2],
      [{ 'binding:host_id': 'host-ovs-filter-active' }, { name: 'x' }, 1, 1],
      [{ 'binding:host_id': 'host-ovs-filter-active' }, { 'binding:profile': { a: 1 } }, 1, 2],
      [{ 'binding:host_id': 'node-1' }, { name: 'x' }, 1, 2],
      [{ 'binding:host_id': 'node-1' }, { description: 'x' }, 2, 3],
    ];
    for (const [create, update, answered, read] of cases) {
      const p = await port(create);
      const before = await revision(`/ports/${p.id}`);
      const res = await api<{ port: Port }>('PUT', `/ports/${p.id}`, { port: update });
      const label = `${JSON.stringify(create)} then ${JSON.stringify(update)}`;
      assert.equal(res.body.port.revision_number, before + answered, label);
      assert.equal(await revision(`/ports/${p.id}`), before + read, label);
    }
    const bound = await port({ 'binding:host_id': 'node-1' });
    assert.deepEqual([bound.revision_number, await revision(`/ports/${bound.id}`)], [1, 2]);
  });

  it('fills in the port MAC for address pairs without one and checks them as neutron-lib does', async () => {
    const p = await port({
      allowed_address_pairs: [
        { ip_address: '10.30.0.9' },
        { ip_address: '10.30.0.7', mac_address: 'fa:16:3e:00:00:01' },
      ],
    });
    assert.deepEqual(p.allowed_address_pairs, [
      { mac_address: 'fa:16:3e:00:00:01', ip_address: '10.30.0.7' },
      { mac_address: p.mac_address, ip_address: '10.30.0.9' },
    ]);
    assert.deepEqual(
      await error('POST', '/ports', {
        port: { network_id: net.id, allowed_address_pairs: [{ mac_address: 'fa:16:3e:00:00:01' }] },
      }),
      {
        status: 400,
        type: 'AllowedAddressPairsMissingIP',
        message: 'AllowedAddressPair must contain ip_address',
      },
    );
    assert.deepEqual(
      await error('POST', '/ports', {
        port: {
          network_id: net.id,
          port_security_enabled: false,
          allowed_address_pairs: [{ ip_address: '10.30.0.5' }],
        },
      }),
      {
        status: 409,
        type: 'AddressPairAndPortSecurityRequired',
        message: 'Port Security must be enabled in order to have allowed address pairs on a port.',
      },
    );
  });

  it('tags: TagResourceNotFound for a missing parent, a null body on PUT …/tags/{t}, commas and 255 characters allowed', async () => {
    assert.deepEqual(await error('GET', `/security-groups/${missing}/tags`), {
      status: 404,
      type: 'TagResourceNotFound',
      message: `Resource security_groups ${missing} could not be found.`,
    });
    assert.deepEqual(await error('PUT', '/ports/not-a-uuid/tags', { tags: ['x'] }), {
      status: 404,
      type: 'TagResourceNotFound',
      message: 'Resource ports not-a-uuid could not be found.',
    });
    const put = await fetch(`${sim.neutronUrl}/v2.0/networks/${net.id}/tags/a,b`, { method: 'PUT' });
    assert.deepEqual([put.status, await put.text()], [201, 'null']);
    const all = await api<{ tags: string[] }>('PUT', `/networks/${net.id}/tags`, { tags: ['c,d', 'x'.repeat(255)] });
    assert.equal(all.status, 200);
    assert.deepEqual(await error('PUT', `/networks/${net.id}/tags`, { tags: ['a', 'a'] }), {
      status: 400,
      type: 'InvalidInput',
      message: "Invalid input for operation: Duplicate items in the list: 'a'.",
    });
    const before = await revision(`/networks/${net.id}`);
    await api('PUT', `/networks/${net.id}/tags`, { tags: ['x'.repeat(255), 'c,d'] });
    assert.equal(await revision(`/networks/${net.id}`), before, 'the same tag set is no revision');
  });

  it('takes tags in a port POST (validated) and drops them; other resources refuse them', async () => {
    const p = await port({ tags: ['lost'] });
    assert.deepEqual(p.tags, []);
    const bulk = await api<{ ports: Port[] }>('POST', '/ports', { ports: [{ network_id: net.id, tags: ['a'] }] });
    assert.deepEqual([bulk.status, bulk.body.ports[0]!.tags], [201, []]);
    assert.equal(
      (await error('POST', '/ports', { port: { network_id: net.id, tags: ['x'.repeat(256)] } })).status,
      400,
    );
    assert.deepEqual(await error('POST', '/routers', { router: { name: 'r', tags: ['a'] } }), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "Attribute 'tags' not allowed in POST",
    });
  });

  it('security group rule updates: 404 for a missing rule, read-only attributes refused, and the Zed 500 otherwise', async () => {
    const sg = (
      await api<{ security_group: { id: string } }>('POST', '/security-groups', { security_group: { name: 'g' } })
    ).body.security_group;
    const rule = (
      await api<{ security_group_rule: { id: string } }>('POST', '/security-group-rules', {
        security_group_rule: { security_group_id: sg.id, direction: 'ingress', protocol: 'tcp' },
      })
    ).body.security_group_rule;
    assert.deepEqual(
      await error('PUT', `/security-group-rules/${missing}`, { security_group_rule: { description: 'x' } }),
      {
        status: 404,
        type: 'SecurityGroupRuleNotFound',
        message: `Security group rule ${missing} does not exist`,
      },
    );
    assert.deepEqual(
      await error('PUT', `/security-group-rules/${rule.id}`, { security_group_rule: { protocol: 'udp' } }),
      {
        status: 400,
        type: 'HTTPBadRequest',
        message: 'Cannot update read-only attribute protocol',
      },
    );
    assert.equal(
      (await error('PUT', `/security-group-rules/${rule.id}`, { security_group_rule: { description: 'x' } })).status,
      500,
    );
  });

  it('gives an empty page after a full last page only a previous link, without a marker', async () => {
    const names = ['e-a', 'e-b'];
    const made: Port[] = [];
    for (const name of names) made.push(await port({ name }));
    const q = 'name=e-a&name=e-b&fields=name&sort_key=name&sort_dir=asc&limit=2';
    const empty = await api<{ ports: Port[]; ports_links: { rel: string; href: string }[] }>(
      'GET',
      `/ports?${q}&marker=${made[1]!.id}`,
    );
    assert.deepEqual(empty.body.ports, []);
    assert.deepEqual(empty.body.ports_links, [
      { rel: 'previous', href: `${sim.neutronUrl}/v2.0/ports?${q}&page_reverse=True` },
    ]);
    assert.deepEqual(await error('GET', '/ports?limit=-1'), {
      status: 400,
      type: 'BadRequest',
      message: "Bad limit request: Limit must be an integer 0 or greater and not '-1'.",
    });
  });
});
