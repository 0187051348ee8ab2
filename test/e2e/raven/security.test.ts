/**
 * Issue 13's attacks, made by a namespace user — a ServiceAccount token whose RBAC allows writes to pods and services
 * in namespace `alice` and patches to that Namespace object, nothing else (the API server runs with RBAC on) —
 * against Raven (`composeRaven`, as `raven run` builds it, with admin rights) on the embedded API server and the
 * OpenStack simulator. Each test asserts the safe end state, and where the issue names one, the time to reach it.
 *
 * Where a step needs cloud access (a port or a floating IP made by hand), it is done with the test's admin session:
 * that is someone else's cloud resource, which the user then tries to claim from Kubernetes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject, Pod } from '../../../src/kube/api/index.ts';
import { isForbidden, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import {
  NETWORK_ANNOTATION,
  parseVif,
  POD_DEVICE_OWNER,
  podPortMark,
  VIF_ANNOTATION,
  type Vif,
} from '../../../src/reconcilers/index.ts';
import { ok } from '../../support/api.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, namespaceUser, podBody, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'sec';

describe('Raven under attack from a namespace user (issue 13)', { timeout: 240_000 }, () => {
  let env: Env;
  /** Mallory: may write pods and services in `alice` and patch that Namespace. */
  let user: KubeClient;
  let raven: ComposedRaven;
  let externalNetworkId: string;
  let stopRaven: () => Promise<void>;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    env = await startEnv(13_013, { authorizationMode: 'RBAC' });
    externalNetworkId = await ensureDevExternalNetwork(env.neutron);
    const config = loadRavenConfig({
      env: { ...ravenSettings(CLUSTER, 'namespace'), RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId },
      flags: { gc: { intervalSeconds: 1, graceSeconds: 0 }, loadBalancer: { pendingRequeueMs: 100 } },
    });
    ({ composed: raven, stop: stopRaven } = await composeInProcess(env, config));
    for (const name of ['alice', 'bob'])
      await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    user = await namespaceUser(env, 'alice', 'mallory');
    closers.push(() => user.close());
  });
  after(async () => {
    await stopRaven();
    for (const close of closers) await close();
    await env.stop();
  });

  const getPod = (ns: string, name: string) => env.client.get(resources.pods, name, ns);
  const vifOf = (pod: KubeObject) => parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
  const wired = (ns: string, name: string) =>
    waitFor(`${ns}/${name} wired`, async () => {
      const pod = await getPod(ns, name);
      const vif = vifOf(pod);
      return vif && vif.podUid === pod.metadata.uid ? { pod, vif } : undefined;
    });
  const reasons = async (ns: string, name: string) => {
    await raven.recorder.flush();
    const events = await env.client.list(resources.events, {
      namespace: ns,
      fieldSelector: `involvedObject.name=${name}`,
    });
    return events.items.map((e) => String((e as { reason?: string }).reason));
  };
  const annotate = (ns: string, name: string, value: string) =>
    user.patch(resources.pods, name, ns, { metadata: { annotations: { [VIF_ANNOTATION]: value } } }, 'merge');

  it("the user's token is a namespace user's: her namespace's pods, not bob's", async () => {
    await env.client.create(resources.pods, podBody('bob', 'victim'), { namespace: 'bob' });
    await assert.rejects(
      user.patch(resources.pods, 'victim', 'bob', { metadata: { labels: { x: 'y' } } }, 'merge'),
      (err: unknown) => isForbidden(err),
    );
    await assert.rejects(user.list(resources.pods, { namespace: 'bob' }), (err: unknown) => isForbidden(err));
  });
  const subnetOf = async (ns: string) => {
    const value = (await env.client.get(resources.namespaces, ns)).metadata.annotations?.[NETWORK_ANNOTATION];
    return waitFor(`${ns} network`, async () => {
      const current =
        value ?? (await env.client.get(resources.namespaces, ns)).metadata.annotations?.[NETWORK_ANNOTATION];
      return current ? (JSON.parse(current) as { networkId: string; subnetId: string; cidr: string }) : undefined;
    });
  };

  it("a forged VIF naming another namespace's pod port (her own pod's uid kept) is rewritten, with VifTampered", async () => {
    await user.create(resources.pods, podBody('alice', 'mallory'), { namespace: 'alice' });
    const victim = await wired('bob', 'victim');
    const mine = await wired('alice', 'mallory');
    const forged: Vif = { ...victim.vif, podUid: mine.pod.metadata.uid! };
    const started = Date.now();
    await annotate('alice', 'mallory', JSON.stringify(forged));
    const restored = await waitFor(
      'the forged VIF rewritten',
      async () => {
        const vif = vifOf(await getPod('alice', 'mallory'));
        return vif && vif.portId === mine.vif.portId ? vif : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    const tookMs = Date.now() - started;
    assert.deepEqual(restored, mine.vif, `rewritten to her own port's VIF (after ${tookMs} ms)`);
    assert.ok((await reasons('alice', 'mallory')).includes('VifTampered'));
    assert.deepEqual(vifOf(await getPod('bob', 'victim')), victim.vif, "the victim's VIF is untouched");
    const victimPort = await env.neutron.ports.get(victim.vif.portId);
    assert.equal(victimPort.device_id, victim.pod.metadata.uid, "the victim's port still names the victim");
  });

  it('a forged VIF copied whole from another pod (its uid too), or garbage, is rewritten', async () => {
    const victim = await wired('bob', 'victim');
    const mine = await wired('alice', 'mallory');
    for (const value of [JSON.stringify(victim.vif), 'not json', '']) {
      await annotate('alice', 'mallory', value);
      await waitFor(`${JSON.stringify(value)} rewritten`, async () => {
        const vif = vifOf(await getPod('alice', 'mallory'));
        return vif?.portId === mine.vif.portId && vif.podUid === mine.pod.metadata.uid;
      });
    }
  });

  it("a forged namespace annotation places no pod on another namespace's network", async () => {
    const bob = await subnetOf('bob');
    const alice = await subnetOf('alice');
    assert.notEqual(bob.networkId, alice.networkId);
    await user.patch(
      resources.namespaces,
      'alice',
      undefined,
      { metadata: { annotations: { [NETWORK_ANNOTATION]: JSON.stringify(bob) } } },
      'merge',
    );
    // At once, before Raven has restored it: the attack's window.
    const names = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
    await Promise.all(names.map((n) => user.create(resources.pods, podBody('alice', n), { namespace: 'alice' })));
    for (const n of names) {
      const { vif } = await wired('alice', n);
      assert.equal(vif.networkId, alice.networkId, `${n} is on bob's network`);
      const port = await env.neutron.ports.get(vif.portId);
      assert.equal(port.network_id, alice.networkId);
    }
    const onBob = (await env.neutron.ports.list({ network_id: bob.networkId, device_owner: POD_DEVICE_OWNER })).filter(
      (p) => p.name.startsWith(`raven/${CLUSTER}/alice/`),
    );
    assert.deepEqual(onBob, [], "alice's pods got ports on bob's network");
    await waitFor('the namespace annotation restored', async () => {
      const value = (await env.client.get(resources.namespaces, 'alice')).metadata.annotations?.[NETWORK_ANNOTATION];
      return value !== undefined && (JSON.parse(value) as { networkId: string }).networkId === alice.networkId;
    });
    await Promise.all(names.map((n) => user.delete(resources.pods, n, 'alice')));
  });

  it("a port someone made with a new pod's uid on the external network is not adopted; the pod gets its own", async () => {
    const pending = await env.client.create(
      resources.pods,
      { ...podBody('alice', 'squatted'), spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      { namespace: 'alice' },
    );
    const uid = pending.metadata.uid!;
    const squatter = await env.neutron.ports.create({
      network_id: externalNetworkId,
      name: `raven/${CLUSTER}/alice/squatted`,
      device_owner: POD_DEVICE_OWNER,
      device_id: uid,
    });
    // Scheduled only now, so the port was there before Raven looked.
    await ok(env.server, 'POST', '/api/v1/namespaces/alice/pods/squatted/binding', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'squatted' },
      target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
    });
    const { vif } = await wired('alice', 'squatted');
    const alice = await subnetOf('alice');
    assert.notEqual(vif.portId, squatter.id);
    assert.equal(vif.networkId, alice.networkId);
    const own = await env.neutron.ports.get(vif.portId);
    assert.deepEqual([[...own.tags].sort(), own.device_id], [[`raven.cluster=${CLUSTER}`, 'raven.kind=pod'], uid]);
    const left = await env.neutron.ports.get(squatter.id);
    assert.deepEqual([left.device_id, left.tags], [uid, []], "the squatter's port was adopted or changed");
    assert.ok((await reasons('alice', 'squatted')).includes('ForeignPort'));
    await env.client.delete(resources.pods, 'squatted', 'alice');
    await waitFor('her port gone', async () => (await env.neutron.ports.list({ id: vif.portId })).length === 0);
    assert.equal((await env.neutron.ports.list({ id: squatter.id })).length, 1, "the squatter's port was deleted");
    await env.neutron.ports.delete(squatter.id);
  });

  it("an unassociated floating IP someone else allocated is not taken by a Service's externalIPs", async () => {
    const theirs = await env.neutron.floatingIps.create({
      floating_network_id: externalNetworkId,
      floating_ip_address: '203.0.113.50',
      description: 'somebody else',
    });
    await user.create(
      resources.services,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'grab', namespace: 'alice' },
        spec: { selector: { app: 'x' }, ports: [{ port: 80 }], externalIPs: ['203.0.113.50'] },
      },
      { namespace: 'alice' },
    );
    await waitFor(
      'FloatingIpNotGranted',
      async () => (await reasons('alice', 'grab')).includes('FloatingIpNotGranted'),
      {
        timeoutMs: 20_000,
      },
    );
    const after = await env.neutron.floatingIps.get(theirs.id);
    assert.deepEqual([after.port_id, after.tags, after.description], [null, [], 'somebody else']);
    await user.delete(resources.services, 'grab', 'alice');
  });

  it('untagged look-alike ports are never deleted, by the pod reconciler or the garbage collector', async () => {
    const alice = await subnetOf('alice');
    const lookalike = await env.neutron.ports.create({
      network_id: alice.networkId,
      name: `raven/${CLUSTER}/alice/ghost`,
      device_owner: POD_DEVICE_OWNER,
      device_id: randomUUID(),
    });
    // A pod of that name comes and goes: its own port goes with it, the look-alike stays.
    await env.client.create(resources.pods, podBody('alice', 'ghost'), { namespace: 'alice' });
    const { vif } = await wired('alice', 'ghost');
    await env.client.delete(resources.pods, 'ghost', 'alice');
    await waitFor('the pod port gone', async () => (await env.neutron.ports.list({ id: vif.portId })).length === 0);
    const round = await raven.gc.round();
    assert.ok(
      round?.report.untagged.some((p) => p.id === lookalike.id),
      'the look-alike is reported',
    );
    assert.equal((await env.neutron.ports.list({ id: lookalike.id })).length, 1, 'the look-alike was deleted');
    await env.neutron.ports.delete(lookalike.id);
  });

  it('a pod with a 253-character name gets a port whose name fits Neutron, and its Events', async () => {
    const name = `p${'x'.repeat(251)}z`;
    const pod: Pod = await env.client.create(resources.pods, podBody('alice', name), { namespace: 'alice' });
    const { vif } = await wired('alice', name);
    const port = await env.neutron.ports.get(vif.portId);
    assert.ok(port.name.length <= 255, `port name of ${port.name.length} characters`);
    assert.deepEqual(
      [[...port.tags].sort(), port.device_id],
      [[`raven.cluster=${CLUSTER}`, 'raven.kind=pod'], pod.metadata.uid],
    );
    await waitFor('PortCreated on the pod', async () => (await reasons('alice', name)).includes('PortCreated'));
    await env.client.delete(resources.pods, name, 'alice');
    await waitFor('its port gone', async () => (await env.neutron.ports.list({ id: vif.portId })).length === 0);
  });

  it('a port Raven does not own on an orphan namespace network blocks its clean-up: counted and logged, never deleted', async () => {
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'carol' } });
    const carol = await subnetOf('carol');
    const vm = await env.neutron.ports.create({
      network_id: carol.networkId,
      name: 'a-vm',
      device_owner: 'compute:nova',
      device_id: randomUUID(),
    });
    await env.client.delete(resources.namespaces, 'carol');
    const metrics = async () => (await raven.metrics.registry.getSingleMetricAsString('raven_gc_blocked')).trim();
    await waitFor('raven_gc_blocked{resource="network"} 1', async () =>
      (await metrics()).includes('raven_gc_blocked{resource="network"} 1'),
    );
    const round = await raven.gc.round();
    assert.deepEqual(
      round?.report.blocked.map((b) => [b.id, b.blockingPort.id]),
      [[carol.networkId, vm.id]],
    );
    assert.equal((await env.neutron.networks.list({ id: carol.networkId })).length, 1);
    await env.neutron.ports.delete(vm.id);
    await waitFor(
      'the network goes once the port is gone',
      async () => (await env.neutron.networks.list({ id: carol.networkId })).length === 0,
    );
    await waitFor('raven_gc_blocked back to 0', async () =>
      (await metrics()).includes('raven_gc_blocked{resource="network"} 0'),
    );
  });

  it("a second port for a live pod, landing untagged after the record was loaded (a killed process's create), is adopted and deleted; the pod keeps its port", async () => {
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'erin' } });
    await env.client.create(resources.pods, podBody('erin', 'late'), { namespace: 'erin' });
    const { pod, vif } = await wired('erin', 'late');
    const late = await env.neutron.ports.create({
      network_id: vif.networkId,
      name: `raven/${CLUSTER}/erin/late`,
      description: podPortMark(CLUSTER),
      device_owner: POD_DEVICE_OWNER,
      device_id: pod.metadata.uid!,
    });
    await waitFor('the late port gone', async () => (await env.neutron.ports.list({ id: late.id })).length === 0);
    assert.equal(vifOf(await getPod('erin', 'late'))?.portId, vif.portId);
    assert.equal((await env.neutron.ports.get(vif.portId)).device_id, pod.metadata.uid);
  });

  it("an untagged port with Raven's mark (a refill between its bulk create and its tagging) is never reported as blocking, and is adopted past the grace period", async () => {
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dave' } });
    const dave = await subnetOf('dave');
    const inFlight = await env.neutron.ports.create({
      network_id: dave.networkId,
      name: `raven/${CLUSTER}/pool/node-1`,
      description: podPortMark(CLUSTER),
      device_owner: POD_DEVICE_OWNER,
      device_id: '',
    });
    await env.client.delete(resources.namespaces, 'dave');
    await waitFor('the namespace gone from the API', async () => {
      const all = (await env.client.listAll(resources.namespaces)).items;
      return !all.some((n) => n.metadata.name === 'dave');
    });
    const round = await raven.gc.round();
    assert.deepEqual(round?.report.blocked, [], 'a port of Raven reported as blocking');
    // Past the grace period (0 here) the collector adopts it (tags it as the cluster's): a port of a gone namespace's
    // network, so an orphan, deleted before the network — nothing leaked, nothing torn down under a port.
    await waitFor('the port adopted and deleted, then the network', async () => {
      const [ports, networks] = await Promise.all([
        env.neutron.ports.list({ id: inFlight.id }),
        env.neutron.networks.list({ id: dave.networkId }),
      ]);
      return ports.length === 0 && networks.length === 0;
    });
  });
});
