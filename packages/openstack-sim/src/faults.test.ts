import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../../src/core/index.ts';
import { routeKey } from './faults.ts';
import {
  client,
  type Call,
  type NeutronErrorBody,
  type OctaviaErrorBody,
  type Port,
  type Subnet,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../test/support/openstack-sim.ts';

describe('routeKey', () => {
  it('replaces ids and tags with placeholders', () => {
    assert.equal(
      routeKey('PUT', '/network/v2.0/ports/6ce12b47-50ee-40e6-aadc-d7cbdbdc46c9/tags/k8s=x'),
      'PUT /network/v2.0/ports/{id}/tags/{tag}',
    );
    assert.equal(
      routeKey('GET', '/network/v2.0/quotas/fake_project_id/details'),
      'GET /network/v2.0/quotas/{id}/details',
    );
    assert.equal(
      routeKey('POST', '/identity/v3/users/0123456789abcdef0123456789abcdef/application_credentials'),
      'POST /identity/v3/users/{id}/application_credentials',
    );
  });
});

/** Fault injection and counters over the `/_sim/` HTTP API, with Octavia's and the delays' time on a fake clock. */
describe('simulator faults and counters', () => {
  const clock = new FakeClock(Date.parse('2026-11-22T09:00:00Z'));
  let sim: RunningOpenStackSim;
  let neutron: Call;
  let lbaas: Call;
  let control: Call;
  let networkId: string;
  let subnet: Subnet;

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', clock, provisioningDelayMs: 100, seed: 5 });
    neutron = client(`${sim.neutronUrl}/v2.0`);
    lbaas = client(sim.octaviaUrl, { 'x-project-id': 'p' });
    control = client(`${sim.url}/_sim`);
    networkId = (await neutron<{ network: { id: string } }>('POST', '/networks', { network: {} })).body.network.id;
    subnet = (
      await neutron<{ subnet: Subnet }>('POST', '/subnets', {
        subnet: { network_id: networkId, cidr: '10.9.0.0/24', ip_version: 4 },
      })
    ).body.subnet;
  });
  after(() => sim.close());

  it("fails the next `count` matching requests with the service's own error body, then lets them through", async () => {
    const rule = await control<{ id: number }>('POST', '/faults/rules', {
      method: 'POST',
      path: '/network/v2.0/ports',
      count: 1,
      status: 503,
    });
    assert.equal(rule.status, 201);
    const failed = await neutron<NeutronErrorBody>('POST', '/ports', { port: { network_id: networkId, name: 'f1' } });
    assert.deepEqual([failed.status, failed.body.NeutronError.type], [503, 'HTTPServiceUnavailable']);
    assert.equal(
      (await neutron<{ ports: Port[] }>('GET', '/ports?name=f1')).body.ports.length,
      0,
      'nothing was created',
    );
    assert.equal((await neutron('POST', '/ports', { port: { network_id: networkId, name: 'f1' } })).status, 201);
    assert.deepEqual((await control<{ rules: unknown[] }>('GET', '/faults/rules')).body.rules, []);
    assert.equal((await control('POST', '/faults/rules', { path: 'no-slash' })).status, 400);
  });

  it('matches path patterns with {placeholders}, and rate 0 never fires while rate 1 always does', async () => {
    const p = (await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: networkId } })).body.port;
    await control('POST', '/faults/rules', { method: 'GET', path: '/network/v2.0/ports/{id}', status: 500, rate: 0 });
    assert.equal((await neutron('GET', `/ports/${p.id}`)).status, 200);
    await control('DELETE', '/faults/rules');
    await control('POST', '/faults/rules', {
      method: 'GET',
      path: '/network/v2.0/ports/{id}',
      status: 500,
      rate: 1,
      errorType: 'DBError',
      message: 'boom',
    });
    const failed = await neutron<NeutronErrorBody>('GET', `/ports/${p.id}`);
    assert.deepEqual(
      [failed.status, failed.body.NeutronError],
      [500, { type: 'DBError', message: 'boom', detail: '' }],
    );
    assert.equal((await neutron('GET', '/ports')).status, 200, 'the collection does not match the item pattern');
    await control('POST', '/faults/rules', { path: '/load-balancer/v2/lbaas', status: 409, count: 1 });
    const octavia = await lbaas<OctaviaErrorBody>('GET', '/v2/lbaas/loadbalancers');
    assert.deepEqual([octavia.status, octavia.body.faultcode, octavia.body.debuginfo], [409, 'Client', null]);
    await control('DELETE', '/faults/rules');
  });

  it("delays requests on the sim's clock", async () => {
    await control('POST', '/faults/rules', { method: 'GET', path: '/network/v2.0/networks', delayMs: 5_000, count: 1 });
    let done = false;
    const pending = neutron('GET', '/networks').then((r) => ((done = true), r));
    while (clock.pending === 0) await tick();
    await tick();
    assert.equal(done, false);
    clock.advance(5_000);
    assert.equal((await pending).status, 200);
  });

  it('holds new load balancers in PENDING_CREATE until released', async () => {
    assert.equal((await control('POST', '/faults/stuck', {})).status, 200);
    const lb = (
      await lbaas<{ loadbalancer: { id: string } }>('POST', '/v2/lbaas/loadbalancers', {
        loadbalancer: { vip_subnet_id: subnet.id },
      })
    ).body.loadbalancer;
    clock.advance(1_000);
    const status = async () =>
      (await lbaas<{ loadbalancer: { provisioning_status: string } }>('GET', `/v2/lbaas/loadbalancers/${lb.id}`)).body
        .loadbalancer.provisioning_status;
    assert.equal(await status(), 'PENDING_CREATE');
    await control('DELETE', '/faults/stuck');
    assert.equal(await status(), 'ACTIVE');
  });

  it('counts calls per route with ids replaced, and resets', async () => {
    await control('DELETE', '/counters');
    const p = (await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: networkId } })).body.port;
    await neutron('GET', `/ports/${p.id}`);
    await neutron('GET', `/ports/${p.id}`);
    await neutron('PUT', `/ports/${p.id}/tags/a`);
    assert.deepEqual((await control('GET', '/counters')).body, {
      'GET /network/v2.0/ports/{id}': 2,
      'POST /network/v2.0/ports': 1,
      'PUT /network/v2.0/ports/{id}/tags/{tag}': 1,
    });
    assert.deepEqual(sim.sim.faults.counters()['POST /network/v2.0/ports'], 1, 'the same counters in-process');
    await control('POST', '/reset');
    assert.deepEqual((await control('GET', '/counters')).body, {});
  });

  it('counts error answers per route and status, and resets them with the counters', async () => {
    await control('DELETE', '/counters');
    const p = (await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: networkId } })).body.port;
    await neutron('DELETE', `/ports/${p.id}`);
    await neutron('DELETE', `/ports/${p.id}`);
    await neutron('DELETE', `/ports/${p.id}`);
    assert.deepEqual((await control('GET', '/errors')).body, { 'DELETE /network/v2.0/ports/{id} 404': 2 });
    assert.deepEqual(sim.sim.faults.errors(), { 'DELETE /network/v2.0/ports/{id} 404': 2 }, 'the same in-process');
    await control('DELETE', '/counters');
    assert.deepEqual((await control('GET', '/errors')).body, {});
  });
});

