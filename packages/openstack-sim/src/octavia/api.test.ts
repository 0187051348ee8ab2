import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../../src/core/index.ts';
import {
  client,
  type Call,
  type Port,
  type Subnet,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

interface Obj {
  id: string;
  name: string;
  provisioning_status: string;
  created_at: string;
  tags: string[];
}

/**
 * Octavia's API layer as real Zed answers it (probed against the Debian packages, see scripts/openstack/README.md):
 * wsme's body checks and messages, pecan's own error shape, list order/filters/paging, fields, and the quirks.
 */
describe('simulated Octavia API layer (noauth)', () => {
  const clock = new FakeClock(Date.parse('2026-11-22T09:00:00Z'));
  let sim: RunningOpenStackSim;
  let lbaas: Call;
  let neutron: Call;
  let subnet: Subnet;

  const lbBody = (extra: Record<string, unknown> = {}) => ({ loadbalancer: { vip_subnet_id: subnet.id, ...extra } });
  const newLb = async (extra: Record<string, unknown> = {}): Promise<Obj> => {
    const res = await lbaas<{ loadbalancer: Obj }>('POST', '/v2/lbaas/loadbalancers', lbBody(extra));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.loadbalancer;
  };
  const answer = async (method: string, path: string, body?: unknown): Promise<[number, unknown]> => {
    const res = await lbaas<Record<string, unknown>>(method, path, body);
    return [res.status, res.body?.faultstring ?? res.body];
  };

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', clock, provisioningDelayMs: 300, seed: 5 });
    lbaas = client(sim.octaviaUrl, { 'x-project-id': 'proj-api' });
    neutron = client(`${sim.neutronUrl}/v2.0`);
    const net = await neutron<{ network: { id: string } }>('POST', '/networks', { network: { name: 'apinet' } });
    subnet = (
      await neutron<{ subnet: Subnet }>('POST', '/subnets', {
        subnet: { network_id: net.body.network.id, cidr: '10.78.0.0/24', ip_version: 4 },
      })
    ).body.subnet;
  });
  after(() => sim.close());

  it('checks bodies like wsme: argument names, unknown attributes, types, bounds, mandatory fields', async () => {
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers'), [400, 'Missing argument: "load_balancer"']);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', {}), [
      500,
      "'UnsetType' object has no attribute 'project_id'",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', [1]), [
      500,
      "'list' object has no attribute 'keys'",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', { lb: {} }), [
      400,
      'Unknown attribute for argument load_balancer: lb',
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', lbBody({ bogus: 1 })), [
      400,
      'Unknown attribute for argument load_balancer.loadbalancer: bogus',
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', { loadbalancer: { vip_subnet_id: 'nope' } }), [
      400,
      "Invalid input for field/attribute vip_subnet_id. Value: 'nope'. Value should be UUID format",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', lbBody({ listeners: 'x' })), [
      400,
      `Invalid input for field/attribute load_balancer. Value: '{'loadbalancer': {'vip_subnet_id': '${subnet.id}', 'listeners': 'x'}}'. Value not a valid list: x`,
    ]);
    assert.deepEqual(
      await answer(
        'POST',
        '/v2/lbaas/loadbalancers',
        lbBody({
          pools: [
            {
              name: 'p',
              protocol: 'TCP',
              lb_algorithm: 'ROUND_ROBIN',
              members: [{ address: '10.0.0.1', protocol_port: 80, foo: 1 }],
            },
          ],
        }),
      ),
      [400, 'Unknown attribute for argument load_balancer.loadbalancer.pools.members: foo'],
    );
    const lb = await newLb();
    clock.advance(300);
    const listener = (l: Record<string, unknown>) => ({
      listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 81, ...l },
    });
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', listener({ protocol_port: 0 })), [
      400,
      "Invalid input for field/attribute protocol_port. Value: '0'. Value should be greater or equal to 1",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', listener({ protocol_port: 70000 })), [
      400,
      "Invalid input for field/attribute protocol_port. Value: '70000'. Value should be lower or equal to 65535",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', listener({ name: 5 })), [
      400,
      "Invalid input for field/attribute name. Value: '5'. Value should be string",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', listener({ tags: [1] })), [
      400,
      "Invalid input for field/attribute tags. Value: '[1]'. Value should be string",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', { listener: {} }), [
      400,
      "Invalid input for field/attribute protocol. Value: 'None'. Mandatory field missing.",
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/listeners', listener({ foo: 1, bar: 2 })), [
      400,
      'Unknown attributes for argument listener_.listener: foo, bar',
    ]);
    assert.deepEqual(
      await answer('PUT', `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { vip_subnet_id: subnet.id } }),
      [400, 'Unknown attribute for argument load_balancer.loadbalancer: vip_subnet_id'],
    );
    // JSON strings and floats become ints, "yes" a boolean, as wsme converts them.
    const made = await lbaas<{ listener: { protocol_port: number; admin_state_up: boolean } }>(
      'POST',
      '/v2/lbaas/listeners',
      listener({ protocol_port: '82', admin_state_up: 'yes' }),
    );
    assert.deepEqual(
      [made.status, made.body.listener.protocol_port, made.body.listener.admin_state_up],
      [201, 82, true],
    );
  });

  it('answers pecan errors in their own shape, "v2" at /v2, and the version document to any method at /', async () => {
    assert.deepEqual(await answer('GET', '/v2/lbaas/bogus'), [404, { code: 404, title: 'Not Found', description: '' }]);
    assert.deepEqual(await answer('PATCH', '/v2/lbaas/loadbalancers'), [
      405,
      { code: 405, title: 'Method Not Allowed', description: '' },
    ]);
    assert.deepEqual(await answer('GET', '/v3'), [404, { code: 404, title: 'Not Found', description: null }]);
    const missingPool = '00000000-0000-0000-0000-000000000001';
    assert.deepEqual(await answer('GET', `/v2/lbaas/pools/${missingPool}/members`), [
      404,
      { code: 404, title: 'Bad Request', description: `Pool ${missingPool} not found.` },
    ]);
    assert.deepEqual(await answer('DELETE', '/v2/lbaas/listeners'), [400, 'Missing argument: "id"']);
    assert.deepEqual(await answer('GET', '/v2'), [200, 'v2']);
    assert.deepEqual(await answer('GET', '/v2/lbaas'), [200, 'v2']);
    const [status, body] = await answer('POST', '/', {});
    assert.equal(status, 200);
    assert.equal((body as { versions: unknown[] }).versions.length, 27);
    const providers = await answer('GET', '/v2/lbaas/providers');
    assert.deepEqual(providers, [
      200,
      {
        providers: [
          { name: 'amphora', description: "'The Octavia Amphora driver.'" },
          { name: 'noop_driver', description: "'The No-Op driver.'" },
          { name: 'ovn', description: "'Octavia OVN driver.'" },
        ],
      },
    ]);
    assert.deepEqual(await answer('POST', '/v2/lbaas/loadbalancers', lbBody({ provider: 'octavia' })), [
      400,
      "Provider 'octavia' is not enabled.",
    ]);
  });

  it('lists oldest first, filters like SQL on MariaDB, and pages with links that keep limit and sort only', async () => {
    const tag = 'run-list';
    const a = await newLb({ name: 'b-lb', tags: [tag, 'Zed', 'alpha'] });
    clock.advance(1000);
    const b = await newLb({ name: 'A-lb', tags: [tag], description: '' });
    clock.advance(1000);
    const c = await newLb({ name: 'c-lb', tags: [tag] });
    assert.deepEqual(a.tags, ['alpha', tag, 'Zed'], 'tags in collation order');
    const list = async (q: string) =>
      (
        await lbaas<{ loadbalancers: Obj[]; loadbalancers_links: { href: string; rel: string }[] }>(
          'GET',
          `/v2/lbaas/loadbalancers?tags=${tag}${q}`,
        )
      ).body;
    const names = async (q: string) => (await list(q)).loadbalancers.map((lb) => lb.name);
    assert.deepEqual(await names(''), ['b-lb', 'A-lb', 'c-lb']);
    assert.deepEqual(await names('&sort=name'), ['A-lb', 'b-lb', 'c-lb'], 'asc by default, case-insensitive');
    assert.deepEqual(await names('&sort_key=created_at&sort_dir=desc'), ['c-lb', 'A-lb', 'b-lb']);
    assert.deepEqual(await names('&name=a-LB'), ['A-lb'], 'string filters ignore case');
    assert.deepEqual(await names('&description='), ['A-lb'], 'a description never given is NULL and matches nothing');
    assert.deepEqual(await names('&admin_state_up=yes'), ['b-lb', 'A-lb', 'c-lb']);
    assert.deepEqual(await answer('GET', '/v2/lbaas/loadbalancers?tenant_id=x'), [
      400,
      'One or more arguments are either duplicate or invalid',
    ]);
    assert.deepEqual((await answer('GET', '/v2/lbaas/loadbalancers?listeners=x'))[0], 500);
    assert.deepEqual((await answer('GET', '/v2/lbaas/loadbalancers?name=a&name=b'))[0], 500);
    assert.deepEqual(await answer('GET', '/v2/lbaas/loadbalancers?limit=x'), [
      400,
      { code: 400, title: 'Bad Request', description: "Supplied pagination limit 'x' is not valid." },
    ]);
    assert.deepEqual(await answer('GET', `/v2/lbaas/loadbalancers?tags=${tag}&limit=0`), [
      500,
      "'>=' not supported between instances of 'int' and 'NoneType'",
    ]);
    assert.deepEqual(await answer('GET', '/v2/lbaas/loadbalancers?sort=name:up'), [
      400,
      { code: 400, title: 'Bad Request', description: "Supplied sort direction 'up' is not valid." },
    ]);
    assert.deepEqual(await answer('GET', '/v2/lbaas/loadbalancers?sort=bogus'), [
      400,
      "Supplied sort key 'bogus' is not valid.",
    ]);

    const page = await list('&limit=2&sort=name:asc');
    assert.deepEqual(
      page.loadbalancers.map((lb) => lb.name),
      ['A-lb', 'b-lb'],
    );
    assert.deepEqual(page.loadbalancers_links, [
      { href: `${sim.octaviaUrl}/v2/lbaas/loadbalancers?limit=2&sort=name:asc&marker=${a.id}`, rel: 'next' },
    ]);
    const next = await list(`&limit=2&sort=name:asc&marker=${a.id}`);
    assert.deepEqual(
      next.loadbalancers.map((lb) => lb.name),
      ['c-lb'],
    );
    assert.deepEqual(next.loadbalancers_links, [
      {
        href: `${sim.octaviaUrl}/v2/lbaas/loadbalancers?limit=2&sort=name:asc&marker=${c.id}&page_reverse=True`,
        rel: 'previous',
      },
    ]);
    // page_reverse=True (exactly): the rows before the marker, in the forward order, from the start.
    assert.deepEqual(await names(`&limit=1&marker=${c.id}&page_reverse=True`), ['b-lb']);
    assert.deepEqual(
      (await list(`&marker=${a.id}`)).loadbalancers_links[0]?.href,
      `${sim.octaviaUrl}/v2/lbaas/loadbalancers?limit=1000&marker=${b.id}&page_reverse=True`,
    );

    assert.deepEqual((await lbaas('GET', `/v2/lbaas/loadbalancers/${b.id}?fields=id&fields=name`)).body, {
      loadbalancer: { id: b.id, name: 'A-lb' },
    });
    assert.deepEqual(
      (await lbaas('GET', `/v2/lbaas/loadbalancers/${b.id}/name`)).body,
      { loadbalancer: { name: 'A-lb' } },
      'a path segment is taken as fields',
    );
    clock.advance(300);
    for (const lb of [a, b, c]) assert.equal((await lbaas('DELETE', `/v2/lbaas/loadbalancers/${lb.id}`)).status, 204);
    clock.advance(300);
  });

  it('times, omissions and operating statuses: updated_at from the worker, no healthmonitor_id without a monitor, a monitor ONLINE', async () => {
    const lb = await newLb();
    assert.match(lb.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    assert.equal((lb as unknown as { updated_at: unknown }).updated_at, null);
    clock.advance(300);
    assert.ok(
      (await lbaas<{ loadbalancer: { updated_at: string | null } }>('GET', `/v2/lbaas/loadbalancers/${lb.id}`)).body
        .loadbalancer.updated_at,
    );
    const pool = (
      await lbaas<{ pool: Record<string, unknown> }>('POST', '/v2/lbaas/pools', {
        pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    assert.equal('healthmonitor_id' in pool, false);
    clock.advance(300);
    assert.deepEqual(
      await answer('POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: pool.id, type: 'TCP', delay: 3, timeout: 1, max_retries: 1, http_method: 'GET' },
      }),
      [400, 'http_method is not a valid option for health monitors of type TCP'],
    );
    clock.advance(300);
    await lbaas('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`);
    clock.advance(300);
  });

  it('a fully-populated create that fails after the VIP exists leaves the VIP port behind, as real Octavia does', async () => {
    const before = (
      await neutron<{ ports: Port[] }>('GET', `/ports?network_id=${subnet.network_id}&device_owner=Octavia`)
    ).body.ports.length;
    const res = await answer(
      'POST',
      '/v2/lbaas/loadbalancers',
      lbBody({
        listeners: [
          { protocol: 'TCP', protocol_port: 80 },
          { protocol: 'HTTP', protocol_port: 80 },
        ],
      }),
    );
    assert.deepEqual(res, [
      409,
      'Another Listener on this Load Balancer is already using protocol TCP and protocol_port 80',
    ]);
    const ports = (
      await neutron<{ ports: Port[] }>('GET', `/ports?network_id=${subnet.network_id}&device_owner=Octavia`)
    ).body.ports.length;
    assert.equal(ports, before + 1);
  });

  it('a batch that names an existing member twice leaves everything PENDING_UPDATE for good (Zed worker bug)', async () => {
    const lb = await newLb();
    clock.advance(300);
    const pool = (
      await lbaas<{ pool: Obj }>('POST', '/v2/lbaas/pools', {
        pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    clock.advance(300);
    // Nothing to add, match or delete: Octavia rolls back and the load balancer never leaves ACTIVE.
    assert.equal((await lbaas('PUT', `/v2/lbaas/pools/${pool.id}/members`, { members: [] })).status, 202);
    assert.equal(
      (await lbaas<{ loadbalancer: Obj }>('GET', `/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer
        .provisioning_status,
      'ACTIVE',
    );
    await lbaas('POST', `/v2/lbaas/pools/${pool.id}/members`, { member: { address: '10.78.0.5', protocol_port: 80 } });
    clock.advance(300);
    const twice = { address: '10.78.0.5', protocol_port: 80 };
    assert.equal((await lbaas('PUT', `/v2/lbaas/pools/${pool.id}/members`, { members: [twice, twice] })).status, 202);
    clock.advance(60_000);
    assert.equal(
      (await lbaas<{ loadbalancer: Obj }>('GET', `/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer
        .provisioning_status,
      'PENDING_UPDATE',
    );
  });
});

describe('simulated Octavia API layer (keystone)', () => {
  let sim: RunningOpenStackSim;

  before(async () => {
    sim = await runOpenStackSim({ auth: 'keystone', password: 's3cret', provisioningDelayMs: 0 });
  });
  after(() => sim.close());

  const token = async (user: string): Promise<string> => {
    const keystone = client(sim.keystoneUrl);
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: user, domain: { name: 'Default' }, password: 's3cret' } },
        },
        scope: { project: { name: user, domain: { id: 'default' } } },
      },
    };
    return (await keystone('POST', '/auth/tokens', body)).headers.get('x-subject-token') ?? '';
  };

  it("answers 403 (not 404) for another project's load balancer and for a project_id filter naming one", async () => {
    const admin = client(sim.octaviaUrl, { 'x-auth-token': await token('admin') });
    const demo = client(sim.octaviaUrl, { 'x-auth-token': await token('demo') });
    const neutron = client(`${sim.neutronUrl}/v2.0`, { 'x-auth-token': await token('admin') });
    const net = await neutron<{ network: { id: string } }>('POST', '/networks', { network: { name: 'n' } });
    const subnet = (
      await neutron<{ subnet: Subnet }>('POST', '/subnets', {
        subnet: { network_id: net.body.network.id, cidr: '10.79.0.0/24', ip_version: 4 },
      })
    ).body.subnet;
    const lb = (
      await admin<{ loadbalancer: { id: string; project_id: string } }>('POST', '/v2/lbaas/loadbalancers', {
        loadbalancer: { vip_subnet_id: subnet.id },
      })
    ).body.loadbalancer;
    const forbidden = 'Policy does not allow this request to be performed.';
    for (const [method, path] of [
      ['GET', `/v2/lbaas/loadbalancers/${lb.id}`],
      ['DELETE', `/v2/lbaas/loadbalancers/${lb.id}`],
      ['GET', `/v2/lbaas/loadbalancers?project_id=${lb.project_id}`],
    ] as const) {
      const res = await demo<{ faultstring: string }>(method, path);
      assert.deepEqual([res.status, res.body.faultstring], [403, forbidden], `${method} ${path}`);
    }
    assert.deepEqual(
      (await demo<{ loadbalancers: unknown[] }>('GET', '/v2/lbaas/loadbalancers')).body.loadbalancers,
      [],
    );
  });
});
