/**
 * The `dataplane` benchmark group: on the real Neutron dataplane (scripts/dataplane/rig.sh, started by the caller:
 * `npm run dataplane:start`), per pod: created → Raven's VIF annotation → CNI ADD done → the first packet answered
 * (a ping from a probe pod made first). 20 pods one at a time, then 20 at once. And `raven-cni`'s own ADD time split
 * into Node.js start-up, the Kubernetes read (including any wait for the VIF), the Neutron reads and the plumbing
 * (the veth pair, addresses, route, bridge), from the log line it writes per ADD. Both ways of running the plugin:
 * standalone (each call opens its own connections) and forwarding to `raven node`. Root only.
 */
import { performance } from 'node:perf_hooks';
import { parseVif, VIF_ANNOTATION, type Pod } from '../src/kube/api/index.ts';
import { resources } from '../src/kube/client/index.ts';
import type { Service } from '../src/kube/api/index.ts';
import {
  pings,
  readRig,
  startDataplaneCluster,
  tcpHello,
  type DataplaneCluster,
  type Rig,
} from '../test/support/dataplane.ts';
import type { Step } from './client-group.ts';
import { delay, fmtMs, percentile, type Row } from './support.ts';

const namespace = 'bench';
const PODS = 20;
/** Services created one at a time, each in front of the same two pods. */
const SERVICES = 5;
/** Per pod, from its creation: the most any stage may take before the pod counts as failed. */
const POD_CAP_MS = 120_000;

export const dataplaneNotes = [
  '- dataplane: the rig `RAVEN_DATAPLANE_ENV` names, on this machine: linuxbridge (scripts/dataplane/rig.sh: neutron-server, ML2 linuxbridge + l2population, the linuxbridge agent with `polling_interval = 2`, the L3 agent; MariaDB and RabbitMQ on loopback) or ovn (`--backend ovn`: neutron-server with ML2/OVN, OVN and Open vSwitch in userspace, Octavia with the `ovn` provider; docs/ovn.md); the embedded API server, the cluster simulator with the CNI runtime stand-in and Raven run in the benchmark process; strategy `namespace`, one network. "VIF" is when the annotation is first seen (the pod is read every 20 ms); "ADD done" is when the runtime has raven-cni\'s answer; "first packet" is the first answered `ping -c 1 -W 0.2` from a probe pod on the same network, tried every 100 ms. Times are from the pod\'s create request.',
  '- Services (a rig with Octavia: ovn): each Service created while two member pods run → its load balancer ACTIVE (read every 100 ms) → the first TCP connection through its clusterIP answered by a member, from the probe pod (tried every 100 ms, 2 s per try). Raven with `emulateKubeProxy` (every Service gets a load balancer: the rig has no kube-proxy).',
  "- standalone: each raven-cni process loads the whole plugin and opens its own Kubernetes and Neutron connections; raven node: raven-cni forwards the call over a unix socket to the node daemon (in the benchmark process), which holds both connections. raven-cni split: from the plugin's own log line per ADD (p50 over the pods); start-up is the raven-cni process's. Kubernetes includes waiting for Raven's VIF; plumbing is the veth pair, addresses, route and bridge (made by the plugin when the agent has not made it yet).",
];

interface PodTimes {
  vif: number;
  added: number;
  packet: number;
  split: Record<string, number>;
}

async function answered(fromNetns: string, address: string, deadline: number): Promise<number> {
  while (!(await pings(fromNetns, address, 0.2))) {
    if (performance.now() > deadline) throw new Error(`no answer from ${address}`);
    await delay(100);
  }
  return performance.now();
}

/** Creates the pod and follows it to its first answered packet. */
async function followPod(cluster: DataplaneCluster, name: string, probe: string): Promise<PodTimes> {
  const started = performance.now();
  const deadline = started + POD_CAP_MS;
  await cluster.createPod(namespace, name);
  let vifAt: number | undefined;
  let pod: Pod | undefined;
  while (!pod?.status?.podIP) {
    if (performance.now() > deadline) throw new Error(`pod ${name} got no IP`);
    pod = await cluster.client.get(resources.pods, name, namespace);
    if (vifAt === undefined && parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])) vifAt = performance.now();
    if (!pod.status?.podIP) await delay(20);
  }
  const add = cluster.runtime.addOf(`${namespace}/${name}`);
  if (!add) throw new Error(`pod ${name} has an IP but no sandbox`);
  const packetAt = await answered(probe, pod.status.podIP, deadline);
  const log = add.logs.find((l) => l.plugin === 'raven-cni')?.stderr ?? '';
  const timings = (JSON.parse(log.trim().split('\n').at(-1) ?? '{}') as { timings?: Record<string, number> }).timings;
  return {
    vif: (vifAt ?? add.doneAt) - started,
    added: add.doneAt - started,
    packet: packetAt - started,
    split: timings ?? {},
  };
}

