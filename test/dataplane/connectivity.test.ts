/**
 * test/dataplane: real packets. Raven, `raven-cni` and the real Neutron dataplane (neutron-server with ML2
 * linuxbridge + l2population, the linuxbridge and L3 agents: scripts/dataplane/rig.sh), pods as network namespaces
 * plugged by the plugin exactly as a container runtime does. Run by `npm run test:dataplane` (root); skipped
 * otherwise. Every probe goes from one pod namespace made here to another; nothing routes from the root namespace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import { VIF_ANNOTATION, formatVif, parseVif, type Pod } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  CONVERGE_MS,
  TEST_MS,
  inPod,
  netnsNames,
  ovsPorts,
  pings,
  readRig,
  rootDevices,
  skipWithoutRig,
  startDataplaneCluster,
  tcpHello,
  type DataplaneCluster,
} from '../support/dataplane.ts';
import { waitFor } from '../support/wait.ts';

/** The pod once the runtime plugged it: Running with the IP of its CNI result. */
async function running(cluster: DataplaneCluster, namespace: string, name: string): Promise<Pod & { ip: string }> {
  return waitFor(
    `pod ${namespace}/${name} running with an IP`,
    async () => {
      const pod = await cluster.client.get(resources.pods, name, namespace);
      const ip = pod.status?.podIP;
      return pod.status?.phase === 'Running' && ip ? { ...pod, ip } : undefined;
    },
    { timeoutMs: CONVERGE_MS, intervalMs: 200, progress: cluster.progress },
  );
}

async function reaches(cluster: DataplaneCluster, from: Pod, to: Pod & { ip: string }): Promise<void> {
  const netns = cluster.netnsOf(from);
  const what = `${from.metadata.namespace}/${from.metadata.name} → ${to.metadata.namespace}/${to.metadata.name}`;
  await waitFor(`ping ${what} (${to.ip})`, () => pings(netns, to.ip), { timeoutMs: CONVERGE_MS, intervalMs: 500 });
  assert.equal(await tcpHello(netns, to.ip), to.metadata.name, `TCP ${what}: the responder answers with its name`);
}

/** Sandboxes, devices and namespaces of this test: none may outlive it. */
async function assertNothingLeftOnNode(pods: readonly Pod[], cluster: DataplaneCluster): Promise<void> {
  const netns = new Set(pods.map((p) => cluster.netnsOf(p)));
  assert.deepEqual(
    (await netnsNames(cluster.rig.netnsPrefix)).filter((n) => netns.has(n)),
    [],
  );
  // A pool port goes back to its pool with the old pod's device_id, and a pod given it again may be plugged (on its
  // signed VIF) before the claim rewrites it: a port a live pod's VIF names is that pod's now, not a leftover.
  const live = (await cluster.client.list<Pod>(resources.pods)).items;
  const named = new Set(live.map((p) => parseVif(p.metadata.annotations?.[VIF_ANNOTATION])?.portId));
  const ports = (await cluster.neutron.ports.list({})).filter(
    (p) => pods.some((pod) => p.device_id === pod.metadata.uid) && !named.has(p.id),
  );
  const prefix = cluster.rig.interfacePrefix;
  const taps = new Set(ports.map((p) => `${prefix}${p.id.slice(0, 11)}`));
  assert.deepEqual(
    (await rootDevices([prefix])).filter((d) => taps.has(d)),
    [],
  );
  assert.deepEqual(
    (await ovsPorts(cluster.rig)).filter((p) => taps.has(p)),
    [],
    'DEL removed the OVS ports',
  );
}

