import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '../../test/support/openstack-sim.ts';
import { FakeClock } from '../core/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession, type RequestSample } from '../openstack/index.ts';
import { OpenStackReadiness } from './openstack-readiness.ts';

describe('OpenStackReadiness against the OpenStack simulator', () => {
  let sim: RunningOpenStackSim;
  let session: OpenStackSession;
  let neutron: NeutronClient;
  let dir: string;
  const samples: RequestSample[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-readiness-'));
    const cloudsYamlOut = join(dir, 'clouds.yaml');
    sim = await runOpenStackSim({ port: 0, auth: 'noauth', cloudsYamlOut });
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim-noauth', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
      retry: { maxAttempts: 1 },
      onRequest: (s) => samples.push(s),
    });
    neutron = new NeutronClient(session);
  });
  after(async () => {
    await session.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every Neutron request fails with `status` until healed. */
  const fail = async (status: number) => {
    const res = await fetch(`${sim.url}/_sim/faults/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/network/', status }),
    });
    assert.ok(res.ok, await res.text());
  };
  const heal = async () => void (await (await fetch(`${sim.url}/_sim/faults/rules`, { method: 'DELETE' })).text());
  const probes = () => samples.filter((s) => s.operation === '/v2.0/networks').length;

  function readiness() {
    const clock = new FakeClock(Date.now());
    const r = new OpenStackReadiness({ neutron, unreadyAfterMs: 30_000, clock });
    const stop = session.observe(r.observe);
    return { r, clock, stop };
  }

  it('probes only when no call answered for 10 s, and at most every 10 s', async () => {
    const { r, clock, stop } = readiness();
    const before = probes();
    assert.equal(await r.check(), undefined);
    assert.equal(probes(), before + 1, 'nothing answered yet: one probe');
    assert.equal(await r.check(), undefined);
    clock.advance(9_000);
    await neutron.ports.list();
    clock.advance(9_000);
    assert.equal(await r.check(), undefined);
    assert.equal(probes(), before + 1, 'a port list answered 9 s ago: no probe');
    clock.advance(1_000);
    assert.equal(await r.check(), undefined);
    assert.equal(probes(), before + 2, 'nothing for 10 s: a probe');
    stop();
  });

  it('is unready until OpenStack has answered once', async () => {
    const { r, clock, stop } = readiness();
    await fail(503);
    try {
      assert.match((await r.check()) ?? '', /^OpenStack has not answered yet \(Neutron: .*503/);
      clock.advance(10_000);
      assert.match((await r.check()) ?? '', /^OpenStack has not answered yet/);
    } finally {
      await heal();
    }
    clock.advance(10_000);
    assert.equal(await r.check(), undefined, 'the next probe answered');
    stop();
  });

  it('then unready once every call (the probes too) has failed for unreadyAfterMs; a 404 is an answer', async () => {
    const { r, clock, stop } = readiness();
    await neutron.ports.list();
    await fail(500);
    try {
      await assert.rejects(neutron.ports.list());
      clock.advance(20_000);
      assert.equal(await r.check(), undefined, 'failing for 20 s (the probe too): still ready');
      clock.advance(9_000);
      await assert.rejects(neutron.subnets.list());
      clock.advance(1_000);
      assert.equal(
        await r.check(),
        'every OpenStack call has failed for 30.0 s (last: network GET /v2.0/networks: 500)',
        'the probe due at 30 s failed too',
      );
    } finally {
      await heal();
    }
    await assert.rejects(neutron.ports.get('00000000-0000-0000-0000-000000000000'));
    assert.equal(await r.check(), undefined, 'a 404 is the cloud answering');
    stop();
  });
});
