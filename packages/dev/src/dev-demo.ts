import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../../../src/core/index.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { isAlreadyExists, resources, type KubeClient, type ResourceRef } from '../../../src/kube/client/index.ts';
import type { OctaviaClient } from '../../../src/openstack/index.ts';
import { parseVif, resourceName, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';

/** What `raven dev --demo` creates: plain pods (named, so the summary can name them) and a Service. */
export const DEMO = {
  namespace: 'demo',
  service: 'web',
  pods: ['web-1', 'web-2', 'web-3'],
  labels: { app: 'web' },
  port: 80,
} as const;

export interface DemoOptions {
  client: KubeClient;
  octavia: OctaviaClient;
  clusterId: string;
  /** The controller's `/readyz`: nothing is created before it answers 200. */
  readyUrl: string;
  /** Wait for `status.loadBalancer.ingress` too (only when a floating IP network is configured). */
  expectIngress: boolean;
  /** How long, from the start, until the demo gives up and says which step is missing. */
  timeoutMs: number;
  pollMs?: number;
  /** Progress lines and the summary (stdout). */
  out: (text: string) => void;
  /** The message when the demo cannot converge (stderr). */
  err: (text: string) => void;
}

/** What the demo sees in the cluster and the cloud at one moment. */
export interface DemoObservation {
  pods: {
    name: string;
    phase: string | undefined;
    ip: string | undefined;
    node: string | undefined;
    portId: string | undefined;
  }[];
  clusterIP: string | undefined;
  ingress: string[];
  lb: { id: string; status: string; vip: string; members: string[] } | undefined;
}

export interface DemoStep {
  name: string;
  done: boolean;
  /** How far it is (`2/3`, the load balancer's status …). */
  detail: string;
  /** Where to look when it does not happen. */
  hint: string;
}

/** The demo's steps in order, each done or not: the progress lines, and what the timeout message names. */
export function demoSteps(o: DemoObservation, expectIngress: boolean): DemoStep[] {
  const want = DEMO.pods.length;
  const ips = o.pods.filter((p) => p.phase === 'Running' && p.ip).map((p) => `${p.ip}:${DEMO.port}`);
  const members = o.lb?.members ?? [];
  const steps: DemoStep[] = [
    {
      name: 'pods Running with IPs',
      done: ips.length === want,
      detail: `${ips.length}/${want}`,
      hint: `kubectl -n ${DEMO.namespace} get pods -o wide`,
    },
    {
      name: 'load balancer ACTIVE',
      done: o.lb?.status === 'ACTIVE',
      detail: !o.lb ? 'none yet' : o.lb.status === 'ACTIVE' ? o.lb.id : `${o.lb.id} is ${o.lb.status}`,
      hint: `kubectl -n ${DEMO.namespace} describe service ${DEMO.service} (its Events), and that translations.services is on with a serviceSubnet`,
    },
    {
      name: 'pool members',
      done: members.length === want && ips.every((m) => members.includes(m)),
      detail: `${members.length}/${want}`,
      hint: `kubectl -n ${DEMO.namespace} get endpointslices`,
    },
  ];
  if (expectIngress) {
    steps.push({
      name: 'ingress IP',
      done: o.ingress.length > 0,
      detail: o.ingress.join(', ') || 'none yet',
      hint: `kubectl -n ${DEMO.namespace} describe service ${DEMO.service} (a NoFloatingIpNetwork or floating IP Warning)`,
    });
  }
  return steps;
}

/** The summary printed once everything is there. */
export function demoSummary(o: DemoObservation, seconds: number): string {
  const lines = [
    `Demo ready in ${seconds.toFixed(1)} s: namespace ${DEMO.namespace}, ${o.pods.length} pods, LoadBalancer service ${DEMO.service}`,
  ];
  for (const p of o.pods)
    lines.push(
      `  pod ${p.name.padEnd(6)} ${(p.ip ?? '-').padEnd(15)} node ${p.node ?? '-'}  Neutron port ${p.portId ?? '-'}`,
    );
  const lb = o.lb;
  if (lb) {
    lines.push(`  load balancer ${lb.id}  ${lb.status}  VIP ${lb.vip} (the clusterIP)`);
    lines.push(`    listener TCP:${DEMO.port} → members ${lb.members.join(', ')}`);
  }
  lines.push(
    `  service ${DEMO.service}: clusterIP ${o.clusterIP ?? '-'}, ingress ${o.ingress.join(', ') || 'none (no floating IP network)'}${o.ingress.length > 0 ? ' (floating IP on the VIP)' : ''}`,
  );
  lines.push(`Try: kubectl -n ${DEMO.namespace} get pods,service -o wide`);
  return `${lines.join('\n')}\n`;
}

function pod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: DEMO.namespace, labels: { ...DEMO.labels } },
    spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ name: 'http', containerPort: DEMO.port }] }] },
  };
}

const service: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: DEMO.service, namespace: DEMO.namespace },
  spec: {
    type: 'LoadBalancer',
    selector: { ...DEMO.labels },
    ports: [{ name: 'http', port: DEMO.port, targetPort: 'http' }],
  },
};