describe(
  'the real dataplane, namespace strategy (a network per namespace, one router)',
  { skip: skipWithoutRig },
  () => {
    let cluster: DataplaneCluster;
    before(async () => {
      const rig = await readRig();
      // raven-cni forwards to `raven node` here; the shared-strategy cluster below runs it standalone.
      cluster = await startDataplaneCluster(rig!, { strategy: 'namespace', nodeDaemon: true });
      cluster.startRaven();
      await cluster.createNamespace('blue');
      await cluster.createNamespace('green');
    });
    after(() => cluster?.stop());

    it(
      'pods in one namespace reach each other (ICMP and TCP); across namespaces through the Neutron router',
      { timeout: TEST_MS },
      async () => {
        await Promise.all([
          cluster.createPod('blue', 'a'),
          cluster.createPod('blue', 'b'),
          cluster.createPod('green', 'c'),
        ]);
        const [a, b, c] = await Promise.all([
          running(cluster, 'blue', 'a'),
          running(cluster, 'blue', 'b'),
          running(cluster, 'green', 'c'),
        ]);
        const vifA = parseVif(a.metadata.annotations?.[VIF_ANNOTATION]);
        assert.equal(vifA?.ips[0]?.address, a.ip, 'status.podIP is the address of the port Raven made');
        // Raven signs VIFs here: raven-cni plugged every pod on the signature, with no Neutron read.
        for (const key of ['blue/a', 'blue/b', 'green/c']) {
          const logs =
            cluster.runtime
              .addOf(key)
              ?.logs.map((l) => l.stderr)
              .join('\n') ?? '';
          assert.match(logs, /"verifiedBy":"signature"/, `${key}'s ADD: ${logs.slice(-600)}`);
        }
        // The NetworkPolicy translation is on (the default): every pod's port carries Raven's two open groups, never
        // Neutron's project `default` group, and traffic below passes through them on the agent's firewall.
        const port = await cluster.neutron.ports.get(vifA?.portId ?? '');
        const groups = await cluster.neutron.securityGroups.list({ tags: [`raven.cluster=${cluster.clusterId}`] });
        const names = (port.security_groups ?? []).map((id) => groups.find((g) => g.id === id)?.name ?? id).sort();
        assert.deepEqual(names, [
          `raven/${cluster.clusterId}/sg/open-egress`,
          `raven/${cluster.clusterId}/sg/open-ingress`,
        ]);
        await reaches(cluster, a, b);
        await reaches(cluster, b, a);
        await reaches(cluster, a, c);
        await reaches(cluster, c, b);
      },
    );

    it('a deleted and re-created pod of the same name gets working networking', { timeout: TEST_MS }, async () => {
      const old = await running(cluster, 'blue', 'b');
      await cluster.client.delete(resources.pods, 'b', 'blue', { gracePeriodSeconds: 0 });
      await waitFor('old sandbox gone', async () => !(await netnsNames(cluster.netnsOf(old))).length, {
        timeoutMs: CONVERGE_MS,
      });
      await cluster.createPod('blue', 'b');
      const fresh = await running(cluster, 'blue', 'b');
      assert.notEqual(fresh.metadata.uid, old.metadata.uid);
      await reaches(cluster, await running(cluster, 'blue', 'a'), fresh);
      await assertNothingLeftOnNode([old], cluster);
    });

    it('after a Raven restart existing pods keep working and new ones are wired', { timeout: TEST_MS }, async () => {
      await cluster.stopRaven();
      const a = await running(cluster, 'blue', 'a');
      const c = await running(cluster, 'green', 'c');
      await reaches(cluster, a, c);
      cluster.startRaven();
      await cluster.createPod('green', 'd');
      const d = await running(cluster, 'green', 'd');
      await reaches(cluster, d, a);
      await reaches(cluster, c, d);
    });

    it(
      'a forged VIF annotation (another pod’s port) makes ADD fail with the reason, and harms nobody',
      { timeout: TEST_MS },
      async () => {
        const victim = await running(cluster, 'blue', 'a');
        const vif = parseVif(victim.metadata.annotations?.[VIF_ANNOTATION]);
        assert.ok(vif);
        // Raven is stopped so that the forgery is what the plugin sees (Raven's own rewrite is another test's business).
        await cluster.stopRaven();
        try {
          const forger = await cluster.createPod('green', 'forger');
          await cluster.client.patch(
            resources.pods,
            'forger',
            'green',
            {
              metadata: { annotations: { [VIF_ANNOTATION]: formatVif({ ...vif, podUid: forger.metadata.uid ?? '' }) } },
            },
            'merge',
          );
          const event = await waitFor(
            'a FailedCreatePodSandBox Event on the forger',
            async () =>
              (await cluster.client.list(resources.events, { namespace: 'green' })).items.find(
                (e) => e.involvedObject?.name === 'forger' && e.reason === 'FailedCreatePodSandBox',
              ),
            { timeoutMs: CONVERGE_MS },
          );
          assert.match(
            event.message ?? '',
            new RegExp(`port ${vif.portId} belongs to device "${victim.metadata.uid}"`),
          );
          const forgerPod = await cluster.client.get(resources.pods, 'forger', 'green');
          assert.equal(forgerPod.status?.podIP, undefined, 'the forger never got an address');
          await reaches(cluster, await running(cluster, 'green', 'c'), victim);
          await cluster.client.delete(resources.pods, 'forger', 'green', { gracePeriodSeconds: 0 });
        } finally {
          cluster.startRaven();
        }
      },
    );

    it('deleting pods leaves no namespace and no device behind', { timeout: TEST_MS }, async () => {
      const pods = await Promise.all([running(cluster, 'blue', 'a'), running(cluster, 'green', 'd')]);
      for (const pod of pods)
        await cluster.client.delete(resources.pods, pod.metadata.name ?? '', pod.metadata.namespace, {
          gracePeriodSeconds: 0,
        });
      await waitFor(
        'sandboxes gone',
        async () =>
          (await netnsNames(cluster.rig.netnsPrefix)).every((n) => !pods.some((p) => cluster.netnsOf(p) === n)),
        { timeoutMs: CONVERGE_MS },
      );
      await assertNothingLeftOnNode(pods, cluster);
    });
  },
);

describe(
  'the real dataplane, shared strategy, raven-cni standalone with a stock plugin chained',
  { skip: skipWithoutRig },
  () => {
    let cluster: DataplaneCluster;
    before(async () => {
      const rig = await readRig();
      // Debian's `tuning` plugin after raven-cni: it reads raven-cni's result and sets a sysctl in the pod's namespace.
      cluster = await startDataplaneCluster(rig!, {
        strategy: 'shared',
        chain: [{ type: 'tuning', sysctl: { 'net.ipv4.conf.eth0.arp_notify': '1' } }],
      });
      cluster.startRaven();
      await cluster.createNamespace('red');
      await cluster.createNamespace('yellow');
    });
    after(() => cluster?.stop());

    it(
      'pods in two namespaces reach each other on the one pod subnet; the chained plugin did its part',
      { timeout: TEST_MS },
      async () => {
        await Promise.all([cluster.createPod('red', 'p'), cluster.createPod('yellow', 'q')]);
        const [p, q] = await Promise.all([running(cluster, 'red', 'p'), running(cluster, 'yellow', 'q')]);
        const [vifP, vifQ] = [p, q].map((pod) => parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]));
        assert.equal(vifP?.subnetId, vifQ?.subnetId, 'one shared subnet');
        await reaches(cluster, p, q);
        await reaches(cluster, q, p);
        const sysctl = await inPod(cluster.netnsOf(p), 'sysctl', '-n', 'net.ipv4.conf.eth0.arp_notify');
        assert.equal(sysctl, '1');
      },
    );
  },
);
