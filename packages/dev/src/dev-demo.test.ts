import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from '../../../test/support/node-test.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../../../src/openstack/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { demoSteps, demoSummary, demoTimeoutMessage, type DemoObservation } from './dev-demo.ts';
import { DEV_EXTERNAL_NETWORK, ensureDevExternalNetwork, withExternalNetwork } from './dev-network.ts';
import { runOpenStackSim } from './run-openstack-sim.ts';

const MINE = '6c1b1a2e-3f0e-4a5b-9c8d-7e6f5a4b3c2d';
const pod = (name: string, ip?: string) => ({
  name,
  phase: ip ? 'Running' : 'Pending',
  ip,
  node: 'node-1',
  portId: ip ? `port-${name}` : undefined,
});
const converged: DemoObservation = {
  pods: [pod('web-1', '10.244.0.2'), pod('web-2', '10.244.0.3'), pod('web-3', '10.244.0.4')],
  clusterIP: '10.96.0.10',
  ingress: ['203.0.113.20'],
  lb: { id: 'lb1', status: 'ACTIVE', vip: '10.96.0.10', members: ['10.244.0.2:80', '10.244.0.3:80', '10.244.0.4:80'] },
};

describe('raven dev --demo: steps, summary, timeout message', () => {
  it("steps in order: pods, load balancer, members (the pods' IPs), ingress only when expected", () => {
    assert.ok(demoSteps(converged, true).every((s) => s.done));
    assert.deepEqual(
      demoSteps(converged, false).map((s) => s.name),
      ['pods Running with IPs', 'load balancer ACTIVE', 'pool members'],
    );
    const early: DemoObservation = {
      pods: [pod('web-1', '10.244.0.2'), pod('web-2')],
      clusterIP: '10.96.0.10',
      ingress: [],
      lb: undefined,
    };
    assert.deepEqual(
      demoSteps(early, true).map((s) => [s.done, s.detail]),
      [
        [false, '1/3'],
        [false, 'none yet'],
        [false, '0/3'],
        [false, 'none yet'],
      ],
    );
    const stale = {
      ...converged,
      lb: { ...converged.lb!, members: ['10.244.0.2:80', '10.244.0.3:80', '10.244.0.9:80'] },
    };
    assert.equal(demoSteps(stale, true)[2]?.done, false, 'members must be the Running pods');
    const pending = { ...converged, lb: { ...converged.lb!, status: 'PENDING_UPDATE' } };
    assert.equal(demoSteps(pending, true)[1]?.detail, 'lb1 is PENDING_UPDATE');
  });
  it('the timeout message names the first missing step, how far it got and where to look', () => {
    const steps = demoSteps({ ...converged, ingress: [] }, true);
    const message = demoTimeoutMessage(steps, 60_000);
    assert.match(
      message,
      /^raven dev --demo: not converged after 60 s: missing ingress IP \(none yet\); look at: kubectl -n demo describe service web/,
    );
    assert.match(message, /raven dev keeps running\n$/);
  });
  it('the summary lists each pod (IP, node, port), the load balancer (id, VIP, members) and the ingress IP', () => {
    const text = demoSummary(converged, 2.34);
    assert.match(text, /^Demo ready in 2\.3 s: namespace demo, 3 pods, LoadBalancer service web\n/);
    assert.match(text, /pod web-2 +10\.244\.0\.3 +node node-1 +Neutron port port-web-2/);
    assert.match(text, /load balancer lb1 +ACTIVE +VIP 10\.96\.0\.10/);
    assert.match(text, /members 10\.244\.0\.2:80, 10\.244\.0\.3:80, 10\.244\.0\.4:80/);
    assert.match(text, /ingress 203\.0\.113\.20/);
  });
});

describe("raven dev: the simulator's external network", () => {
  it('is created once (TEST-NET-3), found again, and becomes the router gateway and floating IP network unless one is configured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-devnet-'));
    const cloudsYamlOut = join(dir, 'clouds.yaml');
    const sim = await runOpenStackSim({ port: 0, auth: 'keystone', cloudsYamlOut });
    const session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
    });
    try {
      const neutron = new NeutronClient(session);
      const id = await ensureDevExternalNetwork(neutron);
      assert.equal(await ensureDevExternalNetwork(neutron), id);
      const net = await neutron.networks.get(id);
      assert.deepEqual([net.name, net['router:external']], [DEV_EXTERNAL_NETWORK.name, true]);
      assert.deepEqual(
        (await neutron.subnets.list({ network_id: id })).map((s) => s.cidr),
        ['203.0.113.0/24'],
      );

      const base = loadRavenConfig({
        env: { RAVEN_CLUSTER_ID: 'dev', FLANNEL_NET: '10.244.0.0/16', RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12' },
      });
      const wired = withExternalNetwork(base, id);
      assert.deepEqual([wired.router.externalNetworkId, wired.floatingIpNetworkId], [id, id]);
      const own = loadRavenConfig({
        env: {
          RAVEN_CLUSTER_ID: 'dev',
          FLANNEL_NET: '10.244.0.0/16',
          RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
          RAVEN_FLOATING_IP_NETWORK_ID: MINE,
        },
      });
      assert.equal(withExternalNetwork(own, id), own, 'a configured network is kept');
      const router = loadRavenConfig({
        env: {
          RAVEN_CLUSTER_ID: 'dev',
          FLANNEL_NET: '10.244.0.0/16',
          RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
          RAVEN_ROUTER_ID: MINE,
        },
      });
      assert.deepEqual(
        [withExternalNetwork(router, id).router, withExternalNetwork(router, id).floatingIpNetworkId],
        [{ id: MINE, create: true }, id],
      );
    } finally {
      await session.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