/** `POST /_sim/ports/{id}/link`: what a node's agent reports of a port's device, as Neutron records it. */
describe('simulator agent link reports', () => {
  let sim: RunningOpenStackSim;
  let neutron: Call;
  let control: Call;
  let networkId: string;

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', linuxbridgeHosts: ['node-1'] });
    neutron = client(`${sim.neutronUrl}/v2.0`);
    control = client(`${sim.url}/_sim`);
    networkId = (await neutron<{ network: { id: string } }>('POST', '/networks', { network: {} })).body.network.id;
    await neutron('POST', '/subnets', { subnet: { network_id: networkId, cidr: '10.8.0.0/24', ip_version: 4 } });
  });
  after(() => sim.close());

  const port = async (id: string) => (await neutron<{ port: Port }>('GET', `/ports/${id}`)).body.port;

  it('sets a bound port ACTIVE when plugged and DOWN when unplugged, each a revision an If-Match then refuses', async () => {
    const made = (
      await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: networkId, 'binding:host_id': 'node-1' } })
    ).body.port;
    const before = await port(made.id);
    assert.equal(before.status, 'DOWN');
    assert.equal((await control('POST', `/ports/${made.id}/link`, { up: true })).status, 200);
    const plugged = await port(made.id);
    assert.equal(plugged.status, 'ACTIVE');
    assert.equal(plugged.revision_number, before.revision_number + 1);
    await control('POST', `/ports/${made.id}/link`, { up: true });
    assert.equal((await port(made.id)).revision_number, plugged.revision_number, 'no change, no revision');
    await control('POST', `/ports/${made.id}/link`, { up: false });
    const unplugged = await port(made.id);
    assert.equal(unplugged.status, 'DOWN');
    assert.equal(unplugged.revision_number, plugged.revision_number + 1);
    const claim = await neutron(
      'PUT',
      `/ports/${made.id}`,
      { port: { device_id: 'x' } },
      {
        'if-match': `revision_number=${plugged.revision_number}`,
      },
    );
    assert.equal(claim.status, 412);
  });

  it('leaves a port no agent wires DOWN, and answers 404 for a port that does not exist', async () => {
    const unbound = (await neutron<{ port: Port }>('POST', '/ports', { port: { network_id: networkId } })).body.port;
    await control('POST', `/ports/${unbound.id}/link`, { up: true });
    assert.equal((await port(unbound.id)).status, 'DOWN');
    assert.equal((await control('POST', '/ports/nope/link', { up: true })).status, 404);
    assert.equal((await control('POST', `/ports/${unbound.id}/link`, { up: 'yes' })).status, 400);
  });
});
