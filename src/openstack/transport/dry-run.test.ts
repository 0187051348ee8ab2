import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { DryRunCloud, matchesQuery } from './dry-run.ts';
import type { Handler, PreparedRequest, RawResponse } from './http.ts';

type Obj = Record<string, unknown>;

/** A cloud of a few Neutron objects answering GETs only: what the dry run reads. Any write reaching it fails. */
function fakeCloud(objects: Record<string, Obj[]>): { next: Handler; writes: string[] } {
  const writes: string[] = [];
  const answer = (status: number, body: unknown): RawResponse => ({
    status,
    headers: {},
    text: JSON.stringify(body),
  });
  const next: Handler = (req) => {
    if (req.method !== 'GET') {
      writes.push(`${req.method} ${req.path}`);
      return Promise.resolve(answer(500, {}));
    }
    const [, , collection = '', id] = req.path.split('/');
    const items = objects[collection] ?? [];
    const plural = collection.replace(/-/g, '_');
    if (id) {
      const item = items.find((o) => o.id === decodeURIComponent(id));
      const singular = plural.replace(/s$/, '');
      return Promise.resolve(item ? answer(200, { [singular]: item }) : answer(404, {}));
    }
    return Promise.resolve(answer(200, { [plural]: items.filter((o) => matchesQuery(o, req.query)) }));
  };
  return { next, writes };
}

function request(method: string, path: string, body?: unknown, query: Record<string, string | string[]> = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) q.append(k, one);
  const req: PreparedRequest = {
    service: 'network',
    method,
    path: `/v2.0${path}`,
    query: q,
    headers: {},
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: undefined,
    timeoutMs: 1000,
    idempotent: method !== 'POST',
  };
  return req;
}

