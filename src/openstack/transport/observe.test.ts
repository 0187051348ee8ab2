import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../../test/support/openstack-sim.ts';
import { loadCloudConfig } from '../config/clouds.ts';
import type { OpenStackError } from '../errors.ts';
import type { CloudConfig } from '../config/types.ts';
import { NeutronClient } from '../neutron/index.ts';
import { OpenStackSession } from '../session.ts';
import { operationOf, type RequestSample } from './observe.ts';

describe('operationOf', () => {
  it('replaces ids, tags and project ids with placeholders and drops the query', () => {
    const id = '3f1c0e2a-9b7d-4c1e-8a55-0d7a1b2c3d4e';
    assert.equal(operationOf('/v2.0/ports'), '/v2.0/ports');
    assert.equal(operationOf(`/v2.0/ports/${id}?fields=id&device_id=${id}`), '/v2.0/ports/{id}');
    assert.equal(operationOf(`/v2.0/ports/${id}/tags`), '/v2.0/ports/{id}/tags');
    assert.equal(operationOf(`/v2.0/ports/${id}/tags/raven.uid%3D${id}`), '/v2.0/ports/{id}/tags/{tag}');
    assert.equal(operationOf(`/v2.0/routers/${id}/add_router_interface`), '/v2.0/routers/{id}/add_router_interface');
    assert.equal(operationOf('/v2.0/quotas/fake_project_id/details'), '/v2.0/quotas/{id}/details');
    assert.equal(operationOf(`/v2/lbaas/pools/${id}/members/${id}`), '/v2/lbaas/pools/{id}/members/{id}');
    assert.equal(operationOf(`/v2/lbaas/l7policies/${id}/rules`), '/v2/lbaas/l7policies/{id}/rules');
    assert.equal(
      operationOf('/v3/users/0123456789abcdef0123456789abcdef/application_credentials'),
      '/v3/users/{id}/application_credentials',
    );
    assert.equal(operationOf('/v3/auth/tokens'), '/v3/auth/tokens');
    assert.equal(operationOf('/'), '/');
  });

  it('lets nothing a user names through: numbers, names with capitals, escapes or `=`', () => {
    assert.equal(operationOf('/v2.0/ports/42'), '/v2.0/ports/{id}');
    assert.equal(operationOf('/v2.0/networks/My-Net'), '/v2.0/networks/{id}');
    assert.equal(operationOf('/v2.0/networks/a%2Fb'), '/v2.0/networks/{id}');
    assert.equal(operationOf('/v2.0/networks/k=v'), '/v2.0/networks/{id}');
    assert.equal(operationOf(`/v2.0/x/${'a'.repeat(60)}`), '/v2.0/x/{id}');
  });
});

/** The session's observers against the simulator over real HTTP (Keystone auth, fault rules for 503s). */
describe('OpenStackSession observers (simulator)', () => {
  let sim: RunningOpenStackSim;
  let cloud: CloudConfig;

  before(async () => {
    const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-observe-')), 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut });
    cloud = loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } });
  });
  after(() => sim.close());

  it("reports every attempt — the token request, retries, errors with Neutron's type — and stops when told", async () => {
    const samples: RequestSample[] = [];
    const session = new OpenStackSession({
      cloud,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      onRequest: (s) => samples.push(s),
    });
    const neutron = new NeutronClient(session);
    const network = await neutron.networks.create({ name: 'observed' });
    // Two 503s, then the GET goes through on its third attempt.
    await fetch(`${sim.url}/_sim/faults/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'GET', path: '/network/v2.0/networks/{id}', status: 503, count: 2 }),
    });
    await neutron.networks.get(network.id);
    await assert.rejects(neutron.ports.get('00000000-0000-4000-8000-000000000000'));
    await neutron.tags.add('networks', network.id, `raven.uid=${network.id}`);

    const brief = samples.map(
      (s) => `${s.service} ${s.method} ${s.operation} ${s.status} ${s.attempt}${s.errorType ? ` ${s.errorType}` : ''}`,
    );
    assert.deepEqual(brief, [
      'identity POST /v3/auth/tokens 201 1',
      'network POST /v2.0/networks 201 1',
      'network GET /v2.0/networks/{id} 503 1 HTTPServiceUnavailable',
      'network GET /v2.0/networks/{id} 503 2 HTTPServiceUnavailable',
      'network GET /v2.0/networks/{id} 200 3',
      'network GET /v2.0/ports/{id} 404 1 PortNotFound',
      'network PUT /v2.0/networks/{id}/tags/{tag} 201 1',
    ]);
    assert.ok(samples.every((s) => s.durationMs >= 0 && s.failure === undefined));
    assert.doesNotMatch(
      JSON.stringify(samples),
      new RegExp(`${network.id}|${sim.adminPassword}`),
      'an id or secret reached a sample',
    );

    // A second observer that throws breaks nothing; a removed one hears nothing more.
    const stop = session.observe(() => {
      throw new Error('observer bug');
    });
    await neutron.networks.get(network.id);
    stop();
    const count = samples.length;
    const stopOther = session.observe(() => assert.fail('removed observers are not called'));
    stopOther();
    await neutron.networks.get(network.id);
    assert.equal(samples.length, count + 1);
    await session.close();
  });

  it('reports a connection failure as status 0, `unreachable`, once per attempt', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const samples: RequestSample[] = [];
    const session = new OpenStackSession({
      cloud: {
        name: 'down',
        source: 'test',
        interface: 'public',
        endpointOverrides: { network: `http://127.0.0.1:${port}` },
        insecure: false,
        auth: { type: 'none' },
      },
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
      onRequest: (s) => samples.push(s),
    });
    await assert.rejects(
      new NeutronClient(session).networks.list(),
      (err: OpenStackError) => err.code === 'OPENSTACK_UNREACHABLE' && err.outage,
    );
    assert.deepEqual(
      samples.map((s) => [s.operation, s.status, s.failure, s.attempt]),
      [
        ['/v2.0/networks', 0, 'unreachable', 1],
        ['/v2.0/networks', 0, 'unreachable', 2],
      ],
    );
    await session.close();
  });
});
