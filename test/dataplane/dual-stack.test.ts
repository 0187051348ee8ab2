/**
 * Dual-stack with real packets: Raven with an IPv4 and an IPv6 range per namespace (strategy `namespace`), raven-cni
 * and the real Neutron dataplane (linuxbridge + L3 agents, scripts/dataplane/rig.sh). Each pod's port has an address
 * of each family; raven-cni plugs both (IPv6 without duplicate address detection) with a default route per family.
 * Pods reach each other over IPv6 on their namespace's network (the bridge) and across namespaces (the Neutron
 * router's IPv6 interfaces), and a NetworkPolicy is enforced on IPv6 as on IPv4 (the rules naming a pod group exist
 * per family). Every probe goes from one pod namespace made here to another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import { VIF_ANNOTATION, parseVif, type Pod } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  CONVERGE_MS,
  TEST_MS,
  pings,
  probeMany,
  readRig,
  skipWithoutRig,
  startDataplaneCluster,
  tcpHello,
  type DataplaneCluster,
} from '../support/dataplane.ts';
import { waitFor } from '../support/wait.ts';

interface DualPod {
  pod: Pod;
  netns: string;
  v4: string;
  v6: string;
}

/** The pod once plugged: Running with an address of each family, the ones its VIF names. */
async function running(cluster: DataplaneCluster, namespace: string, name: string): Promise<DualPod> {
  const pod = await waitFor(
    `pod ${namespace}/${name} running with two podIPs`,
    async () => {
      const p = await cluster.client.get(resources.pods, name, namespace);
      return p.status?.phase === 'Running' && p.status.podIPs?.length === 2 ? p : undefined;
    },
    { timeoutMs: CONVERGE_MS, intervalMs: 200, progress: cluster.progress },
  );
  const [v4, v6] = pod.status!.podIPs!.map((p) => p.ip);
  const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
  assert.deepEqual(
    vif?.ips.map((ip) => ip.address),
    [v4, v6],
  );
  assert.match(v6!, /^fd00:251:/);
  return { pod, netns: cluster.netnsOf(pod), v4: v4!, v6: v6! };
}

/** Ping, then TCP 8080 answered by the responder with its pod name, over IPv6 (and IPv4 once, as a control). */
async function reachesOverIpv6(from: DualPod, to: DualPod): Promise<void> {
  const what = `${from.pod.metadata.name} → ${to.pod.metadata.name}`;
  await waitFor(`ping ${what} over IPv6 (${to.v6})`, () => pings(from.netns, to.v6), {
    timeoutMs: CONVERGE_MS,
    intervalMs: 500,
  });
  assert.equal(await tcpHello(from.netns, to.v6), to.pod.metadata.name, `TCP ${what} over IPv6`);
  // IPv4's path is the agent's to wire too, on its own router interface: reached once it pings, as IPv6 above.
  await waitFor(`ping ${what} over IPv4 (${to.v4})`, () => pings(from.netns, to.v4), {
    timeoutMs: CONVERGE_MS,
    intervalMs: 500,
  });
  assert.equal(await tcpHello(from.netns, to.v4), to.pod.metadata.name, `TCP ${what} over IPv4`);
}

describe('dual-stack on the real dataplane: IPv6 between pods, routed and policed', { skip: skipWithoutRig }, () => {
  let cluster: DataplaneCluster;
  before(async () => {
    const rig = await readRig();
    cluster = await startDataplaneCluster(rig!, { strategy: 'namespace', dualStack: true });
    cluster.startRaven();
    await cluster.createNamespace('sky');
    await cluster.createNamespace('sea');
  });
  after(() => cluster?.stop());

  it(
    'pods reach each other over IPv6 on their network and across namespaces through the router',
    { timeout: TEST_MS },
    async () => {
      await Promise.all([
        cluster.createPod('sky', 'a', { labels: { app: 'web' } }),
        cluster.createPod('sky', 'b'),
        cluster.createPod('sea', 'c'),
      ]);
      const [a, b, c] = await Promise.all([
        running(cluster, 'sky', 'a'),
        running(cluster, 'sky', 'b'),
        running(cluster, 'sea', 'c'),
      ]);
      // Each namespace's network holds a subnet per family, the IPv6 one a /64 of the configured range.
      const port = await cluster.neutron.ports.get(parseVif(a.pod.metadata.annotations?.[VIF_ANNOTATION])!.portId);
      const subnets = await Promise.all(port.fixed_ips.map((f) => cluster.neutron.subnets.get(f.subnet_id)));
      assert.deepEqual(
        subnets.map((s) => [s.ip_version, s.cidr.split('/')[1]]),
        [
          [4, '24'],
          [6, '64'],
        ],
      );
      await reachesOverIpv6(b, a);
      await reachesOverIpv6(a, b);
      await reachesOverIpv6(c, a);
      await reachesOverIpv6(b, c);
    },
  );

  it('a NetworkPolicy admitting one pod is enforced over IPv6 as over IPv4', { timeout: TEST_MS }, async () => {
    const [a, b, c] = await Promise.all([
      running(cluster, 'sky', 'a'),
      running(cluster, 'sky', 'b'),
      running(cluster, 'sea', 'c'),
    ]);
    await cluster.createPod('sky', 'd', { labels: { role: 'client' } });
    const d = await running(cluster, 'sky', 'd');
    // a accepts TCP 8080 from `role=client` pods of its namespace only.
    await cluster.client.create(
      resources.networkpolicies,
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'web', namespace: 'sky' },
        spec: {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 8080 }] }],
        },
      },
      { namespace: 'sky' },
    );
    const probe = (from: DualPod) =>
      probeMany(
        from.netns,
        [a.v4, a.v6].map((address) => ({ protocol: 'TCP' as const, address, port: 8080 })),
        1.5,
      );
    const name = a.pod.metadata.name;
    // The agent applies the rules asynchronously: wait for the whole picture, then hold it for a second sweep.
    const enforced = async (): Promise<boolean> => {
      const [fromD, fromB, fromC] = await Promise.all([probe(d), probe(b), probe(c)]);
      return (
        fromD.every((answer) => answer === name) &&
        fromB.every((answer) => answer === undefined) &&
        fromC.every((answer) => answer === undefined)
      );
    };
    await waitFor('d admitted to a, b and c refused, over both families', enforced, {
      timeoutMs: CONVERGE_MS,
      intervalMs: 500,
    });
    assert.ok(await enforced(), 'the second sweep agrees');

    // Deleting the policy opens a again, over IPv6 too.
    await cluster.client.delete(resources.networkpolicies, 'web', 'sky');
    await waitFor('b reaches a over IPv6 again', async () => (await probe(b)).every((answer) => answer === name), {
      timeoutMs: CONVERGE_MS,
      intervalMs: 500,
    });
  });
});
