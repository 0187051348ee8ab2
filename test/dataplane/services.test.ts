/**
 * Services with real packets (issue 27): Raven translates each Service into an Octavia load balancer of the rig's
 * provider (the OVN rig: Octavia's `ovn` provider, so OVN's own load balancer in the pods' logical switches and
 * router), and pods reach the members through the clusterIP. Every Service with a clusterIP gets one here
 * (`emulateKubeProxy`): there is no kube-proxy on the rig. Probes go from pod namespaces made here to the clusterIP;
 * the responder of the member that answers says its pod name. Skipped on a rig without Octavia (linuxbridge).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { NetworkPolicy, Pod, Service } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  CONVERGE_MS,
  TEST_MS,
  probeMany,
  readRig,
  skipWithoutOctavia,
  startDataplaneCluster,
  type DataplaneCluster,
  type ProbeTarget,
} from '../support/dataplane.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'web';
const FAR = 'far';
/** Both protocols on one Service, as named ports of the pods' responder (TCP and UDP 8080). */
const PORTS = [
  { name: 'tcp', containerPort: 8080, protocol: 'TCP' as const },
  { name: 'udp', containerPort: 8080, protocol: 'UDP' as const },
];
/** A probe that gets no answer in this time counts as denied. */
const PROBE_SECONDS = 1.5;
/** Probes per round: each from its own source port, so SOURCE_IP_PORT spreads them over the members. */
const ROUND = 8;

