/**
 * Issue 5 "How it is proven": the whole daemon (`runRaven`) with the cluster simulator against the embedded API server
 * and the OpenStack simulator — every row of the translation table (docs/translation.md), in both subnet strategies and
 * both service
 * modes, asserted on the resulting state through the Kubernetes and the OpenStack APIs; then deleting everything
 * leaves nothing tagged for the cluster but its cluster-level network.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';
import { after, before, describe, it } from '../../support/node-test.ts';
import { silentLogger } from '../../../src/core/index.ts';
import { ClusterSimulator } from '@raven/cluster-sim';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { SharedInformerFactory } from '../../../src/kube/cache/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { OctaviaClient, provisioningState, type Port } from '../../../src/openstack/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { runRaven } from '../../../src/daemon/run-raven.ts';
import { NETWORK_ANNOTATION, ownerOf, parseVif, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { newKubeClient, newSession, ravenSettings, startEnv, type Env } from './support.ts';

const EXTERNAL_IP = '203.0.113.77';
const ravenBin = new URL('../../../bin/raven.js', import.meta.url).pathname;

interface Scenario {
  strategy: 'shared' | 'namespace';
  emulateKubeProxy: boolean;
}

const scenarios: Scenario[] = [
  { strategy: 'shared', emulateKubeProxy: false },
  { strategy: 'namespace', emulateKubeProxy: true },
];

const webPod = (ns: string, name: string, app: string, hostNetwork = false): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app } },
  spec: { hostNetwork, containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

const service = (ns: string, name: string, app: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 'http' }], ...spec },
});

/** Whether `ip` lies in `cidr` (ipaddr.js, as Raven's own IPv4 code uses). */
const ipv4InCidr = (ip: string, cidr: string): boolean => ipaddr.IPv4.parse(ip).match(ipaddr.IPv4.parseCIDR(cidr));

