import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../../src/core/index.ts';
import {
  client,
  type Call,
  type OctaviaErrorBody,
  type Port,
  type Subnet,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

interface Lb {
  id: string;
  provisioning_status: string;
  operating_status: string;
  vip_port_id: string;
  vip_address: string;
  vip_subnet_id: string;
  project_id: string;
  listeners: { id: string }[];
  pools: { id: string; members?: { operating_status: string }[] }[];
}
interface Obj {
  id: string;
  provisioning_status: string;
  operating_status: string;
}

/**
 * Octavia v2 over a real socket, its worker's PENDING_* → ACTIVE driven by a fake clock (docs/openstack.md, "Octavia").
 */
describe('simulated Octavia (noauth)', () => {
  const clock = new FakeClock(Date.parse('2026-11-22T09:00:00Z'));
  let sim: RunningOpenStackSim;
  let lbaas: Call;
  let neutron: Call;
  let subnet: Subnet;

  const fault = async (method: string, path: string, body?: unknown) => {
    const res = await lbaas<OctaviaErrorBody>(method, path, body);
    assert.equal(res.body.faultcode, res.status >= 500 ? 'Server' : 'Client');
    assert.equal(res.body.debuginfo, null);
    return [res.status, res.body.faultstring];
  };
  /** GETs one object (the body's only key). */
  const get = async <T = Obj>(path: string): Promise<T> => {
    const body = (await lbaas<Record<string, T>>('GET', path)).body;
    return body[Object.keys(body)[0]!]!;
  };
  const newLb = async (extra: Record<string, unknown> = {}): Promise<Lb> => {
    const res = await lbaas<{ loadbalancer: Lb }>('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { name: 'lb', vip_subnet_id: subnet.id, ...extra },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.loadbalancer;
  };

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', clock, provisioningDelayMs: 300, seed: 3 });
    lbaas = client(sim.octaviaUrl, { 'x-project-id': 'proj-lb' });
    neutron = client(`${sim.neutronUrl}/v2.0`);
    const net = await neutron<{ network: { id: string } }>('POST', '/networks', { network: { name: 'lbnet' } });
    subnet = (
      await neutron<{ subnet: Subnet }>('POST', '/subnets', {
        subnet: { network_id: net.body.network.id, cidr: '10.77.0.0/24', ip_version: 4 },
      })
    ).body.subnet;
  });
  after(() => sim.close());

  it('creates a load balancer PENDING_CREATE with a real VIP port, refuses changes until the worker is done, then is ACTIVE', async () => {
    const lb = await newLb();
    assert.deepEqual(
      [lb.provisioning_status, lb.operating_status, lb.project_id],
      ['PENDING_CREATE', 'OFFLINE', 'proj-lb'],
    );
    const vip = (await neutron<{ port: Port }>('GET', `/ports/${lb.vip_port_id}`)).body.port;
    assert.deepEqual(
      [vip.name, vip.device_owner, vip.device_id, vip.admin_state_up, vip.project_id, vip.fixed_ips[0]!.ip_address],
      [`octavia-lb-${lb.id}`, 'Octavia', `lb-${lb.id}`, false, 'proj-lb', lb.vip_address],
    );
    assert.deepEqual(await fault('PUT', `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { name: 'x' } }), [
      409,
      `Invalid state PENDING_CREATE of loadbalancer resource ${lb.id}`,
    ]);
    assert.deepEqual(
      await fault('POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      }),
      [409, `Load Balancer ${lb.id} is immutable and cannot be updated.`],
    );
    clock.advance(299);
    assert.equal((await get<Lb>(`/v2/lbaas/loadbalancers/${lb.id}`)).provisioning_status, 'PENDING_CREATE');
    clock.advance(1);
    assert.equal((await get<Lb>(`/v2/lbaas/loadbalancers/${lb.id}`)).provisioning_status, 'ACTIVE');
  });

  it('builds listener → pool → members → health monitor one step at a time, the LB PENDING_UPDATE in between', async () => {
    const lb = await newLb();
    clock.advance(300);
    const listener = (
      await lbaas<{ listener: Obj }>('POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    assert.equal(listener.provisioning_status, 'PENDING_CREATE');
    assert.equal((await get<Lb>(`/v2/lbaas/loadbalancers/${lb.id}`)).provisioning_status, 'PENDING_UPDATE');
    assert.deepEqual(await fault('PUT', `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { name: 'x' } }), [
      409,
      `Invalid state PENDING_UPDATE of loadbalancer resource ${lb.id}`,
    ]);
    assert.equal(
      (
        await fault('POST', '/v2/lbaas/pools', {
          pool: { listener_id: listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
        })
      )[0],
      409,
    );
    clock.advance(300);
    assert.equal((await get(`/v2/lbaas/listeners/${listener.id}`)).provisioning_status, 'ACTIVE');
    assert.deepEqual(
      await fault('POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 80 },
      }),
      [409, 'Another Listener on this Load Balancer is already using protocol TCP and protocol_port 80'],
    );
    const pool = (
      await lbaas<{ pool: Obj }>('POST', '/v2/lbaas/pools', {
        pool: { listener_id: listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    clock.advance(300);
    const member = (
      await lbaas<{ member: Obj }>('POST', `/v2/lbaas/pools/${pool.id}/members`, {
        member: { address: '10.77.0.10', protocol_port: 8080, subnet_id: subnet.id },
      })
    ).body.member;
    assert.equal(member.operating_status, 'NO_MONITOR');
    // A member change locks its pool too; a second one is refused on the pool first.
    assert.equal((await get(`/v2/lbaas/pools/${pool.id}`)).provisioning_status, 'PENDING_UPDATE');
    assert.deepEqual(
      await fault('POST', `/v2/lbaas/pools/${pool.id}/members`, {
        member: { address: '10.77.0.13', protocol_port: 8080 },
      }),
      [409, `Pool ${pool.id} is immutable and cannot be updated.`],
    );
    clock.advance(300);
    assert.equal((await get(`/v2/lbaas/pools/${pool.id}`)).provisioning_status, 'ACTIVE');
    assert.equal(
      (
        await fault('POST', `/v2/lbaas/pools/${pool.id}/members`, {
          member: { address: '10.77.0.10', protocol_port: 8080 },
        })
      )[1],
      'Another member on this pool is already using ip 10.77.0.10 on protocol_port 8080',
    );
    const hm = await lbaas<{ healthmonitor: Obj }>('POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: pool.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
    });
    assert.equal(hm.status, 201);
    clock.advance(300);
    // The monitor goes ONLINE when ACTIVE; members made before it keep NO_MONITOR (no health manager runs).
    assert.equal((await get(`/v2/lbaas/healthmonitors/${hm.body.healthmonitor.id}`)).operating_status, 'ONLINE');
    assert.equal((await get(`/v2/lbaas/pools/${pool.id}/members/${member.id}`)).operating_status, 'NO_MONITOR');
    const batch = await lbaas('PUT', `/v2/lbaas/pools/${pool.id}/members`, {
      members: [
        { address: '10.77.0.11', protocol_port: 8080 },
        { address: '10.77.0.12', protocol_port: 8080 },
      ],
    });
    assert.equal(batch.status, 202);
    clock.advance(300);
    const members = (
      await lbaas<{ members: { address: string; provisioning_status: string }[] }>(
        'GET',
        `/v2/lbaas/pools/${pool.id}/members`,
      )
    ).body.members;
    assert.deepEqual(members.map((m) => `${m.address}/${m.provisioning_status}`).sort(), [
      '10.77.0.11/ACTIVE',
      '10.77.0.12/ACTIVE',
    ]);
    assert.ok((members as { operating_status?: string }[]).every((m) => m.operating_status === 'OFFLINE'));
    assert.equal((await get<Lb>(`/v2/lbaas/loadbalancers/${lb.id}`)).provisioning_status, 'ACTIVE');
  });

  it('creates a fully-populated tree whose children stay PENDING_CREATE (Zed); refuses to delete it with children; cascade deletes it all and leaves the VIP port', async () => {
    const lb = await newLb({
      listeners: [
        {
          protocol: 'HTTP',
          protocol_port: 80,
          default_pool: {
            name: 'web',
            protocol: 'HTTP',
            lb_algorithm: 'ROUND_ROBIN',
            members: [{ address: '10.77.0.20', protocol_port: 80 }],
            healthmonitor: { type: 'HTTP', delay: 5, timeout: 3, max_retries: 2 },
          },
        },
      ],
    });
    assert.equal(lb.listeners.length, 1);
    assert.equal(lb.pools[0]?.members?.[0]?.operating_status, 'OFFLINE');
    assert.equal((lb.pools[0] as { healthmonitor?: unknown }).healthmonitor, null);
    clock.advance(300);
    const status = await get<{
      loadbalancer: {
        provisioning_status: string;
        listeners: { provisioning_status: string; pools: { members: { provisioning_status: string }[] }[] }[];
      };
    }>(`/v2/lbaas/loadbalancers/${lb.id}/status`);
    assert.deepEqual(
      [
        status.loadbalancer.provisioning_status,
        status.loadbalancer.listeners[0]!.provisioning_status,
        status.loadbalancer.listeners[0]!.pools[0]!.members[0]!.provisioning_status,
      ],
      ['ACTIVE', 'PENDING_CREATE', 'PENDING_CREATE'],
    );
    clock.advance(60_000);
    assert.equal((await get(`/v2/lbaas/listeners/${lb.listeners[0]!.id}`)).provisioning_status, 'PENDING_CREATE');
    assert.deepEqual(await fault('DELETE', `/v2/lbaas/loadbalancers/${lb.id}`), [
      400,
      `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`,
    ]);
    assert.equal((await lbaas('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`)).status, 204);
    assert.equal((await get<Lb>(`/v2/lbaas/loadbalancers/${lb.id}`)).provisioning_status, 'PENDING_DELETE');
    clock.advance(300);
    assert.deepEqual(await fault('GET', `/v2/lbaas/loadbalancers/${lb.id}`), [
      404,
      `Load Balancer ${lb.id} not found.`,
    ]);
    assert.equal(
      (await lbaas<{ listeners: Obj[] }>('GET', '/v2/lbaas/listeners')).body.listeners.filter(
        (l) => l.id === lb.listeners[0]!.id,
      ).length,
      0,
    );
    assert.equal((await neutron('GET', `/ports/${lb.vip_port_id}`)).status, 200);
  });

  it('validates the VIP and the project like real Octavia', async () => {
    assert.deepEqual(await fault('POST', '/v2/lbaas/loadbalancers', { loadbalancer: { name: 'x' } }), [
      400,
      'Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.',
    ]);
    const noProject = await client(sim.octaviaUrl)<OctaviaErrorBody>('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { vip_subnet_id: subnet.id },
    });
    assert.deepEqual(
      [noProject.status, noProject.body.faultstring],
      [
        400,
        'Validation failure: Missing project ID in request where one is required. An administrator should check the keystone settings in the Octavia configuration.',
      ],
    );
    const taken = await newLb();
    const [status, message] = await fault('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { vip_subnet_id: subnet.id, vip_address: taken.vip_address },
    });
    assert.equal(status, 500, 'a Neutron failure comes back as the provider driver error');
    assert.match(
      String(message),
      new RegExp(
        `^Provider 'amphora' reports error: IP address ${taken.vip_address} already allocated in subnet ${subnet.id}\\nNeutron server returns request_ids: \\['req-[0-9a-f-]+'\\]$`,
      ),
    );
    const port = (
      await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: subnet.network_id, name: 'own-vip' } })
    ).body.port;
    const onPort = await newLb({ vip_subnet_id: undefined, vip_port_id: port.id });
    assert.deepEqual(
      [onPort.vip_port_id, onPort.vip_subnet_id, onPort.vip_address],
      [port.id, subnet.id, port.fixed_ips[0]!.ip_address],
    );
  });

  it('serves the Zed version document and pages lists with *_links', async () => {
    const versions = (await lbaas<{ versions: { id: string; status: string }[] }>('GET', '/')).body.versions;
    assert.deepEqual(versions.at(-1), { ...versions.at(-1), id: 'v2.26', status: 'CURRENT' });
    assert.ok(versions.slice(0, -1).every((v) => v.status === 'SUPPORTED') && versions[0]!.id === 'v2.0');
    const page = await lbaas<{ loadbalancers: Lb[]; loadbalancers_links: { href: string; rel: string }[] }>(
      'GET',
      '/v2/lbaas/loadbalancers?limit=1',
    );
    assert.equal(page.body.loadbalancers.length, 1);
    assert.deepEqual(page.body.loadbalancers_links, [
      {
        href: `${sim.octaviaUrl}/v2/lbaas/loadbalancers?limit=1&marker=${page.body.loadbalancers[0]!.id}`,
        rel: 'next',
      },
    ]);
  });
});

