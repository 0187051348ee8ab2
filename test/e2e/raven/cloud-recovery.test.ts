/**
 * Issue 13's recovery from out-of-band changes on the OpenStack side: Raven (`composeRaven`, as `raven run` builds it)
 * against the embedded API server and the OpenStack simulator, with no periodic resync — only its garbage
 * collector's sweep (every second here) and the NotFound answers of Neutron tell it what is gone.
 *
 * - A namespace's network deleted by hand (ports, router interface, subnet, network) is rebuilt, on the CIDR it had,
 *   and its pods get ports with the addresses they had; a namespace subnet only detached from the router is attached
 *   again by the next sweep (nothing else tells: no port goes); so is the service subnet on the cluster router.
 * - The OpenStack side losing its state (the simulator restarted empty on the same port): the router, the networks
 *   and the ports are rebuilt, and the pods keep their addresses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { runOpenStackSim } from '@raven/dev';
import { NETWORK_ANNOTATION, parseVif, POD_DEVICE_OWNER, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, podBody, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'heal';

describe('Raven heals what was deleted behind its back on the OpenStack side', { timeout: 240_000 }, () => {
  let env: Env;
  let raven: ComposedRaven;
  let stopRaven: () => Promise<void>;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    env = await startEnv(14_014);
    const config = loadRavenConfig({
      env: ravenSettings(CLUSTER, 'namespace'),
      flags: { translations: { services: false }, gc: { intervalSeconds: 1, graceSeconds: 0 } },
    });
    ({ composed: raven, stop: stopRaven } = await composeInProcess(env, config));
    for (const name of ['north', 'south'])
      await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const [ns, name] of [
      ['north', 'a'],
      ['north', 'b'],
      ['south', 'c'],
    ] as const)
      await env.client.create(resources.pods, podBody(ns, name), { namespace: ns });
  });
  after(async () => {
    await stopRaven();
    for (const close of closers) await close();
    await env.stop();
  });

  /** Each pod's VIF address and port, once every pod has a VIF whose port Neutron has. */
  async function addresses(): Promise<Map<string, { ip: string; portId: string; networkId: string }>> {
    return waitFor(
      'every pod wired to a port Neutron has',
      async () => {
        const out = new Map<string, { ip: string; portId: string; networkId: string }>();
        for (const ns of ['north', 'south']) {
          for (const pod of (await env.client.list(resources.pods, { namespace: ns })).items) {
            const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
            if (!vif || vif.podUid !== pod.metadata.uid) return undefined;
            const [port] = await env.neutron.ports.list({ id: vif.portId });
            if (!port || port.device_id !== pod.metadata.uid) return undefined;
            out.set(`${ns}/${pod.metadata.name}`, {
              ip: vif.ips[0]!.address,
              portId: vif.portId,
              networkId: vif.networkId,
            });
          }
        }
        return out.size === 3 ? out : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  const networkOf = async (ns: string) =>
    JSON.parse((await env.client.get(resources.namespaces, ns)).metadata.annotations![NETWORK_ANNOTATION]!) as {
      networkId: string;
      subnetId: string;
      cidr: string;
    };

  it('a namespace network deleted by hand is rebuilt on its CIDR, and its pods keep their addresses', async () => {
    const before = await addresses();
    const north = await networkOf('north');
    const routerId = raven.cluster.current()!.routerId!;
    // What an operator would have to do to delete it: its ports, the router interface, the subnet, the network.
    for (const port of await env.neutron.ports.list({ network_id: north.networkId, device_owner: POD_DEVICE_OWNER }))
      await env.neutron.ports.delete(port.id);
    await env.neutron.routers.removeInterface(routerId, { subnetId: north.subnetId });
    await env.neutron.subnets.delete(north.subnetId);
    await env.neutron.networks.delete(north.networkId);

    const healed = await waitFor(
      'north rebuilt, its pods on it',
      async () => {
        const now = await addresses();
        return now.get('north/a')!.networkId !== north.networkId && now.get('north/b')!.networkId !== north.networkId
          ? now
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const rebuilt = await networkOf('north');
    assert.notEqual(rebuilt.networkId, north.networkId);
    assert.equal(rebuilt.cidr, north.cidr, 'the namespace got another CIDR');
    for (const key of ['north/a', 'north/b', 'south/c'])
      assert.equal(healed.get(key)!.ip, before.get(key)!.ip, `${key} changed its address`);
    assert.equal(healed.get('south/c')!.portId, before.get('south/c')!.portId, 'an untouched pod got a new port');
    const interfaces = await env.neutron.ports.list({ device_id: routerId, device_owner: 'network:router_interface' });
    assert.ok(
      interfaces.some((p) => p.fixed_ips.some((ip) => ip.subnet_id === rebuilt.subnetId)),
      'the rebuilt subnet is not on the router',
    );
  });

  it("a namespace subnet detached from the router by hand is attached again by the next sweep, its pods' ports untouched", async () => {
    const before = await addresses();
    const south = await networkOf('south');
    const routerId = raven.cluster.current()!.routerId!;
    const attached = async () =>
      (await env.neutron.ports.list({ device_id: routerId, device_owner: 'network:router_interface' })).some((p) =>
        p.fixed_ips.some((ip) => ip.subnet_id === south.subnetId),
      );
    // Nothing else changes: no port goes, so only the sweep's look at the router can tell.
    await env.neutron.routers.removeInterface(routerId, { subnetId: south.subnetId });
    assert.equal(await attached(), false);
    await waitFor('south attached to the router again', attached, { timeoutMs: 30_000, intervalMs: 200 });
    const now = await addresses();
    assert.equal(now.get('south/c')!.portId, before.get('south/c')!.portId, 'the pod got a new port');
    assert.equal((await networkOf('south')).networkId, south.networkId, 'the network was rebuilt');
  });

  it('the service subnet detached from the cluster router by hand is attached again by the next sweep', async () => {
    const { routerId, serviceSubnet } = raven.cluster.current()!;
    const subnetId = serviceSubnet!.subnetId;
    const attached = async () =>
      (await env.neutron.ports.list({ device_id: routerId!, device_owner: 'network:router_interface' })).some((p) =>
        p.fixed_ips.some((ip) => ip.subnet_id === subnetId),
      );
    assert.equal(await attached(), true);
    // No resync here, and nothing else tells: only the sweep's look at the router's interfaces can.
    await env.neutron.routers.removeInterface(routerId!, { subnetId });
    await waitFor('the service subnet attached to the cluster router again', attached, {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
  });

  it('the OpenStack side losing its state: the router, the networks and the ports are rebuilt, pods keep their addresses', async () => {
    const before = await addresses();
    const routerBefore = raven.cluster.current()!.routerId;
    const { url, adminPassword } = env.sim;
    const port = Number(new URL(url).port);
    await env.sim.close();
    const fresh = await runOpenStackSim({ port, auth: 'keystone', password: adminPassword, seed: 77 });
    closers.unshift(() => fresh.close());
    // The test's own session re-authenticates against the new Keystone, as Raven's does.
    const oldPorts = new Set([...before.values()].map((p) => p.portId));
    const healed = await waitFor(
      'everything rebuilt',
      async () => {
        const now = await addresses().catch(() => undefined);
        return now && [...now.values()].every((p) => !oldPorts.has(p.portId)) ? now : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    for (const [key, { ip }] of before) assert.equal(healed.get(key)!.ip, ip, `${key} changed its address`);
    const routerAfter = raven.cluster.current()!.routerId;
    assert.ok(routerAfter && routerAfter !== routerBefore, 'the router was not rebuilt');
    assert.equal((await env.neutron.routers.list({ id: routerAfter })).length, 1);
    for (const ns of ['north', 'south']) {
      const info = await networkOf(ns);
      assert.equal((await env.neutron.networks.list({ id: info.networkId })).length, 1, `${ns} has no network`);
    }
  });
});