describe(
  'Services on the real dataplane: pods reach the members through the clusterIP',
  { skip: skipWithoutOctavia },
  () => {
    let cluster: DataplaneCluster;
    const pods = new Map<string, Pod & { netns: string; ip: string }>();
    let clusterIP = '';

    async function running(namespace: string, name: string): Promise<Pod & { netns: string; ip: string }> {
      const pod = await waitFor(
        `pod ${namespace}/${name} running with an IP`,
        async () => {
          const p = await cluster.client.get(resources.pods, name, namespace);
          const ip = p.status?.podIP;
          return p.status?.phase === 'Running' && ip ? { ...p, ip, netns: cluster.netnsOf(p) } : undefined;
        },
        { timeoutMs: CONVERGE_MS, intervalMs: 250, progress: cluster.progress },
      );
      pods.set(`${namespace}/${name}`, pod);
      return pod;
    }

    /** One round of probes from a pod to the clusterIP: who answered each (undefined: nothing within the bound). */
    function round(from: string, protocol: 'TCP' | 'UDP'): Promise<(string | undefined)[]> {
      const target: ProbeTarget = { protocol, address: clusterIP, port: 80 };
      return probeMany(pods.get(from)!.netns, Array<ProbeTarget>(ROUND).fill(target), PROBE_SECONDS);
    }

    /**
     * Waits until two rounds in a row from `from` give exactly `want` for `protocol`: the set of members that answered
     * (every probe answered), or nothing at all (every probe unanswered). Bounded; the failure names what was seen.
     */
    async function settles(from: string, protocol: 'TCP' | 'UDP', want: readonly string[], timeoutMs = CONVERGE_MS) {
      const key = (answers: (string | undefined)[]) =>
        answers.includes(undefined) && answers.some((a) => a !== undefined)
          ? `mixed ${JSON.stringify(answers)}`
          : [...new Set(answers.filter((a) => a !== undefined))].sort().join(',');
      const expected = [...want].sort().join(',');
      let agreeing = 0;
      let last = '';
      await waitFor(
        `${protocol} ${from} → ${clusterIP}:80 answered by [${expected}] (last seen: ${last || 'nothing yet'})`,
        async () => {
          last = key(await round(from, protocol));
          agreeing = last === expected ? agreeing + 1 : 0;
          return agreeing >= 2;
        },
        { timeoutMs, intervalMs: 200 },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; last round: ${last || '(no answer)'}`, { cause: err });
      });
    }

    before(async () => {
      const rig = await readRig();
      cluster = await startDataplaneCluster(rig!, { strategy: 'namespace', services: true });
      cluster.startRaven();
      await cluster.createNamespace(NS);
      await cluster.createNamespace(FAR);
      await Promise.all([
        cluster.createPod(NS, 'w1', { labels: { app: 'web' }, ports: PORTS }),
        cluster.createPod(NS, 'w2', { labels: { app: 'web' }, ports: PORTS }),
        cluster.createPod(NS, 'client', { labels: { role: 'client' } }),
        cluster.createPod(NS, 'stranger', { labels: { role: 'stranger' } }),
        cluster.createPod(FAR, 'remote', { labels: { role: 'client' } }),
      ]);
      await Promise.all([
        running(NS, 'w1'),
        running(NS, 'w2'),
        running(NS, 'client'),
        running(NS, 'stranger'),
        running(FAR, 'remote'),
      ]);
      const svc = await cluster.client.create(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: {
          selector: { app: 'web' },
          ports: [
            { name: 'tcp', port: 80, targetPort: 'tcp', protocol: 'TCP' },
            { name: 'udp', port: 80, targetPort: 'udp', protocol: 'UDP' },
          ],
        },
      } satisfies Service);
      clusterIP = svc.spec?.clusterIP ?? '';
      assert.ok(clusterIP, 'the API server gave the Service a clusterIP');
    });
    after(() => cluster?.stop());

    it(
      'TCP and UDP through the clusterIP reach both members, from the namespace and across the router',
      { timeout: TEST_MS },
      async () => {
        await waitFor(
          `Service ${NS}/web: Raven's load balancer ACTIVE with both members`,
          async () => {
            const lbs = await cluster.octavia!.loadBalancers.list({ name: `raven/${cluster.clusterId}/${NS}/web` });
            return lbs.length === 1 && lbs[0]!.provisioning_status === 'ACTIVE' && lbs[0]!.vip_address === clusterIP;
          },
          // no `progress`: Raven retrying a refused create moves it too
          { timeoutMs: CONVERGE_MS * 2, intervalMs: 1000 },
        );
        const both = ['w1', 'w2'];
        for (const from of [`${NS}/client`, `${FAR}/remote`]) {
          await settles(from, 'TCP', both);
          await settles(from, 'UDP', both);
        }
      },
    );

    it('a member deleted stops receiving: only the other answers', { timeout: TEST_MS }, async () => {
      await cluster.client.delete(resources.pods, 'w2', NS, { gracePeriodSeconds: 0 });
      await settles(`${NS}/client`, 'TCP', ['w1']);
      await settles(`${NS}/client`, 'UDP', ['w1']);
    });

    it(
      'a NetworkPolicy isolating the members admits only the allowed clients through the clusterIP',
      { timeout: TEST_MS },
      async () => {
        const allowClients: NetworkPolicy = {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'web-from-clients', namespace: NS },
          spec: {
            podSelector: { matchLabels: { app: 'web' } },
            policyTypes: ['Ingress'],
            ingress: [
              {
                from: [{ podSelector: { matchLabels: { role: 'client' } } }],
                ports: [
                  { protocol: 'TCP', port: 8080 },
                  { protocol: 'UDP', port: 8080 },
                ],
              },
            ],
          },
        };
        await cluster.client.create(resources.networkpolicies, allowClients);
        // The OVN provider keeps the client's address: the members' security groups decide, pod by pod.
        for (const protocol of ['TCP', 'UDP'] as const) {
          await settles(`${NS}/client`, protocol, ['w1']);
          await settles(`${NS}/stranger`, protocol, []);
          // another namespace's pod labelled role=client is not selected (a podSelector alone means this namespace)
          await settles(`${FAR}/remote`, protocol, []);
        }
        await cluster.client.delete(resources.networkpolicies, 'web-from-clients', NS);
        await settles(`${NS}/stranger`, 'TCP', ['w1']);
        await settles(`${FAR}/remote`, 'UDP', ['w1']);
      },
    );

    it(
      'the Service deleted: its load balancer and the VIP port the provider made are gone',
      { timeout: TEST_MS },
      async () => {
        const [lb] = await cluster.octavia!.loadBalancers.list({ name: `raven/${cluster.clusterId}/${NS}/web` });
        assert.ok(lb, 'the load balancer is there before');
        await cluster.client.delete(resources.services, 'web', NS);
        await waitFor(
          `load balancer ${lb.id} and its VIP port ${lb.vip_port_id} deleted`,
          async () => {
            const lbs = await cluster.octavia!.loadBalancers.list({ name: lb.name });
            // on this cluster's service network (another cluster's may hold the same clusterIP)
            const ports = await cluster.neutron.ports.list({
              network_id: lb.vip_network_id,
              fixed_ips: { ip_address: clusterIP },
            });
            return lbs.length === 0 && ports.length === 0;
          },
          { timeoutMs: CONVERGE_MS, intervalMs: 1000, progress: cluster.progress },
        );
      },
    );
  },
);