describe('DryRunCloud', () => {
  const subnet = { id: 's1', name: 'sub', network_id: 'n1', cidr: '10.0.0.0/24', tags: [] };
  const old = { id: 'p-old', name: 'old', network_id: 'n1', device_id: 'gone', tags: ['a'], fixed_ips: [] };

  it('answers writes from its overlay, records them in order, and later reads see them; nothing reaches the cloud', async () => {
    const dry = new DryRunCloud();
    const cloud = fakeCloud({ subnets: [subnet], ports: [old] });
    const send = dry.interceptor(cloud.next);
    const json = async (req: PreparedRequest) => {
      const res = await send(req);
      return { status: res.status, body: res.text ? (JSON.parse(res.text) as Obj) : undefined };
    };

    const created = await json(request('POST', '/ports', { port: { name: 'new', network_id: 'n1', device_id: 'u1' } }));
    assert.equal(created.status, 201);
    const port = created.body!.port as Obj;
    assert.match(String(port.id), /^planned-/);
    assert.deepEqual(port.fixed_ips, [{ subnet_id: 's1', ip_address: (port.fixed_ips as Obj[])[0]!.ip_address }]);
    assert.ok(String((port.fixed_ips as Obj[])[0]!.ip_address).startsWith('10.0.0.'));

    // The made port is found by id and by a list filter; the deleted one is gone from both.
    assert.equal((await json(request('GET', `/ports/${String(port.id)}`))).status, 200);
    assert.equal((await json(request('DELETE', '/ports/p-old'))).status, 204);
    assert.equal((await json(request('GET', '/ports/p-old'))).status, 404);
    const listed = await json(request('GET', '/ports', undefined, { network_id: 'n1' }));
    assert.deepEqual(
      (listed.body!.ports as Obj[]).map((p) => p.name),
      ['new'],
    );
    assert.deepEqual((await json(request('GET', '/ports', undefined, { device_id: 'other' }))).body!.ports, []);

    // A tag added shows in the object, and a tag filter finds it.
    await json(request('PUT', `/ports/${String(port.id)}/tags/owner`));
    const tagged = await json(request('GET', '/ports', undefined, { tags: 'owner' }));
    assert.deepEqual(
      (tagged.body!.ports as Obj[]).map((p) => p.id),
      [port.id],
    );

    // A router interface is a port of the router on the subnet.
    await json(request('PUT', '/routers/r1/add_router_interface', { subnet_id: 's1' }));
    const iface = await json(request('GET', '/ports', undefined, { device_id: 'r1', fixed_ips: 'subnet_id=s1' }));
    assert.equal((iface.body!.ports as Obj[]).length, 1);

    assert.deepEqual(
      dry.writes().map((w) => `${w.action} ${w.collection} ${w.id}`),
      [`create ports ${String(port.id)}`, 'delete ports p-old', `update ports ${String(port.id)}`, 'attach routers r1'],
    );
    assert.deepEqual(cloud.writes, [], 'a write reached the cloud');
  });

  it('a new security group comes with Neutron’s egress rules, which its reads list and a rule delete removes', async () => {
    const dry = new DryRunCloud();
    const send = dry.interceptor(fakeCloud({}).next);
    const res = await send(request('POST', '/security-groups', { security_group: { name: 'g' } }));
    const group = (JSON.parse(res.text) as { security_group: Obj }).security_group;
    const rules = group.security_group_rules as Obj[];
    assert.deepEqual(rules.map((r) => `${String(r.direction)} ${String(r.ethertype)}`).sort(), [
      'egress IPv4',
      'egress IPv6',
    ]);
    await send(request('DELETE', `/security-group-rules/${String(rules[0]!.id)}`));
    const read = await send(request('GET', `/security-groups/${String(group.id)}`));
    assert.equal(
      ((JSON.parse(read.text) as { security_group: Obj }).security_group.security_group_rules as Obj[]).length,
      1,
    );
    assert.equal(dry.planned('security-group-rules').length, 1);
  });

  it('emulates trunks: a planned trunk, subports added and removed, seen by gets and lists; a taken VLAN id is 409', async () => {
    const dry = new DryRunCloud();
    const parent = { id: 'vm-port', network_id: 'n1', device_id: 'server', device_owner: 'compute:nova', tags: [] };
    const cloudTrunk = { id: 't-cloud', port_id: 'other', sub_ports: [], tags: [] };
    const pod = { id: 'pod-port', network_id: 'n1', device_id: '', device_owner: 'compute:kuryr', tags: [] };
    const cloud = fakeCloud({ ports: [parent, pod], trunks: [cloudTrunk] });
    const send = dry.interceptor(cloud.next);
    const json = async (req: PreparedRequest) => {
      const res = await send(req);
      return { status: res.status, body: res.text ? (JSON.parse(res.text) as Obj) : undefined };
    };

    const made = await json(request('POST', '/trunks', { trunk: { port_id: 'vm-port', name: 'node' } }));
    const trunk = made.body!.trunk as Obj;
    assert.equal(made.status, 201);
    assert.deepEqual(trunk.sub_ports, []);
    const id = String(trunk.id);
    const subPort = { port_id: 'pod-port', segmentation_type: 'vlan', segmentation_id: 101 };
    const added = await json(request('PUT', `/trunks/${id}/add_subports`, { sub_ports: [subPort] }));
    assert.equal(added.status, 200);
    assert.equal(added.body!.id, id, 'the answer is the trunk, without the "trunk" key');
    assert.deepEqual(added.body!.sub_ports, [subPort]);
    assert.deepEqual((await json(request('GET', `/trunks/${id}/get_subports`))).body, { sub_ports: [subPort] });
    const listed = await json(request('GET', '/trunks', undefined, { port_id: 'vm-port' }));
    assert.deepEqual(
      (listed.body!.trunks as Obj[]).map((t) => t.sub_ports),
      [[subPort]],
    );
    const port = await json(request('GET', '/ports/pod-port'));
    assert.equal((port.body!.port as Obj).device_owner, 'trunk:subport');

    // Another port on the same VLAN id: Neutron's DuplicateSubPort; the trunk is as it was.
    const again = { ...subPort, port_id: 'vm-port' };
    const taken = await json(request('PUT', `/trunks/${id}/add_subports`, { sub_ports: [again] }));
    assert.equal(taken.status, 409);
    assert.equal((taken.body!.NeutronError as Obj).type, 'DuplicateSubPort');
    assert.deepEqual((await json(request('GET', `/trunks/${id}/get_subports`))).body, { sub_ports: [subPort] });

    // The cloud's trunk: an add is overlaid on its reads too; a remove takes the subport off.
    await json(request('PUT', '/trunks/t-cloud/add_subports', { sub_ports: [{ ...subPort, port_id: 'p2' }] }));
    const cloudRead = await json(request('GET', '/trunks/t-cloud'));
    assert.deepEqual((cloudRead.body!.trunk as Obj).sub_ports, [{ ...subPort, port_id: 'p2' }]);
    const removed = await json(
      request('PUT', `/trunks/${id}/remove_subports`, { sub_ports: [{ port_id: 'pod-port' }] }),
    );
    assert.deepEqual(removed.body!.sub_ports, []);
    assert.equal(((await json(request('GET', '/ports/pod-port'))).body!.port as Obj).device_owner, '');
    const gone = await json(request('PUT', `/trunks/${id}/remove_subports`, { sub_ports: [{ port_id: 'pod-port' }] }));
    assert.equal((gone.body!.NeutronError as Obj).type, 'SubPortNotFound');

    assert.deepEqual(
      dry.writes().map((w) => `${w.action} ${w.collection} ${w.id}`),
      [
        `create trunks ${id}`,
        `add-subports trunks ${id}`,
        'add-subports trunks t-cloud',
        `remove-subports trunks ${id}`,
      ],
    );
    assert.deepEqual(cloud.writes, [], 'a write reached the cloud');
  });
});