describe(
  'Raven end to end: the translation table, both subnet strategies, both service modes',
  { timeout: 180_000 },
  () => {
    let env: Env;
    let octavia: OctaviaClient;
    let externalNetworkId: string;

    before(async () => {
      env = await startEnv(5_050);
      octavia = new OctaviaClient(env.session);
      externalNetworkId = await ensureDevExternalNetwork(env.neutron);
    });
    after(async () => {
      await env.stop();
    });

    /** Every cloud resource tagged for `clusterId`, by kind of owner, as `<what> <name>`. */
    async function tagged(clusterId: string): Promise<Map<string, string[]>> {
      const tag = `raven.cluster=${clusterId}`;
      const out = new Map<string, string[]>();
      const add = (what: string, items: readonly { name?: string; tags?: readonly string[] }[]) => {
        for (const item of items) {
          const kind = ownerOf(item.tags)?.kind ?? '?';
          out.set(kind, [...(out.get(kind) ?? []), `${what} ${item.name ?? ''}`]);
        }
      };
      add('port', await env.neutron.ports.list({ tags: tag }));
      add('network', await env.neutron.networks.list({ tags: tag }));
      add('subnet', await env.neutron.subnets.list({ tags: tag }));
      add('router', await env.neutron.routers.list({ tags: tag }));
      add(
        'floatingip',
        (await env.neutron.floatingIps.list({ tags: tag })).map((f) => ({ name: f.floating_ip_address, tags: f.tags })),
      );
      add('loadbalancer', await octavia.loadBalancers.list({ tags: [tag] }));
      return out;
    }

    /** Raven (`runRaven`) and the cluster simulator, in this process, until the returned stop(). */
    function startCluster(
      clusterId: string,
      strategy: Scenario['strategy'],
      emulateKubeProxy: boolean,
    ): { stop(): Promise<void> } {
      const config = loadRavenConfig({
        env: {
          ...ravenSettings(clusterId, strategy),
          RAVEN_EMULATE_KUBE_PROXY: String(emulateKubeProxy),
          RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
          // A pool no pod uses is emptied after 1 s: "back to nothing" then holds for pod ports too.
          RAVEN_PORT_POOL_IDLE_SECONDS: '1',
          // Nor is a floating IP held for its Service's name once it is gone: "back to nothing" is checked at once.
          RAVEN_FLOATING_IP_QUARANTINE_SECONDS: '0',
        },
        flags: { loadBalancer: { pendingRequeueMs: 200 }, gc: { intervalSeconds: 2 } },
      });
      const ravenClient = newKubeClient(env.server);
      const simClient = newKubeClient(env.server);
      const session = newSession(env.cloudsYaml);
      const abort = new AbortController();
      const raven = runRaven({ config, logger: silentLogger, client: ravenClient, session }, abort.signal);
      const connection = {
        server: env.server.url,
        ca: env.server.caPem,
        credentials: () => Promise.resolve({ kind: 'bearer' as const, token: env.server.token }),
        source: 'test',
      };
      const cluster = new ClusterSimulator({
        client: simClient,
        connection,
        informers: new SharedInformerFactory({ client: simClient }),
        logger: silentLogger,
        deleteGraceMs: 200,
      });
      const clusterRun = cluster.run(abort.signal);
      return {
        async stop() {
          abort.abort();
          await Promise.allSettled([raven, clusterRun]);
          await Promise.all([ravenClient.close(), simClient.close(), session.close()]);
        },
      };
    }

    /** `raven plan` as a user runs it, with the settings `startCluster` gave Raven. */
    async function ravenPlan(clusterId: string, strategy: Scenario['strategy'], emulateKubeProxy: boolean) {
      const childEnv: NodeJS.ProcessEnv = {
        ...process.env,
        ...ravenSettings(clusterId, strategy),
        RAVEN_EMULATE_KUBE_PROXY: String(emulateKubeProxy),
        RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
        OS_CLIENT_CONFIG_FILE: env.cloudsYaml,
        OS_CLOUD: 'raven-sim',
        KUBECONFIG: env.server.kubeconfig,
      };
      const { stdout } = await promisify(execFile)(process.execPath, [ravenBin, 'plan'], {
        env: childEnv,
        timeout: 30_000,
      });
      return stdout;
    }

    /** Pods Running with an IP in `namespaces`, once there are `count`. */
    const runningPods = (namespaces: readonly string[], count: number) =>
      waitFor(
        `${count} pods Running with an IP`,
        async () => {
          const pods = (
            await Promise.all(
              namespaces.map(async (ns) => (await env.client.list(resources.pods, { namespace: ns })).items),
            )
          ).flat();
          const ok =
            pods.length === count &&
            pods.every(
              (p) =>
                (p.status as { phase?: string; podIP?: string }).phase === 'Running' &&
                (p.status as { podIP?: string }).podIP,
            );
          return ok ? pods : undefined;
        },
        { timeoutMs: 60_000 },
      );

    for (const { strategy, emulateKubeProxy } of scenarios) {
      it(`strategy ${strategy}, emulateKubeProxy ${emulateKubeProxy}: namespaces, pods, services and endpoints → Neutron and Octavia, and back to nothing`, async () => {
        const clusterId = `tr-${strategy}`;
        const [nsA, nsB] = [`${clusterId}-a`, `${clusterId}-b`];
        const cluster = startCluster(clusterId, strategy, emulateKubeProxy);
        try {
          const { client, neutron } = env;
          for (const ns of [nsA, nsB])
            await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
          for (const name of ['web-0', 'web-1', 'web-2'])
            await client.create(resources.pods, webPod(nsA, name, 'web'), { namespace: nsA });
          await client.create(resources.pods, webPod(nsA, 'on-host', 'host', true), { namespace: nsA });
          await client.create(resources.pods, webPod(nsB, 'api-0', 'api'), { namespace: nsB });
          const lbSvc = await client.create(resources.services, service(nsA, 'web', 'web', { type: 'LoadBalancer' }), {
            namespace: nsA,
          });
          const internal = await client.create(resources.services, service(nsA, 'web-internal', 'web', {}), {
            namespace: nsA,
          });
          const external = await client.create(
            resources.services,
            service(nsB, 'api', 'api', { externalIPs: [EXTERNAL_IP] }),
            { namespace: nsB },
          );

          // Pods: Running (the kubelet stand-in waited for the VIF, as a CNI plugin would), podIP = the port's address.
          const running = await runningPods([nsA, nsB], 5);
          const ports = await neutron.ports.list({ device_owner: 'compute:raven' });
          const subnetOf = new Map<string, string>();
          if (strategy === 'namespace') {
            for (const ns of [nsA, nsB]) {
              const annotation = (await client.get(resources.namespaces, ns)).metadata.annotations?.[
                NETWORK_ANNOTATION
              ];
              assert.ok(annotation, `namespace ${ns} has no network annotation`);
              const info = JSON.parse(annotation) as { networkId: string; subnetId: string; cidr: string };
              const network = await neutron.networks.get(info.networkId);
              const subnet = await neutron.subnets.get(info.subnetId);
              assert.equal(network.name, `raven/${clusterId}/${ns}`);
              assert.deepEqual(ownerOf(network.tags), {
                cluster: clusterId,
                kind: 'namespace',
                uid: (await client.get(resources.namespaces, ns)).metadata.uid,
              });
              assert.equal(subnet.cidr, info.cidr);
              const routerPorts = await neutron.ports.list({
                network_id: network.id,
                device_owner: 'network:router_interface',
              });
              assert.equal(routerPorts.length, 1, `the subnet of ${ns} is attached to the router`);
              subnetOf.set(ns, info.cidr);
            }
            assert.notEqual(subnetOf.get(nsA), subnetOf.get(nsB), 'two namespaces share a subnet');
          } else {
            for (const ns of [nsA, nsB]) subnetOf.set(ns, '10.244.0.0/16');
          }
          for (const pod of running) {
            const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
            const status = pod.status as { podIP: string; hostIP?: string };
            const spec = pod.spec as { nodeName: string; hostNetwork?: boolean };
            const mine = ports.filter((p: Port) => p.device_id === pod.metadata.uid);
            if (spec.hostNetwork) {
              assert.equal(mine.length, 0, `${key}: a hostNetwork pod got a port`);
              continue;
            }
            assert.equal(mine.length, 1, `${key}: ${mine.length} ports`);
            const port = mine[0]!;
            const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION]);
            assert.equal(vif?.portId, port.id, `${key}: the VIF names another port`);
            assert.equal(status.podIP, port.fixed_ips[0]!.ip_address, `${key}: podIP is not the port's address`);
            assert.ok(
              ipv4InCidr(status.podIP, subnetOf.get(pod.metadata.namespace!)!),
              `${key}: ${status.podIP} outside its subnet`,
            );
            assert.deepEqual([port.name, port['binding:host_id']], [`raven/${clusterId}/${key}`, spec.nodeName]);
            assert.deepEqual([...port.tags].sort(), [`raven.cluster=${clusterId}`, 'raven.kind=pod']);
          }
          const webIps = running
            .filter((p) => p.metadata.name?.startsWith('web-'))
            .map((p) => `${(p.status as { podIP: string }).podIP}:8080`)
            .sort();
          const apiIps = running
            .filter((p) => p.metadata.name === 'api-0')
            .map((p) => `${(p.status as { podIP: string }).podIP}:8080`);

          // Services: an LB at the clusterIP with the ready endpoints (from the simulator's EndpointSlices) as members.
          const lbOf = async (svc: KubeObject, members: string[]) => {
            const [lb, ...more] = await octavia.loadBalancers.list({
              name: `raven/${clusterId}/${svc.metadata.namespace}/${svc.metadata.name}`,
            });
            assert.equal(more.length, 0, 'two load balancers for one service');
            if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
            const listeners = (await octavia.listeners.list()).filter((l) =>
              l.loadbalancers.some((r) => r.id === lb.id),
            );
            if (listeners.length !== 1 || !listeners[0]!.default_pool_id) return undefined;
            const got = (await octavia.members.list(listeners[0]!.default_pool_id))
              .map((m) => `${m.address}:${m.protocol_port}`)
              .sort();
            return JSON.stringify(got) === JSON.stringify(members) ? { lb, listener: listeners[0]! } : undefined;
          };
          const ingressOf = async (name: string, ns: string) =>
            (
              (await client.get(resources.services, name, ns)).status as
                { loadBalancer?: { ingress?: { ip: string }[] } } | undefined
            )?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
          for (const [svc, members] of [
            [lbSvc, webIps],
            [external, apiIps],
            ...(emulateKubeProxy ? [[internal, webIps] as const] : []),
          ] as const) {
            const { lb, listener } = await waitFor(
              `LB of ${svc.metadata.name} ACTIVE with ${members.length} members`,
              () => lbOf(svc, [...members]),
              { timeoutMs: 30_000 },
            );
            assert.equal(lb.vip_address, (svc.spec as { clusterIP: string }).clusterIP, 'VIP = clusterIP');
            assert.deepEqual(ownerOf(lb.tags), { cluster: clusterId, kind: 'service', uid: svc.metadata.uid });
            assert.deepEqual([listener.protocol, listener.protocol_port], ['TCP', 80]);
          }
          const ingress = await waitFor('ingress of the LoadBalancer service', async () =>
            (await ingressOf('web', nsA)).length === 1 ? ingressOf('web', nsA) : undefined,
          );
          assert.ok(ipv4InCidr(ingress[0]!, '203.0.113.0/24'));
          // The floating IPs come in the pass after the members: wait for the external IP's too, then compare.
          const fipAddresses = async () =>
            (await neutron.floatingIps.list({ tags: `raven.cluster=${clusterId}` }))
              .map((f) => f.floating_ip_address)
              .sort();
          await waitFor('both floating IPs', async () => (await fipAddresses()).length >= 2);
          assert.deepEqual(
            await fipAddresses(),
            [ingress[0]!, EXTERNAL_IP].sort(),
            'one floating IP per LoadBalancer service and per external IP',
          );
          if (!emulateKubeProxy) {
            assert.equal(
              (await octavia.loadBalancers.list({ name: `raven/${clusterId}/${nsA}/web-internal` })).length,
              0,
              'a ClusterIP service got a load balancer without emulateKubeProxy',
            );
          }

          // Converged: `raven plan` (the CLI, with the same settings) has nothing to do.
          let plan = '';
          try {
            await waitFor(
              'raven plan: nothing to do',
              async () => {
                plan = await ravenPlan(clusterId, strategy, emulateKubeProxy);
                return plan.trim() === `cluster ${clusterId}: nothing to do`;
              },
              { timeoutMs: 30_000, intervalMs: 500 },
            );
          } catch {
            assert.fail(`raven plan after convergence:\n${plan}`);
          }

          // Both namespaces deleted → nothing of them is left (the built-in namespaces keep theirs, as does the
          // cluster).
          for (const ns of [nsA, nsB]) await client.delete(resources.namespaces, ns);
          const ofTheirs = (r: string) =>
            [nsA, nsB].some(
              (ns) =>
                r.includes(` raven/${clusterId}/${ns}`) ||
                r === `floatingip ${EXTERNAL_IP}` ||
                r === `floatingip ${ingress[0]}`,
            );
          let left: string[] = [];
          await waitFor(
            'nothing of the two namespaces left',
            async () => {
              left = [...(await tagged(clusterId)).values()].flat().filter(ofTheirs);
              return left.length === 0;
            },
            { timeoutMs: 60_000 },
          ).catch(() => assert.fail(`left after deleting the namespaces: ${left.join(', ')}`));
          const byName = async (list: Promise<{ name: string }[]>) =>
            (await list).filter((r) => [nsA, nsB].some((ns) => r.name.startsWith(`raven/${clusterId}/${ns}`)));
          assert.deepEqual(
            [
              ...(await byName(neutron.ports.list({}))),
              ...(await byName(neutron.networks.list({}))),
              ...(await byName(neutron.subnets.list({}))),
            ],
            [],
            'something of theirs was left untagged',
          );
          assert.equal(
            (await octavia.loadBalancers.list({})).filter((lb) =>
              [nsA, nsB].some((ns) => lb.name.startsWith(`raven/${clusterId}/${ns}/`)),
            ).length,
            0,
          );
          const clusterLevel = (await tagged(clusterId)).get('cluster') ?? [];
          assert.ok(
            clusterLevel.some((r) => r.startsWith('router ')),
            'the cluster router is kept',
          );
        } finally {
          await cluster.stop();
        }
      });
    }

    it('raven gc --teardown: the cluster is gone — lists, then deletes, everything of it and nothing of another cluster', async () => {
      const clusterId = 'tr-gone';
      const ns = `${clusterId}-a`;
      const cluster = startCluster(clusterId, 'namespace', false);
      try {
        await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
        for (const name of ['web-0', 'web-1'])
          await env.client.create(resources.pods, webPod(ns, name, 'web'), { namespace: ns });
        await env.client.create(resources.services, service(ns, 'web', 'web', { type: 'LoadBalancer' }), {
          namespace: ns,
        });
        await runningPods([ns], 2);
        await waitFor(
          'the floating IP of the service',
          async () =>
            (await env.neutron.floatingIps.list({ tags: `raven.cluster=${clusterId}` })).length === 1
              ? true
              : undefined,
          { timeoutMs: 30_000 },
        );
      } finally {
        await cluster.stop();
      }
      const others = async () =>
        JSON.stringify([...(await tagged('tr-shared')).entries(), ...(await tagged('tr-namespace')).entries()]);
      const othersBefore = await others();
      const cli = async (...args: string[]) => {
        const childEnv: NodeJS.ProcessEnv = {
          ...process.env,
          OS_CLIENT_CONFIG_FILE: env.cloudsYaml,
          OS_CLOUD: 'raven-sim',
        };
        for (const key of Object.keys(childEnv))
          if (key.startsWith('RAVEN_') || key === 'KUBECONFIG') delete childEnv[key];
        // No kubeconfig at all: a teardown must not need the (gone) cluster's API.
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [
            ravenBin,
            'gc',
            ...args,
            '--cluster-id',
            clusterId,
            '--subnet-strategy',
            'namespace',
            '--namespace-cidr',
            '10.244.0.0/16',
            '--service-subnet-cidr',
            '10.96.0.0/12',
            '--kubeconfig',
            '/nonexistent',
          ],
          { env: childEnv, timeout: 60_000 },
        );
        return stdout;
      };
      const listed = await cli('--teardown');
      for (const what of [
        /^port\t.*\/web-0\towner pod /m,
        /^loadbalancer\t.*\/web\towner service /m,
        /^floatingip\t/m,
        /^network\t.*\/tr-gone-a\towner namespace /m,
        /^network\t.*\/default\towner namespace /m,
        /^network\t.*\/services\towner cluster /m,
        /^router\t.*\/router\towner cluster /m,
      ]) {
        assert.match(listed, what);
      }
      assert.ok((await tagged(clusterId)).size > 0, 'a teardown without --yes deleted something');
      const out = await cli('--teardown', '--yes');
      assert.match(out, /cluster tr-gone: nothing left/);
      assert.deepEqual([...(await tagged(clusterId)).entries()], []);
      const named = (r: { name: string }) => r.name.startsWith(`raven/${clusterId}/`);
      assert.deepEqual(
        [
          ...(await env.neutron.ports.list({})).filter(named),
          ...(await env.neutron.networks.list({})).filter(named),
          ...(await env.neutron.subnets.list({})).filter(named),
          ...(await env.neutron.routers.list({})).filter(named),
          ...(await octavia.loadBalancers.list({})).filter(named),
        ].map((r) => r.name),
        [],
      );
      assert.equal(await others(), othersBefore, "another cluster's resources changed");
    });
  },
);
