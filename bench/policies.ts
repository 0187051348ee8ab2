/**
 * The `policies` benchmark group (issue 16, docs/policy.md "Measured"): NetworkPolicy → Neutron security groups on the
 * simulator, at 1,000 pods in 10 namespaces and 100 policies of mixed kinds. Three processes, as the `raven` group:
 * the API server, the OpenStack simulator and Raven's controller (raven-process.ts, policies on, pools off). Rows:
 * Raven started over the whole cluster until converged (groups, rules and Neutron calls by route); one policy created
 * and one edited (calls, and the time to the last Neutron write each causes); a burst of 100 pods under the policies
 * (rule writes, which must be 0, and port calls); and, from the same cluster state, the rule count of the per-pod-rule
 * approach (kuryr-rules.ts). Everything on 127.0.0.1.
 */
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import type { Namespace, NetworkPolicy } from '../src/kube/api/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../src/openstack/index.ts';
import type { Step } from './client-group.ts';
import { call, callOk, keepAliveAgent, type Target } from './http.ts';
import { kuryrRuleCount, type KuryrPod, type KuryrState } from './kuryr-rules.ts';
import { startServerProcess } from './processes.ts';
import { ravenActivity, scrape } from './prom.ts';
import { ravenRuntime } from './pools-rig.ts';
import { imageNodeFlags } from './raven-memory.ts';
import { VifWatch } from './raven.ts';
import { shortRoute, simApi, startCloud, startRavenProcess, type RavenHandle } from './raven-rig.ts';
import { delay, epochMs, fmtInt, runPool, type Row } from './support.ts';
import { benchLoadBalancerPeers } from './lb-peers.ts';

const CLUSTER = 'bench';
const NAMESPACES = 10;
const PODS_PER_NAMESPACE = 100;
export const NODES = 10;
const BURST = 100;
const WORKERS = 8;
/** `raven dev`'s Kubernetes limiter: 1,000 annotation writes are not what is measured here. */
const LIMITER = { qps: 1000, burst: 2000 };
const VIF = 'raven.openstack.org/vif';
/** The controllers whose queues must be empty for Raven to be settled. */
const CONTROLLERS = ['pod', 'security-group', 'network-policy'];
const CAPS = { convergeMs: 90_000, changeMs: 30_000, settleMs: 30_000 };

export const APPS = ['web', 'api', 'db', 'cache', 'worker'] as const;
const TEAMS = ['a', 'b', 'c', 'd', 'e'] as const;
export const nsName = (i: number) => `ns-${String(i).padStart(2, '0')}`;
export const nodeName = (i: number) => `node-${String(i + 1).padStart(2, '0')}`;