/** A sim of its own with one VIP subnet, for the options that change how Octavia behaves. */
async function simWithSubnet(options: Parameters<typeof runOpenStackSim>[0]) {
  const sim = await runOpenStackSim({ auth: 'noauth', provisioningDelayMs: 0, ...options });
  const neutron = client(`${sim.neutronUrl}/v2.0`);
  const net = await neutron<{ network: { id: string } }>('POST', '/networks', { network: {} });
  const subnet = (
    await neutron<{ subnet: Subnet }>('POST', '/subnets', {
      subnet: { network_id: net.body.network.id, cidr: '10.5.0.0/24', ip_version: 4 },
    })
  ).body.subnet;
  return { sim, neutron, subnet, lbaas: client(sim.octaviaUrl, { 'x-project-id': 'p' }) };
}

describe('simulated Octavia with octaviaLeaksVipPort: false', () => {
  it('deletes the VIP port with the load balancer', async () => {
    const { sim, neutron, subnet, lbaas } = await simWithSubnet({ octaviaLeaksVipPort: false });
    try {
      const lb = (
        await lbaas<{ loadbalancer: Lb }>('POST', '/v2/lbaas/loadbalancers', {
          loadbalancer: { vip_subnet_id: subnet.id },
        })
      ).body.loadbalancer;
      assert.equal(
        (await lbaas<{ loadbalancer: Lb }>('GET', `/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer
          .provisioning_status,
        'ACTIVE',
      );
      assert.equal((await lbaas('DELETE', `/v2/lbaas/loadbalancers/${lb.id}`)).status, 204);
      assert.equal((await neutron('GET', `/ports/${lb.vip_port_id}`)).status, 404);
    } finally {
      await sim.close();
    }
  });
});

describe('simulated Octavia with octaviaDefaultProvider: ovn', () => {
  it('gives a load balancer without provider the configured one, an explicit null amphora', async () => {
    const { sim, neutron, subnet, lbaas } = await simWithSubnet({ octaviaDefaultProvider: 'ovn' });
    try {
      const create = async (extra: Record<string, unknown>) =>
        (
          await lbaas<{ loadbalancer: Lb & { provider: string } }>('POST', '/v2/lbaas/loadbalancers', {
            loadbalancer: { vip_subnet_id: subnet.id, ...extra },
          })
        ).body.loadbalancer;
      const ovn = await create({});
      assert.equal(ovn.provider, 'ovn');
      assert.equal(
        (await neutron<{ port: Port }>('GET', `/ports/${ovn.vip_port_id}`)).body.port.name,
        `ovn-lb-vip-${ovn.id}`,
      );
      assert.equal((await create({ provider: null })).provider, 'amphora');
      assert.equal((await create({ provider: 'amphora' })).provider, 'amphora');
    } finally {
      await sim.close();
    }
  });
});