async function createOnce(client: KubeClient, ref: ResourceRef, obj: KubeObject, signal: AbortSignal): Promise<void> {
  try {
    await client.create(ref, obj, { namespace: obj.metadata.namespace, signal });
  } catch (err) {
    // A second `--demo` against a kept cluster: what is there already is the demo's.
    if (!isAlreadyExists(err)) throw err;
  }
}

async function observe(o: DemoOptions, signal: AbortSignal): Promise<DemoObservation> {
  const { client, octavia } = o;
  const [pods, svc, [lb]] = await Promise.all([
    client.list(resources.pods, { namespace: DEMO.namespace, labelSelector: 'app=web', signal }),
    client.get(resources.services, DEMO.service, DEMO.namespace, { signal }),
    octavia.loadBalancers.list({ name: resourceName(o.clusterId, DEMO.namespace, DEMO.service) }, { signal }),
  ]);
  let members: string[] = [];
  if (lb) {
    const listeners = await octavia.listeners.list({ loadbalancer_id: lb.id }, { signal });
    const pools = listeners.flatMap((l) => (l.default_pool_id ? [l.default_pool_id] : []));
    members = (await Promise.all(pools.map((id) => octavia.members.list(id, {}, { signal }))))
      .flat()
      .map((m) => `${m.address}:${m.protocol_port}`)
      .sort();
  }
  return {
    pods: pods.items
      .map((p) => ({
        name: p.metadata.name ?? '',
        phase: p.status?.phase,
        ip: p.status?.podIP,
        node: p.spec?.nodeName,
        portId: parseVif(p.metadata.annotations?.[VIF_ANNOTATION])?.portId,
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    clusterIP: svc.spec?.clusterIP,
    ingress: (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : [])),
    lb: lb ? { id: lb.id, status: lb.provisioning_status, vip: lb.vip_address, members } : undefined,
  };
}

async function ready(url: string, signal: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** A "still waiting" line this often while a step takes long (a real Octavia takes minutes). */
const NOTE_EVERY_MS = 10_000;

/**
 * `raven dev --demo`: once the controller is ready, creates namespace `demo`, pods `web-1..3` (label `app=web`) and a
 * `type: LoadBalancer` Service `web` selecting them, then polls — a progress line per step reached — until the pods
 * are Running with IPs, the load balancer is ACTIVE with the three pods as members and (with a floating IP network)
 * the Service has an ingress IP; then prints a summary. Never throws: past `timeoutMs`, or on an error, it says which
 * step is missing and returns false, and `raven dev` keeps running. Stopping (`signal`) ends it quietly.
 */
export async function runDemo(o: DemoOptions, signal: AbortSignal): Promise<boolean> {
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  const pollMs = o.pollMs ?? 250;
  const reached = new Set<string>();
  let nextNote = started + NOTE_EVERY_MS;
  let steps: DemoStep[] = [{ name: 'controller ready', done: false, detail: o.readyUrl, hint: `curl ${o.readyUrl}` }];
  try {
    while (!(await ready(o.readyUrl, signal))) {
      if (Date.now() > deadline) return fail(o, steps, o.timeoutMs);
      await sleep(pollMs, undefined, { signal });
    }
    o.out(
      `demo: creating namespace ${DEMO.namespace}, pods ${DEMO.pods.join(', ')} and LoadBalancer service ${DEMO.service}\n`,
    );
    await createOnce(
      o.client,
      resources.namespaces,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO.namespace } },
      signal,
    );
    for (const name of DEMO.pods) await createOnce(o.client, resources.pods, pod(name), signal);
    await createOnce(o.client, resources.services, service, signal);
    for (;;) {
      const seen = await observe(o, signal);
      steps = demoSteps(seen, o.expectIngress);
      for (const step of steps) {
        if (!step.done || reached.has(step.name)) continue;
        reached.add(step.name);
        o.out(`demo: ${step.name}: ${step.detail}\n`);
      }
      if (steps.every((s) => s.done)) {
        o.out(demoSummary(seen, (Date.now() - started) / 1000));
        return true;
      }
      if (Date.now() > deadline) return fail(o, steps, o.timeoutMs);
      if (Date.now() > nextNote) {
        nextNote += NOTE_EVERY_MS;
        const missing = steps.find((s) => !s.done)!;
        o.out(`demo: still waiting for ${missing.name} (${missing.detail})\n`);
      }
      await sleep(pollMs, undefined, { signal });
    }
  } catch (err) {
    if (signal.aborted) return false;
    o.err(`raven dev --demo: failed: ${errorMessage(err)}; raven dev keeps running\n`);
    return false;
  }
}

/** The timeout message: the first step not done, how far it got, and where to look. */
export function demoTimeoutMessage(steps: readonly DemoStep[], timeoutMs: number): string {
  const missing = steps.find((s) => !s.done);
  const what = missing
    ? `${missing.name} (${missing.detail}); look at: ${missing.hint}`
    : 'nothing (it converged as time ran out)';
  return `raven dev --demo: not converged after ${Math.round(timeoutMs / 1000)} s: missing ${what}; raven dev keeps running\n`;
}

function fail(o: DemoOptions, steps: readonly DemoStep[], timeoutMs: number): false {
  o.err(demoTimeoutMessage(steps, timeoutMs));
  return false;
}