function rows(condition: string, times: readonly PodTimes[]): Row[] {
  const stat = (values: number[]) => `p50 ${fmtMs(percentile(values, 50))} / p99 ${fmtMs(percentile(values, 99))}`;
  const splitOf = (key: string) =>
    percentile(
      times.map((t) => t.split[key] ?? 0),
      50,
    );
  return [
    { benchmark: 'pod created → VIF', condition, result: stat(times.map((t) => t.vif)) },
    { benchmark: 'pod created → CNI ADD done', condition, result: stat(times.map((t) => t.added)) },
    { benchmark: 'pod created → first packet answered', condition, result: stat(times.map((t) => t.packet)) },
    {
      benchmark: 'raven-cni ADD split (p50)',
      condition,
      result:
        `start-up ${fmtMs(splitOf('startupMs'))}, Kubernetes ${fmtMs(splitOf('kubernetesMs'))}, ` +
        `Neutron ${fmtMs(splitOf('neutronMs'))}, plumbing ${fmtMs(splitOf('plumbingMs'))}, ` +
        `total ${fmtMs(splitOf('totalMs'))}`,
    },
  ];
}

/** The pod once it runs with an address (an unmeasured pod: a probe, a Service's member). */
async function running(cluster: DataplaneCluster, name: string): Promise<Pod> {
  for (const deadline = performance.now() + POD_CAP_MS; ; await delay(100)) {
    const pod = await cluster.client.get(resources.pods, name, namespace);
    if (pod.status?.phase === 'Running' && pod.status.podIP) return pod;
    if (performance.now() > deadline) throw new Error(`pod ${name} is not running`);
  }
}

/** Service created → load balancer ACTIVE → first TCP connection through the clusterIP answered, per Service. */
async function runServices(step: Step, rig: Rig): Promise<void> {
  const cluster = await startDataplaneCluster(rig, { strategy: 'namespace', services: true });
  try {
    cluster.startRaven();
    await cluster.createNamespace(namespace);
    const ready = (name: string) => running(cluster, name);
    for (const name of ['web-1', 'web-2']) await cluster.createPod(namespace, name, { labels: { app: 'web' } });
    await cluster.createPod(namespace, 'probe');
    const probe = cluster.netnsOf(await ready('probe'));
    await Promise.all(['web-1', 'web-2'].map(ready));
    await step(`dataplane Services, ${SERVICES} one at a time`, async () => {
      const active: number[] = [];
      const answered: number[] = [];
      for (let i = 0; i < SERVICES; i++) {
        const name = `svc-${i}`;
        const started = performance.now();
        const deadline = started + POD_CAP_MS;
        const svc = await cluster.client.create<Service>(
          resources.services,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name, namespace },
            spec: { selector: { app: 'web' }, ports: [{ name: 'tcp', port: 80, targetPort: 8080 }] },
          },
          { namespace },
        );
        const clusterIP = svc.spec?.clusterIP ?? '';
        const lbName = `raven/${cluster.clusterId}/${namespace}/${name}`;
        for (; ; await delay(100)) {
          const [lb] = await cluster.octavia!.loadBalancers.list({ name: lbName });
          if (lb?.provisioning_status === 'ACTIVE') break;
          if (performance.now() > deadline) throw new Error(`load balancer ${lbName} is not ACTIVE`);
        }
        active.push(performance.now() - started);
        for (; (await tcpHello(probe, clusterIP, 80)) === undefined; await delay(100))
          if (performance.now() > deadline) throw new Error(`nothing answered on ${clusterIP}:80`);
        answered.push(performance.now() - started);
      }
      const stat = (values: number[]) => `p50 ${fmtMs(percentile(values, 50))} / max ${fmtMs(Math.max(...values))}`;
      const condition = `${rig.backend}, provider ${rig.octavia?.provider ?? '(default)'}, ${SERVICES} one at a time`;
      return [
        { benchmark: 'Service created → load balancer ACTIVE', condition, result: stat(active) },
        { benchmark: 'Service created → first TCP answer through its clusterIP', condition, result: stat(answered) },
      ];
    });
  } finally {
    await cluster.stop();
  }
}

export async function runDataplaneGroup(step: Step): Promise<void> {
  const rig = await readRig();
  if (!rig) {
    await step('dataplane', () =>
      Promise.reject(new Error('set RAVEN_DATAPLANE_ENV=.raven/dataplane-ovn/env (npm run dataplane:start, as root)')),
    );
    return;
  }
  for (const nodeDaemon of [false, true]) {
    const mode = nodeDaemon ? 'raven node' : 'standalone';
    const cluster = await startDataplaneCluster(rig, { strategy: 'namespace', nodeDaemon });
    try {
      cluster.startRaven();
      await cluster.createNamespace(namespace);
      // The probe pod (which also brings up the network's bridge) is not measured.
      await cluster.createPod(namespace, 'probe');
      const probe = cluster.netnsOf(await running(cluster, 'probe'));
      await step(`dataplane ${mode}, ${PODS} pods one at a time`, async () => {
        const times: PodTimes[] = [];
        for (let i = 0; i < PODS; i++) times.push(await followPod(cluster, `serial-${i}`, probe));
        return rows(`${mode}, one at a time`, times);
      });
      await step(`dataplane ${mode}, ${PODS} pods at once`, async () => {
        const times = await Promise.all(
          Array.from({ length: PODS }, (_, i) => followPod(cluster, `burst-${i}`, probe)),
        );
        return rows(`${mode}, ${PODS} at once`, times);
      });
    } finally {
      await cluster.stop();
    }
  }
  if (rig.octavia) await runServices(step, rig);
}