/** Node i, with the InternalIP a policy's pods accept kubelet probes from. */
export function nodeObject(i: number): object {
  return {
    metadata: { name: nodeName(i) },
    status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${10 + i}` }] },
  };
}

/** Namespace i: a team (two namespaces each) and an environment. */
export function namespaceObject(i: number): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: nsName(i), labels: { team: TEAMS[i % TEAMS.length]!, env: i % 2 === 0 ? 'prod' : 'dev' } },
  };
}

/**
 * Pod j of namespace i: an app (a fifth each), a tier, a version (a third v2), a track (one in seven canary), on node
 * j mod 10; named ports per app, with two numbers for some names (`http` 80 or 8080 on web, `db` 5432 or 5433) so
 * named ports resolve per pod. The burst's pods continue the same pattern: no new label set, no new port number.
 */
export function podObject(i: number, j: number, name = `pod-${String(j).padStart(3, '0')}`): object {
  const app = APPS[j % APPS.length]!;
  const ports: { name: string; containerPort: number; protocol?: string }[] = [];
  if (app === 'web') ports.push({ name: 'http', containerPort: j % 3 === 0 ? 8080 : 80 });
  if (app === 'api') ports.push({ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 });
  if (app === 'db') ports.push({ name: 'db', containerPort: j % 4 === 0 ? 5433 : 5432 });
  if (app === 'cache') ports.push({ name: 'redis', containerPort: 6379 });
  if (app === 'worker') ports.push({ name: 'dns', containerPort: 53, protocol: 'UDP' });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: nsName(i),
      labels: {
        app,
        tier: app === 'web' ? 'frontend' : 'backend',
        version: j % 3 === 2 ? 'v2' : 'v1',
        track: j % 7 === 0 ? 'canary' : 'stable',
      },
    },
    spec: { nodeName: nodeName(j % NODES), containers: [{ name: app, image: 'nginx:1.25.4', ports }] },
  };
}

type PolicySpec = NonNullable<NetworkPolicy['spec']>;
const tcp = (port: number | string, endPort?: number) => ({
  protocol: 'TCP',
  port,
  ...(endPort ? { endPort } : {}),
});
const app = (name: string) => ({ matchLabels: { app: name } });

/**
 * The ten policies of namespace i, one of each kind: default deny; a podSelector peer; a namespaceSelector peer; pod
 * AND namespace; ipBlock with except; a named ingress port; endPort ranges from every namespace; egress to pods, a
 * namespace's pods and an ipBlock with except; egress on a named port; ingress and egress within reach of everyone.
 */
export function namespacePolicies(i: number): { name: string; spec: PolicySpec }[] {
  const otherTeam = TEAMS[(i + 1) % TEAMS.length]!;
  return [
    { name: 'default-deny-ingress', spec: { podSelector: {}, policyTypes: ['Ingress'] } },
    {
      name: 'web-to-api',
      spec: { podSelector: app('api'), ingress: [{ from: [{ podSelector: app('web') }], ports: [tcp(8080)] }] },
    },
    {
      name: 'team-to-web',
      spec: {
        podSelector: app('web'),
        ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: otherTeam } } }], ports: [tcp(80), tcp(443)] }],
      },
    },
    {
      name: 'prod-api-to-db',
      spec: {
        podSelector: app('db'),
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { env: 'prod' } }, podSelector: app('api') }],
            ports: [tcp(5432), tcp(5433)],
          },
        ],
      },
    },
    {
      name: 'external-to-frontend',
      spec: {
        podSelector: { matchLabels: { tier: 'frontend' } },
        ingress: [
          {
            from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.244.0.0/16', `10.${i + 1}.0.0/24`] } }],
            ports: [tcp(443)],
          },
        ],
      },
    },
    {
      name: 'named-http',
      spec: {
        podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
        ingress: [{ from: [{ podSelector: { matchLabels: { track: 'stable' } } }], ports: [tcp('http')] }],
      },
    },
    {
      name: 'worker-ranges',
      spec: {
        podSelector: app('worker'),
        ingress: [
          {
            from: [{ namespaceSelector: {} }],
            ports: [tcp(30000, 32767), { protocol: 'UDP', port: 5000, endPort: 5100 }],
          },
        ],
      },
    },
    {
      name: 'web-egress',
      spec: {
        podSelector: app('web'),
        policyTypes: ['Egress'],
        egress: [
          { to: [{ podSelector: app('api') }], ports: [tcp(8080)] },
          {
            to: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: app('cache') }],
            ports: [tcp(6379)],
          },
          {
            to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32'] } }],
            ports: [{ protocol: 'UDP', port: 53 }],
          },
        ],
      },
    },
    {
      name: 'api-egress-named-db',
      spec: {
        podSelector: app('api'),
        policyTypes: ['Egress'],
        egress: [{ to: [{ podSelector: app('db') }], ports: [tcp('db')] }],
      },
    },
    {
      name: 'v2-open-within',
      spec: {
        podSelector: { matchLabels: { version: 'v2' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [{ podSelector: {} }] }],
        egress: [
          {
            to: [
              {
                namespaceSelector: {},
                podSelector: { matchExpressions: [{ key: 'track', operator: 'NotIn', values: ['canary'] }] },
              },
            ],
          },
        ],
      },
    },
  ];
}

export const policyPath = (ns: string, name?: string) =>
  `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies${name ? `/${name}` : ''}`;

export function policyObject(ns: string, name: string, spec: PolicySpec): NetworkPolicy {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: ns }, spec };
}

/** Calls by route (`POST security-group-rules 12, …`), and their total, of the simulator's Neutron counters. */
function routes(counts: Record<string, number>): {
  total: number;
  writes: number;
  text: string;
  of: (route: string) => number;
} {
  const neutron = Object.entries(counts).filter(([k]) => k.includes(' /network/'));
  const sorted = neutron.map(([k, n]) => [shortRoute(k), n] as const).sort(([, a], [, b]) => b - a);
  return {
    total: sorted.reduce((s, [, n]) => s + n, 0),
    writes: sorted.filter(([k]) => !k.startsWith('GET ')).reduce((s, [, n]) => s + n, 0),
    text: sorted.map(([k, n]) => `${k} ${fmtInt(n)}`).join(', ') || 'none',
    of: (route) => sorted.find(([k]) => k === route)?.[1] ?? 0,
  };
}

const RULE_WRITES = ['POST security-group-rules', 'DELETE security-group-rules/{id}'];

class PoliciesRig {
  readonly cleanups: (() => Promise<unknown>)[] = [];
  target!: Target;
  agent!: Agent;
  simBase!: string;
  cloudsYaml!: string;
  raven!: RavenHandle;
  readonly watch = new VifWatch();

  async start(): Promise<void> {
    const server = await startServerProcess({ tls: 'none' });
    this.cleanups.unshift(() => server.stop());
    this.target = { url: server.url, token: server.token, caPem: server.caPem };
    const { cloud, simBase } = await startCloud({ kind: 'sim', latency: false }, CLUSTER, WORKERS, this.cleanups);
    this.simBase = simBase!;
    this.cloudsYaml = cloud.cloudsYaml;
    this.agent = keepAliveAgent(this.target, 16);
    this.cleanups.unshift(() => this.agent.close());
    this.cleanups.unshift(() => this.watch.close());
    await this.watch.open(this.target);
    this.#cloud = cloud;
  }

  #cloud!: Awaited<ReturnType<typeof startCloud>>['cloud'];

  async startRaven(): Promise<void> {
    this.raven = await startRavenProcess(
      {
        kube: { url: this.target.url, token: this.target.token, caPem: this.target.caPem, ...LIMITER },
        cloud: this.#cloud,
        clusterId: CLUSTER,
        podCidr: '10.244.0.0/16',
        workers: WORKERS,
        logLevel: 'warn',
        pools: { enabled: false },
        eventsClient: 'own',
        runtime: ravenRuntime(),
      },
      imageNodeFlags(),
    );
    this.cleanups.unshift(() => this.raven.stop());
  }

  post(path: string, body: object): Promise<string> {
    return callOk(this.agent, this.target, 'POST', path, 201, body);
  }

  async get<T>(path: string): Promise<T> {
    return JSON.parse(await callOk(this.agent, this.target, 'GET', path, 200)) as T;
  }

  /**
   * Waits until Raven is settled: no key queued or in work in the pod, security-group and network-policy controllers,
   * and no OpenStack request for 1 s. Throws after `capMs`.
   */
  async settle(capMs: number): Promise<void> {
    let requests = -1;
    let quietSince = performance.now();
    const stopAt = performance.now() + capMs;
    for (;;) {
      const { busy, requests: now } = await ravenActivity(this.raven.opsUrl, CONTROLLERS);
      if (busy || now !== requests) {
        requests = now;
        quietSince = performance.now();
      } else if (performance.now() - quietSince >= 1_000) return;
      if (performance.now() >= stopAt) throw new Error(`Raven did not settle within ${capMs / 1000} s`);
      await delay(100);
    }
  }

  /** `raven_network_policy_sync_seconds`: policy generations Raven reported translated, and their seconds summed. */
  async synced(): Promise<{ count: number; sum: number }> {
    const m = await scrape(this.raven.opsUrl);
    return {
      count: m.sum('raven_network_policy_sync_seconds_count'),
      sum: m.sum('raven_network_policy_sync_seconds_sum'),
    };
  }

  async counters(reset = false): Promise<Record<string, number>> {
    const counts = (await simApi(this.simBase, 'GET', 'counters')) as Record<string, number>;
    if (reset) await simApi(this.simBase, 'DELETE', 'counters');
    return counts;
  }

  /** What Neutron holds of this cluster, read with its API (after the counters were read: these calls count too). */
  async neutronState(): Promise<{
    groups: number;
    rules: number;
    ports: number;
    groupsPerPort: number;
    maxPerPort: number;
  }> {
    const session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: this.cloudsYaml } }),
      timeoutMs: 60_000,
    });
    try {
      const neutron = new NeutronClient(session);
      const groups = await neutron.securityGroups.list({
        tags: [`raven.cluster=${CLUSTER}`, 'raven.kind=securitygroup'],
      });
      const ports = await neutron.ports.list({ tags: [`raven.cluster=${CLUSTER}`, 'raven.kind=pod'] });
      const perPort = ports.map((p) => p.security_groups.length);
      return {
        groups: groups.length,
        rules: groups.reduce((n, g) => n + g.security_group_rules.length, 0),
        ports: ports.length,
        groupsPerPort: perPort.reduce((a, b) => a + b, 0) / Math.max(1, perPort.length),
        maxPerPort: Math.max(0, ...perPort),
      };
    } finally {
      await session.close();
    }
  }

  /** The cluster's state as the kuryr calculator reads it: wired pods (with a VIF), namespaces, policies. */
  async kuryrState(): Promise<KuryrState> {
    type List<T> = { items: T[] };
    const pods = (
      await this.get<List<KuryrPod & { metadata: { annotations?: Record<string, string> } }>>('/api/v1/pods')
    ).items;
    return {
      pods: pods.filter((p) => p.metadata.annotations?.[VIF]),
      namespaces: (await this.get<List<Namespace>>('/api/v1/namespaces')).items,
      policies: (await this.get<List<NetworkPolicy>>('/apis/networking.k8s.io/v1/networkpolicies')).items,
    };
  }

  async stop(): Promise<void> {
    for (const c of this.cleanups)
      await c().catch((err: unknown) =>
        process.stderr.write(`\nbench: clean-up: ${err instanceof Error ? err.message : String(err)}\n`),
      );
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** Raven's CPU seconds since `since` and its peak RSS since the last reset; resets the peak for the next phase. */
async function usageSince(raven: RavenHandle, sinceMicros: number): Promise<{ text: string; micros: number }> {
  const u = await raven.usage(true);
  return {
    text: `Raven CPU ${((u.cpuMicros - sinceMicros) / 1e6).toFixed(2)} s, peak RSS ${mb(u.peakRss)}`,
    micros: u.cpuMicros,
  };
}

async function benchPolicies(): Promise<Row[]> {
  const rig = new PoliciesRig();
  const rows: Row[] = [];
  try {
    await rig.start();
    for (let i = 0; i < NODES; i++) await rig.post('/api/v1/nodes', nodeObject(i));
    for (let i = 0; i < NAMESPACES; i++) await rig.post('/api/v1/namespaces', namespaceObject(i));
    const pods = Array.from({ length: NAMESPACES * PODS_PER_NAMESPACE }, (_, k) => ({
      i: Math.floor(k / PODS_PER_NAMESPACE),
      j: k % PODS_PER_NAMESPACE,
    }));
    await runPool(pods.length, 16, 60_000, async (k) => {
      const { i, j } = pods[k]!;
      await rig.post(`/api/v1/namespaces/${nsName(i)}/pods`, podObject(i, j));
    });
    const policies = Array.from({ length: NAMESPACES }, (_, i) =>
      namespacePolicies(i).map((p) => policyObject(nsName(i), p.name, p.spec)),
    ).flat();
    for (const p of policies) await rig.post(policyPath(p.metadata.namespace!), p);
    const podKeys = pods.map(({ i, j }) => `${nsName(i)}/pod-${String(j).padStart(3, '0')}`);

    // Converge: Raven starts over the whole cluster.
    const t0 = epochMs();
    await rig.startRaven();
    const allWired = await rig.watch.until(() => podKeys.every((k) => rig.watch.annotatedAt.has(k)), CAPS.convergeMs);
    const wiredAt = epochMs();
    if (!allWired) throw new Error(`not every pod had its VIF within ${CAPS.convergeMs / 1000} s`);
    await rig.settle(CAPS.settleMs);
    const converged = await rig.raven.lastCall();
    const convergeCounts = routes(await rig.counters(true));
    let usage = await usageSince(rig.raven, 0);
    const state = await rig.neutronState();
    const synced = await rig.synced();
    rows.push({
      benchmark: 'policies: converge',
      condition: `${fmtInt(podKeys.length)} pods (${PODS_PER_NAMESPACE} in each of ${NAMESPACES} namespaces, on ${NODES} nodes), ${policies.length} NetworkPolicies (10 kinds × ${NAMESPACES} namespaces); Raven started over them; pools off`,
      result:
        `converged ${secs(converged.writeAt - t0)} after Raven's start (every VIF at ${secs(wiredAt - t0)}; ${fmtInt(synced.count)} of ${policies.length} policies reported Translated); ` +
        `Neutron holds ${fmtInt(state.groups)} security groups with ${fmtInt(state.rules)} rules; ${fmtInt(state.ports)} pod ports carry ${state.groupsPerPort.toFixed(1)} groups each on average (max ${state.maxPerPort}); ` +
        `Neutron calls ${fmtInt(convergeCounts.total)}, ${fmtInt(convergeCounts.writes)} writes (${convergeCounts.text}); ${usage.text}`,
    });

    // The per-pod-rule approach, from the same state.
    const kuryr = kuryrRuleCount(await rig.kuryrState());
    rows.push({
      benchmark: 'policies: per-pod rules (kuryr) for the same state',
      condition: `the converged cluster above, read back from the API server (${fmtInt(podKeys.length)} wired pods, ${policies.length} policies); calculator bench/kuryr-rules.ts`,
      result: `kuryr-kubernetes' per-pod rules: ${fmtInt(kuryr.rules)} rules in ${policies.length - kuryr.refused} groups, ${fmtInt(kuryr.perPodRules)} of them one pod's address; Raven: ${fmtInt(state.rules)} rules in ${fmtInt(state.groups)} groups (${(kuryr.rules / Math.max(1, state.rules)).toFixed(1)}× fewer rules)`,
    });
    await rig.counters(true); // the state reads above

    // One policy created, one edited: the calls each causes and the time to the last Neutron write.
    const change = async (benchmark: string, condition: string, act: () => Promise<void>): Promise<void> => {
      await rig.settle(CAPS.settleMs);
      await rig.counters(true);
      const before = await rig.synced();
      const sentAt = epochMs();
      await act();
      const answeredAt = epochMs();
      const stopAt = performance.now() + CAPS.changeMs;
      while ((await rig.synced()).count === before.count) {
        if (performance.now() >= stopAt)
          throw new Error(`${benchmark}: not reported Translated within ${CAPS.changeMs / 1000} s`);
        await delay(50);
      }
      await rig.settle(CAPS.settleMs);
      const last = await rig.raven.lastCall();
      const counts = routes(await rig.counters(true));
      const after = await rig.synced();
      usage = await usageSince(rig.raven, usage.micros);
      rows.push({
        benchmark,
        condition,
        result:
          `${fmtInt(counts.total)} Neutron calls (${counts.text}); API answer → last Neutron write ${last.writeAt > sentAt ? secs(last.writeAt - answeredAt) : 'none'}; ` +
          `Raven's own sync time (raven_network_policy_sync_seconds) ${(after.sum - before.sum).toFixed(2)} s; rule writes ${fmtInt(RULE_WRITES.reduce((n, r) => n + counts.of(r), 0))}, port updates ${fmtInt(counts.of('PUT ports/{id}'))}; ${usage.text}`,
      });
    };
    await change(
      'policies: create one policy',
      'a new policy in ns-03: app=db accepts TCP 6379 and 7000-7010 from app=cache of the namespaces of team b (a peer set no policy named before: a new group, whose members are re-grouped)',
      async () => {
        await rig.post(
          policyPath('ns-03'),
          policyObject('ns-03', 'cache-to-db', {
            podSelector: app('db'),
            ingress: [
              {
                from: [{ namespaceSelector: { matchLabels: { team: 'b' } }, podSelector: app('cache') }],
                ports: [tcp(6379), tcp(7000, 7010)],
              },
            ],
          }),
        );
      },
    );
    await change(
      'policies: edit one policy',
      'ns-05/web-to-api: TCP 8080 becomes 8080-8090 and TCP 9090 is added (rules only)',
      async () => {
        const current = await rig.get<NetworkPolicy>(policyPath('ns-05', 'web-to-api'));
        current.spec!.ingress![0]!.ports = [tcp(8080, 8090), tcp(9090)];
        const reply = await call(rig.agent, rig.target, 'PUT', policyPath('ns-05', 'web-to-api'), current);
        if (reply.status !== 200)
          throw new Error(`edit ns-05/web-to-api: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
      },
    );

    // A burst of pods under the policies: memberships only.
    await rig.settle(CAPS.settleMs);
    const kuryrBefore = kuryrRuleCount(await rig.kuryrState());
    await rig.counters(true);
    const burst = Array.from({ length: BURST }, (_, k) => ({
      i: k % NAMESPACES,
      j: PODS_PER_NAMESPACE + Math.floor(k / NAMESPACES) * 7 + (k % 5),
      name: `burst-${String(k).padStart(3, '0')}`,
    }));
    const burstKeys = burst.map((b) => `${nsName(b.i)}/${b.name}`);
    const b0 = performance.now();
    await runPool(burst.length, 16, 30_000, async (k) => {
      const b = burst[k]!;
      await rig.post(`/api/v1/namespaces/${nsName(b.i)}/pods`, podObject(b.i, b.j, b.name));
    });
    if (!(await rig.watch.until(() => burstKeys.every((k) => rig.watch.annotatedAt.has(k)), CAPS.changeMs)))
      throw new Error(`the burst's pods had no VIF within ${CAPS.changeMs / 1000} s`);
    const lastVif = Math.max(...burstKeys.map((k) => rig.watch.annotatedAt.get(k)!));
    await rig.settle(CAPS.settleMs);
    const burstCounts = routes(await rig.counters(true));
    usage = await usageSince(rig.raven, usage.micros);
    const kuryrAfter = kuryrRuleCount(await rig.kuryrState());
    const ruleWrites = RULE_WRITES.reduce((n, r) => n + burstCounts.of(r), 0);
    rows.push({
      benchmark: `policies: ${BURST}-pod burst under the policies`,
      condition: `${BURST} new pods (10 per namespace, labels and named ports as the others'), 16 creates in flight, after the two changes above`,
      result:
        `rule writes ${fmtInt(ruleWrites)}${ruleWrites === 0 ? ' (as it must be)' : ' (MUST BE 0)'}; port creates ${fmtInt(burstCounts.of('POST ports'))} (each in its groups), port updates ${fmtInt(burstCounts.of('PUT ports/{id}'))}; ` +
        `${fmtInt(burstCounts.total)} Neutron calls (${burstCounts.text}); first create → last VIF ${secs(lastVif - b0)}; ` +
        `per-pod rules would write ${fmtInt(kuryrAfter.rules - kuryrBefore.rules)} rules (${fmtInt(kuryrBefore.rules)} → ${fmtInt(kuryrAfter.rules)}); ${usage.text}`,
    });
    return rows;
  } finally {
    await rig.stop();
  }
}

export async function runPoliciesGroup(step: Step): Promise<void> {
  await step('policies: 1,000 pods, 100 NetworkPolicies', benchPolicies);
  await step('policies: load balancers, what members admit', benchLoadBalancerPeers);
}

export const policiesNotes = [
  `- policies group (issue 16): three processes — the API server (\`tls: 'none'\`), the OpenStack simulator (Keystone auth, no latency, no quotas) and Raven's controller (\`composeRaven\` as \`raven run\` runs it, ${ravenRuntime() === 'dist' ? `compiled (dist/, current with src/), with the Node.js flags of the image's entrypoint (${imageNodeFlags().join(' ')})` : 'the sources through tsx (dist/ missing or older than src/: `npm run build` for the compiled runtime)'}: strategy \`shared\` on one /16, leader election off, translations pods and networkPolicies, warm pools off, ${WORKERS} pod workers, Neutron ${WORKERS} in flight, \`raven dev\`'s Kubernetes limiter qps ${fmtInt(LIMITER.qps)} / burst ${fmtInt(LIMITER.burst)}, Events on a client of their own). Nodes exist with an InternalIP; pods are pre-scheduled (\`spec.nodeName\`), no kubelet runs.`,
  '- The cluster: namespaces with labels `team` (5 teams, 2 namespaces each) and `env` (prod/dev); pods with `app` (web, api, db, cache, worker: 20 each per namespace), `tier`, `version` (a third v2), `track` (one in seven canary) and named ports (`http` 80 or 8080 on web, 8080 on api; `db` 5432 or 5433; `metrics`, `redis`, UDP `dns`). Each namespace has the same ten policies: default deny ingress; podSelector peer; namespaceSelector peer; pod AND namespace peer; ipBlock 10.0.0.0/8 except 10.244.0.0/16 and a /24 (22 CIDRs); a named ingress port; endPort ranges (TCP and UDP) from every namespace; egress to pods, to pods of team a and to 0.0.0.0/0 except 169.254.169.254/32 (UDP 53: 32 CIDRs); egress on a named port; ingress from the namespace and egress to every non-canary pod for v2 pods.',
  "- converge: everything exists before Raven starts; from the fork of its process to its last Neutron write (an interceptor on its session notes the time of each answer), once settled: no key queued or in work in the pod, security-group and network-policy controllers, and no OpenStack request for 1 s (its /metrics polled every 100 ms). Calls are the simulator's counters (every HTTP request to Neutron, Keystone left out), by route; they include the cluster network's bootstrap, the 1,000 port creates (each with its groups) and the start-up GC sweep. Groups, rules and groups per port are read afterwards with Neutron's API.",
  "- create / edit one policy: from Raven settled, the write to the API server, until Raven reported the policy's generation Translated (`raven_network_policy_sync_seconds` counted one more) and settled again; the time runs from the API server's answer to Neutron's answer to Raven's last write. \"Raven's own sync time\" is the histogram's sum for that generation (from the policy seen in Raven's cache to Neutron holding all of it: groups with their rules, every port with its groups).",
  "- burst: 100 pods created after the changes, each with a label set and named-port numbers the cluster already has (no new group); rule writes are POST security-group-rules + DELETE security-group-rules/{id}. Pools off: a new pod's port is created in its groups, so membership costs no extra call; with pools on, a pod takes a port of its set's pool (the claim is one PUT).",
  "- load balancers (bench/lb-peers.ts): in process, no server: `PolicyModel.loadBalancerPeers` for each of 1,000 pods (10 namespaces, each with a default deny and a policy admitting `app=api` and team t1's `app=worker` to `app=web` on `http`), as the Service module looks at every member after a pod change; each round replaces one pod object first (as the informer does), so nothing kept from the round before holds. p50 of 5 rounds after one warm-up.",
  "- per-pod rules (bench/kuryr-rules.ts): what kuryr-kubernetes' approach would need, from the state read back from the API server: per policy one group, with one `remote_ip_prefix` rule per peer pod (with an address) × port entry (a named port: per number, resolved on the policy's pods for ingress and on each peer pod for egress), one per CIDR for an ipBlock (its excepts removed as Raven does), IPv4 and IPv6 for everyone; equal rules of one policy counted once. The burst's figure is the difference before and after it: the rules each new pod's address would add.",
];
