import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import {
  client,
  type Call,
  type Network,
  type Port,
  type Subnet,
  neutronError,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

/**
 * Neutron in noauth mode over a real socket: the behaviours docs/openstack.md, "Neutron" and the Zed transcript record.
 */
describe('simulated Neutron (noauth)', () => {
  let sim: RunningOpenStackSim;
  let api: Call;
  let net: Network;
  let subnet: Subnet;

  const network = async (body: Record<string, unknown> = {}): Promise<Network> => {
    const res = await api<{ network: Network }>('POST', '/networks', { network: { name: 'n', ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.network;
  };
  const port = async (body: Record<string, unknown> = {}): Promise<Port> => {
    const res = await api<{ port: Port }>('POST', '/ports', { port: { network_id: net.id, ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.port;
  };
  const error = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    neutronError(api, method, path, body, headers);

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', seed: 7 });
    api = client(`${sim.neutronUrl}/v2.0`);
    net = await network({ description: 'd' });
    const res = await api<{ subnet: Subnet }>('POST', '/subnets', {
      subnet: { network_id: net.id, cidr: '10.10.0.0/24', ip_version: 4 },
    });
    subnet = res.body.subnet;
  });
  after(() => sim.close());

  it('creates tenant networks as VXLAN with MTU 1450 in fake_project_id, and external flat networks once per physnet', async () => {
    assert.equal(net['provider:network_type'], 'vxlan');
    assert.equal(net.mtu, 1450);
    assert.equal(net.revision_number, 1);
    assert.equal(net.project_id, 'fake_project_id');
    assert.ok(
      typeof net['provider:segmentation_id'] === 'number' &&
        net['provider:segmentation_id'] >= 1 &&
        net['provider:segmentation_id'] <= 20000,
    );
    const ext = await network({
      'router:external': true,
      'provider:network_type': 'flat',
      'provider:physical_network': 'phys-a',
    });
    assert.equal(ext.mtu, 1500);
    assert.deepEqual(
      await error('POST', '/networks', {
        network: { 'provider:network_type': 'flat', 'provider:physical_network': 'phys-a' },
      }),
      {
        status: 409,
        type: 'FlatNetworkInUse',
        message: 'Unable to create the flat network. Physical network phys-a is in use.',
      },
    );
    assert.deepEqual(await error('POST', '/networks', { network: { name: 'x', tags: ['a'] } }), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "Attribute 'tags' not allowed in POST",
    });
  });

  it('gives subnets gateway .1 and pool .2–.254, and rejects overlaps and bad CIDRs with the real messages', async () => {
    assert.equal(subnet.gateway_ip, '10.10.0.1');
    assert.deepEqual(subnet.allocation_pools, [{ start: '10.10.0.2', end: '10.10.0.254' }]);
    const shown = await api<{ network: Network }>('GET', `/networks/${net.id}`);
    assert.deepEqual(shown.body.network.subnets, [subnet.id]);
    assert.deepEqual(
      await error('POST', '/subnets', { subnet: { network_id: net.id, cidr: '10.10.0.0/25', ip_version: 4 } }),
      {
        status: 400,
        type: 'InvalidInput',
        message: `Invalid input for operation: Requested subnet with cidr: 10.10.0.0/25 for network: ${net.id} overlaps with another subnet.`,
      },
    );
    assert.deepEqual(
      await error('POST', '/subnets', { subnet: { network_id: net.id, cidr: '10.10.0.0/33', ip_version: 4 } }),
      {
        status: 400,
        type: 'InvalidInput',
        message: 'Invalid input for operation: 10.10.0.0/33 is not in a CIDR format.',
      },
    );
  });

  it('allocates consecutive CIDRs from a subnet pool until it is exhausted', async () => {
    const pool = await api<{ subnetpool: { id: string; default_prefixlen: string } }>('POST', '/subnetpools', {
      subnetpool: { name: 'p', prefixes: ['10.200.0.0/25'], default_prefixlen: 26 },
    });
    assert.equal(pool.body.subnetpool.default_prefixlen, '26');
    const n2 = await network();
    const cidrs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await api<{ subnet: Subnet }>('POST', '/subnets', {
        subnet: { network_id: n2.id, subnetpool_id: pool.body.subnetpool.id, ip_version: 4 },
      });
      cidrs.push(s.body.subnet.cidr);
    }
    assert.deepEqual(cidrs, ['10.200.0.0/26', '10.200.0.64/26']);
    assert.deepEqual(
      await error('POST', '/subnets', {
        subnet: { network_id: n2.id, subnetpool_id: pool.body.subnetpool.id, ip_version: 4 },
      }),
      {
        status: 500,
        type: 'SubnetAllocationError',
        message: 'Failed to allocate subnet: Insufficient prefix space to allocate subnet size /26.',
      },
    );
  });

  it('never gives one address or MAC to two ports, even for 200 concurrent creates, and says when the subnet is full', async () => {
    const n = await network();
    const s = await api<{ subnet: Subnet }>('POST', '/subnets', {
      subnet: { network_id: n.id, cidr: '10.30.0.0/24', ip_version: 4 },
    });
    const create = () => api<{ port: Port }>('POST', '/ports', { port: { network_id: n.id } });
    const first = await Promise.all(Array.from({ length: 200 }, create));
    const rest = await Promise.all(Array.from({ length: 53 }, create));
    const ports = [...first, ...rest].map((r) => r.body.port);
    assert.ok([...first, ...rest].every((r) => r.status === 201));
    const ips = ports.map((p) => p.fixed_ips[0]!.ip_address);
    assert.equal(new Set(ips).size, 253);
    assert.ok(
      ips.every(
        (ip) => /^10\.30\.0\.(\d+)$/.test(ip) && Number(ip.split('.')[3]) >= 2 && Number(ip.split('.')[3]) <= 254,
      ),
    );
    assert.equal(new Set(ports.map((p) => p.mac_address)).size, 253);
    assert.ok(
      ports.every(
        (p) =>
          /^fa:16:3e(:[0-9a-f]{2}){3}$/.test(p.mac_address) &&
          p.status === 'DOWN' &&
          p.fixed_ips[0]!.subnet_id === s.body.subnet.id,
      ),
    );
    assert.deepEqual(await error('POST', '/ports', { port: { network_id: n.id } }), {
      status: 409,
      type: 'IpAddressGenerationFailure',
      message: `No more IP addresses available on network ${n.id}.`,
    });
  });

  it('takes requested fixed IPs and MACs once, rejects foreign addresses, and keeps bulk creates atomic', async () => {
    const fixed = await port({
      name: 'fixed',
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.10.0.50' }],
      mac_address: 'fa:16:3e:00:00:01',
    });
    assert.deepEqual(fixed.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.10.0.50' }]);
    assert.deepEqual(
      await error('POST', '/ports', { port: { network_id: net.id, fixed_ips: [{ ip_address: '10.10.0.50' }] } }),
      {
        status: 409,
        type: 'IpAddressAlreadyAllocated',
        message: `IP address 10.10.0.50 already allocated in subnet ${subnet.id}`,
      },
    );
    assert.deepEqual(
      await error('POST', '/ports', { port: { network_id: net.id, fixed_ips: [{ ip_address: '10.99.0.5' }] } }),
      {
        status: 400,
        type: 'InvalidIpForNetwork',
        message: 'IP address 10.99.0.5 is not a valid IP for any of the subnets on the specified network.',
      },
    );
    assert.deepEqual(
      await error('POST', '/ports', { port: { network_id: net.id, mac_address: 'fa:16:3e:00:00:01' } }),
      {
        status: 409,
        type: 'MacAddressInUse',
        message: `Unable to complete operation for network ${net.id}. The mac address fa:16:3e:00:00:01 is in use.`,
      },
    );
    const bad = await error('POST', '/ports', {
      ports: [
        { network_id: net.id, name: 'bulk-good' },
        { network_id: net.id, name: 'bulk-bad', fixed_ips: [{ ip_address: '10.10.0.50' }] },
      ],
    });
    assert.equal(bad.type, 'IpAddressAlreadyAllocated');
    const left = await api<{ ports: Port[] }>('GET', '/ports?name=bulk-good&fields=id');
    assert.deepEqual(left.body.ports, []);
    const bulk = await api<{ ports: Port[] }>('POST', '/ports', {
      ports: ['b0', 'b1', 'b2'].map((name) => ({ network_id: net.id, name })),
    });
    assert.equal(bulk.status, 201);
    assert.deepEqual(
      bulk.body.ports.map((p) => p.name),
      ['b0', 'b1', 'b2'],
    );
  });

  it('filters, selects fields, sorts and pages with *_links as real Neutron does', async () => {
    const names = ['pg-c', 'pg-a', 'pg-e', 'pg-b', 'pg-d'];
    for (const name of names) await port({ name, device_owner: 'compute:pg', device_id: 'pod-pg' });
    const seen: string[] = [];
    let path: string | undefined = '/ports?device_id=pod-pg&limit=2&sort_key=name&sort_dir=asc&fields=id&fields=name';
    let pages = 0;
    while (path) {
      const page: { body: { ports: { id: string; name: string }[]; ports_links?: { rel: string; href: string }[] } } =
        await api('GET', path);
      assert.ok(page.body.ports.every((p) => Object.keys(p).join() === 'id,name'));
      seen.push(...page.body.ports.map((p) => p.name));
      const next = page.body.ports_links?.find((l) => l.rel === 'next');
      if (pages === 0) {
        const last = page.body.ports[1]!.id;
        assert.equal(
          next?.href,
          `${sim.neutronUrl}/v2.0/ports?device_id=pod-pg&limit=2&sort_key=name&sort_dir=asc&fields=id&fields=name&marker=${last}`,
        );
        assert.ok(
          page.body.ports_links?.some(
            (l) => l.rel === 'previous' && l.href.endsWith(`marker=${page.body.ports[0]!.id}&page_reverse=True`),
          ),
        );
      }
      path = next?.href;
      pages++;
    }
    assert.deepEqual(seen, [...names].sort());
    assert.equal(pages, 3);
    assert.deepEqual(await error('GET', '/ports?unknown_filter=1'), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "['unknown_filter'] is invalid attribute for filtering",
    });
    const byIp = await api<{ ports: Port[] }>('GET', '/ports?fixed_ips=ip_address%3D10.10.0.50&fields=id&fields=name');
    assert.deepEqual(
      byIp.body.ports.map((p) => p.name),
      ['fixed'],
    );
  });

  it('tags every resource through the tag endpoints, filters by tags, and counts each change as a revision', async () => {
    const p = await port({ name: 'tagged' });
    assert.equal((await api('PUT', `/ports/${p.id}/tags/k8s-pod=ns1.pod1`)).status, 201);
    assert.equal((await api('PUT', `/ports/${p.id}/tags/owner=ctrl`)).status, 201);
    assert.deepEqual((await api<{ tags: string[] }>('GET', `/ports/${p.id}/tags`)).body.tags, [
      'k8s-pod=ns1.pod1',
      'owner=ctrl',
    ]);
    assert.equal((await api('GET', `/ports/${p.id}/tags/owner=ctrl`)).status, 204);
    assert.deepEqual(await error('GET', `/ports/${p.id}/tags/nope`), {
      status: 404,
      type: 'TagNotFound',
      message: 'Tag nope could not be found.',
    });
    const replaced = await api<{ tags: string[] }>('PUT', `/ports/${p.id}/tags`, { tags: ['t2', 't1'] });
    assert.deepEqual([replaced.status, replaced.body.tags], [200, ['t2', 't1']]);
    const shown = await api<{ port: Port }>('GET', `/ports/${p.id}`);
    assert.deepEqual(shown.body.port.tags, ['t1', 't2']);
    assert.equal(shown.body.port.revision_number, p.revision_number + 3);
    const ids = async (q: string) =>
      (await api<{ ports: Port[] }>('GET', `/ports?name=tagged&fields=id&${q}`)).body.ports.length;
    assert.deepEqual(
      [
        await ids('tags=t1,t2'),
        await ids('tags=t1,zz'),
        await ids('tags-any=zz,t2'),
        await ids('not-tags=t1'),
        await ids('not-tags-any=zz'),
      ],
      [1, 0, 1, 0, 1],
    );
    assert.equal((await api('DELETE', `/ports/${p.id}/tags/t1`)).status, 204);
    assert.deepEqual(await error('DELETE', `/ports/${p.id}/tags/t1`), {
      status: 404,
      type: 'TagNotFound',
      message: 'Tag t1 could not be found.',
    });
    await api('PUT', `/networks/${net.id}/tags/k8s-ns=default`);
    assert.deepEqual((await api<{ network: Network }>('GET', `/networks/${net.id}`)).body.network.tags, [
      'k8s-ns=default',
    ]);
  });

  it('bumps revision_number on update and answers a stale If-Match with 412', async () => {
    const p = await port({ name: 'rev' });
    const updated = await api<{ port: Port }>('PUT', `/ports/${p.id}`, { port: { name: 'rev2' } });
    assert.equal(updated.body.port.revision_number, p.revision_number + 1);
    assert.deepEqual(
      await error(
        'PUT',
        `/ports/${p.id}`,
        { port: { description: 'x' } },
        { 'if-match': `revision_number=${p.revision_number}` },
      ),
      {
        status: 412,
        type: 'RevisionNumberConstraintFailed',
        message: `Constrained to ${p.revision_number}, but current revision is ${p.revision_number + 1}`,
      },
    );
    const ok = await api<{ port: Port }>(
      'PUT',
      `/ports/${p.id}`,
      { port: { description: 'y' } },
      { 'if-match': `revision_number=${p.revision_number + 1}` },
    );
    assert.equal(ok.status, 200);
  });

  it('answers bad requests and missing or in-use resources with the real types and messages', async () => {
    assert.deepEqual(await error('POST', '/ports', { port: { bogus: 1 } }), {
      status: 400,
      type: 'HTTPBadRequest',
      message: "Unrecognized attribute(s) 'bogus'",
    });
    assert.deepEqual(await error('POST', '/ports', '"notjson"'), {
      status: 400,
      type: 'HTTPBadRequest',
      message: 'Body contains invalid data',
    });
    assert.deepEqual(await error('GET', '/ports/not-a-uuid'), {
      status: 404,
      type: 'PortNotFound',
      message: 'Port not-a-uuid could not be found.',
    });
    const missing = '00000000-0000-0000-0000-000000000000';
    assert.deepEqual(await error('POST', '/ports', { port: { network_id: missing } }), {
      status: 404,
      type: 'NetworkNotFound',
      message: `Network ${missing} could not be found.`,
    });
    const n = await network();
    const s = await api<{ subnet: Subnet }>('POST', '/subnets', {
      subnet: { network_id: n.id, cidr: '10.40.0.0/24', ip_version: 4 },
    });
    const a = (await api<{ port: Port }>('POST', '/ports', { port: { network_id: n.id } })).body.port;
    const b = (await api<{ port: Port }>('POST', '/ports', { port: { network_id: n.id } })).body.port;
    const inUse = await error('DELETE', `/networks/${n.id}`);
    assert.equal(inUse.type, 'NetworkInUse');
    assert.equal(
      inUse.message,
      `Unable to complete operation on network ${n.id}. There are one or more ports still in use on the network, id for these ports is: ${[a.id, b.id].sort().join(',')}.`,
    );
    assert.deepEqual(await error('DELETE', `/subnets/${s.body.subnet.id}`), {
      status: 409,
      type: 'SubnetInUse',
      message: `Unable to complete operation on subnet ${s.body.subnet.id}: One or more ports have an IP allocation from this subnet.`,
    });
    for (const p of [a, b]) assert.equal((await api('DELETE', `/ports/${p.id}`)).status, 204);
    assert.equal((await api('DELETE', `/networks/${n.id}`)).status, 204);
    assert.equal((await api('GET', `/subnets/${s.body.subnet.id}`)).status, 404);
  });

  it('enforces quotas with the real OverQuota message and reports usage', async () => {
    const n = await network({ project_id: 'proj-q' });
    assert.equal((await api('PUT', '/quotas/proj-q', { quota: { port: 1 } })).status, 200);
    assert.equal((await api('POST', '/ports', { port: { network_id: n.id, project_id: 'proj-q' } })).status, 201);
    assert.deepEqual(await error('POST', '/ports', { port: { network_id: n.id, project_id: 'proj-q' } }), {
      status: 409,
      type: 'OverQuota',
      message: "Quota exceeded for resources: ['port'].",
    });
    const details = await api<{ quota: Record<string, { limit: number; used: number; reserved: number }> }>(
      'GET',
      '/quotas/proj-q/details',
    );
    assert.deepEqual(details.body.quota.port, { limit: 1, used: 1, reserved: 0 });
    assert.equal((await api('DELETE', '/quotas/proj-q')).status, 204);
    assert.equal((await api<{ quota: Record<string, number> }>('GET', '/quotas/proj-q')).body.quota.port, -1);
  });

  it('with an X-Project-Id header (noauth) gives an admin context without a project: creates need project_id', async () => {
    assert.deepEqual(await error('POST', '/networks', { network: { name: 'projb' } }, { 'x-project-id': 'proj-b' }), {
      status: 400,
      type: 'HTTPBadRequest',
      message: 'Running without keystone AuthN requires that tenant_id is specified',
    });
    const listed = await api<{ networks: Network[] }>('GET', '/networks?fields=project_id', undefined, {
      'x-project-id': 'proj-b',
    });
    assert.ok(listed.body.networks.some((x) => x.project_id === 'proj-q'));
  });

  it('binds ports on host-ovs-filter-active as ovs and ACTIVE; other hosts fail to bind', async () => {
    const bound = await port({ 'binding:host_id': 'host-ovs-filter-active' });
    assert.deepEqual([bound.status, bound['binding:vif_type']], ['ACTIVE', 'ovs']);
    const failed = await port({ 'binding:host_id': 'node-1' });
    assert.deepEqual([failed.status, failed['binding:vif_type']], ['DOWN', 'binding_failed']);
    const rebound = await api<{ port: Port }>('PUT', `/ports/${failed.id}`, {
      port: { 'binding:host_id': 'host-ovs-filter-active' },
    });
    assert.equal(rebound.body.port.status, 'ACTIVE');
  });

  it('lists the extensions it implements under their real aliases, and the version document', async () => {
    const aliases = (await api<{ extensions: { alias: string }[] }>('GET', '/extensions')).body.extensions.map(
      (e) => e.alias,
    );
    for (const a of [
      'standard-attr-tag',
      'router',
      'external-net',
      'subnet_allocation',
      'quotas',
      'quota_details',
      'security-group',
      'binding',
      'port-security',
      'revision-if-match',
      'pagination',
      'sorting',
      'fip-port-details',
    ]) {
      assert.ok(aliases.includes(a), a);
    }
    assert.ok(!aliases.includes('tag-ports-during-bulk-creation'));
    const versions = await api<{ versions: { id: string; status: string }[] }>('GET', `${sim.neutronUrl}/`);
    assert.deepEqual(
      versions.body.versions.map((v) => [v.id, v.status]),
      [['v2.0', 'CURRENT']],
    );
  });
});
