/**
 * NetworkPolicy truth tables (issue 16): a world of namespaces and pods, policy cases in the spirit of the upstream
 * network-policy e2e suite and the cyclonus generator, and two evaluators that must agree on every cell:
 *
 * - {@link kubernetesAllows}: written from the Kubernetes specification (`networking.k8s.io/v1` NetworkPolicy and its
 *   API documentation), independent of Raven's translation — it shares no code with `src/reconcilers/policy/translation`;
 * - {@link neutronAllows}: what Neutron's security groups let through, read from groups, rules and ports as Neutron's
 *   API shows them (the simulator's state, or a model's output cast in the same shape).
 */
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, LabelSelector } from '../../src/kube/api/index.ts';
import { resources, type KubeClient } from '../../src/kube/client/index.ts';
import type { SecurityGroupRule } from '../../src/openstack/index.ts';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface WorldNamespace {
  name: string;
  labels: Record<string, string>;
}

export interface WorldPod {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  node: string;
  ip: string;
  ports: { name: string; containerPort: number; protocol: Protocol }[];
}

export interface WorldNode {
  name: string;
  ip: string;
}

export interface World {
  namespaces: WorldNamespace[];
  pods: WorldPod[];
  nodes: WorldNode[];
  policies: NetworkPolicy[];
}

/** One end of a connection: a pod, or an address that is no pod (a node, a host outside the cluster). */
export type Endpoint = { pod: WorldPod } | { ip: string; label: string };

export interface Probe {
  protocol: Protocol;
  port: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Kubernetes, from the specification.

/** `metav1.LabelSelector` semantics: every matchLabels pair and every expression; an empty selector matches all. */
export function selectorMatches(sel: LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const values = e.values ?? [];
    if (e.operator === 'In' && !(has && values.includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && values.includes(labels[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function ipToNumber(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** IPv4 only: the worlds here are IPv4, as Raven's pod subnets are. */
export function inCidr(ip: string, cidr: string): boolean {
  if (ip.includes(':') || cidr.includes(':')) return false;
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipToNumber(ip) / size) === Math.floor(ipToNumber(base) / size);
}

function policyTypes(p: NetworkPolicy): ('Ingress' | 'Egress')[] {
  const declared = p.spec?.policyTypes ?? [];
  if (declared.length > 0) return declared;
  // The API server's defaulting: Ingress always, Egress when there are egress rules.
  return (p.spec?.egress?.length ?? 0) > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

function selects(world: World, p: NetworkPolicy, pod: WorldPod): boolean {
  return p.metadata.namespace === pod.namespace && selectorMatches(p.spec?.podSelector ?? {}, pod.labels);
}

function peerMatches(world: World, p: NetworkPolicy, peer: NetworkPolicyPeer, other: Endpoint): boolean {
  if (peer.ipBlock) {
    const ip = 'pod' in other ? other.pod.ip : other.ip;
    return inCidr(ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((e) => inCidr(ip, e));
  }
  if (!('pod' in other)) return false;
  const pod = other.pod;
  if (peer.namespaceSelector) {
    const ns = world.namespaces.find((n) => n.name === pod.namespace);
    if (!ns || !selectorMatches(peer.namespaceSelector, ns.labels)) return false;
  } else if (pod.namespace !== p.metadata.namespace) return false;
  return selectorMatches(peer.podSelector ?? {}, pod.labels);
}

/** A port entry against a probe; a named port is resolved on `target`, the pod the traffic goes to. */
function portMatches(port: NetworkPolicyPort, probe: Probe, target: Endpoint): boolean {
  if ((port.protocol ?? 'TCP') !== probe.protocol) return false;
  if (port.port === undefined) return true;
  if (typeof port.port === 'string' && !/^\d+$/.test(port.port)) {
    if (!('pod' in target)) return false;
    const named = target.pod.ports.find((c) => c.name === port.port && c.protocol === probe.protocol);
    return named?.containerPort === probe.port;
  }
  const start = Number(port.port);
  return probe.port >= start && probe.port <= (port.endPort ?? start);
}

function ruleMatches(
  world: World,
  p: NetworkPolicy,
  peers: NetworkPolicyPeer[] | undefined,
  ports: NetworkPolicyPort[] | undefined,
  other: Endpoint,
  probe: Probe,
  target: Endpoint,
): boolean {
  const peerOk = !peers || peers.length === 0 || peers.some((peer) => peerMatches(world, p, peer, other));
  const portOk = !ports || ports.length === 0 || ports.some((port) => portMatches(port, probe, target));
  return peerOk && portOk;
}

/** Whether `pod` may send `probe` to `dst` (its egress side). */
function egressAllows(world: World, pod: WorldPod, dst: Endpoint, probe: Probe): boolean {
  const policies = world.policies.filter((p) => selects(world, p, pod) && policyTypes(p).includes('Egress'));
  if (policies.length === 0) return true;
  return policies.some((p) =>
    (p.spec?.egress ?? []).some((r) => ruleMatches(world, p, r.to, r.ports, dst, probe, dst)),
  );
}

/** Whether `pod` may receive `probe` from `src` (its ingress side). */
export function ingressAllows(world: World, pod: WorldPod, src: Endpoint, probe: Probe): boolean {
  // Traffic from the pod's own node is always allowed (kubelet probes), whatever the policies.
  if (!('pod' in src) && world.nodes.some((n) => n.name === pod.node && n.ip === src.ip)) return true;
  const policies = world.policies.filter((p) => selects(world, p, pod) && policyTypes(p).includes('Ingress'));
  if (policies.length === 0) return true;
  const self: Endpoint = { pod };
  return policies.some((p) =>
    (p.spec?.ingress ?? []).some((r) => ruleMatches(world, p, r.from, r.ports, src, probe, self)),
  );
}

/** Kubernetes' answer: a connection needs the source's egress and the destination's ingress (pods' sides only). */
export function kubernetesAllows(world: World, src: Endpoint, dst: Endpoint, probe: Probe): boolean {
  if ('pod' in src && !egressAllows(world, src.pod, dst, probe)) return false;
  if ('pod' in dst && !ingressAllows(world, dst.pod, src, probe)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Neutron, from its API's view of groups, rules and ports.

/** A rule as Neutron's API shows it (the fields that decide what passes). */
export type NeutronRuleView = Pick<
  SecurityGroupRule,
  'direction' | 'ethertype' | 'protocol' | 'port_range_min' | 'port_range_max' | 'remote_ip_prefix' | 'remote_group_id'
>;

export interface NeutronView {
  /** Rules by security group id. */
  rules: Map<string, NeutronRuleView[]>;
  /** Every port with security groups: its address and groups (a port in a group is a member of it). */
  ports: { ip: string; groups: readonly string[] }[];
}

const PROTOCOL_NUMBERS: Record<string, string> = { tcp: '6', udp: '17', sctp: '132' };

function ruleAllows(view: NeutronView, rule: NeutronRuleView, remoteIp: string, probe: Probe): boolean {
  if (rule.ethertype !== (remoteIp.includes(':') ? 'IPv6' : 'IPv4')) return false;
  if (rule.protocol !== null) {
    const want = probe.protocol.toLowerCase();
    if (rule.protocol !== want && rule.protocol !== PROTOCOL_NUMBERS[want]) return false;
    if (rule.port_range_min !== null && probe.port < rule.port_range_min) return false;
    if (rule.port_range_max !== null && probe.port > rule.port_range_max) return false;
  }
  if (rule.remote_ip_prefix && !inCidr(remoteIp, rule.remote_ip_prefix)) return false;
  if (rule.remote_group_id) {
    const group = rule.remote_group_id;
    return view.ports.some((p) => p.ip === remoteIp && p.groups.includes(group));
  }
  return true;
}

function portAllows(
  view: NeutronView,
  groups: readonly string[],
  direction: 'ingress' | 'egress',
  remoteIp: string,
  probe: Probe,
): boolean {
  return groups.some((g) =>
    (view.rules.get(g) ?? []).some((r) => r.direction === direction && ruleAllows(view, r, remoteIp, probe)),
  );
}

/**
 * Neutron's answer: the source port's egress rules and the destination port's ingress rules (union over each port's
 * groups, remote groups by their members' addresses); an end that is no port is not filtered.
 */
export function neutronAllows(
  view: NeutronView,
  src: { ip: string; groups?: readonly string[] },
  dst: { ip: string; groups?: readonly string[] },
  probe: Probe,
): boolean {
  if (src.groups && !portAllows(view, src.groups, 'egress', dst.ip, probe)) return false;
  if (dst.groups && !portAllows(view, dst.groups, 'ingress', src.ip, probe)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// The world and the cases.

/** x, y, z with varied labels; pods a, b, c in each, on two nodes, with named ports that differ between pods. */
/** One probe from one pod to another. */
export interface PodCell {
  src: WorldPod;
  dst: WorldPod;
  probe: Probe;
}

export const podCellName = (c: PodCell): string =>
  `${c.src.namespace}/${c.src.name} → ${c.dst.namespace}/${c.dst.name} ${c.probe.protocol}/${c.probe.port}`;

/**
 * The cells between pods that two states of the world (the same pods, other labels or policies) both allow: what a
 * transition from one to the other must never deny. The cells hold the first state's pods.
 */
export function allowedInBoth(before: World, after: World, probes: readonly Probe[]): PodCell[] {
  const same = (p: WorldPod) => after.pods.find((q) => q.namespace === p.namespace && q.name === p.name)!;
  const both: PodCell[] = [];
  for (const src of before.pods)
    for (const dst of before.pods)
      for (const probe of src === dst ? [] : probes)
        if (
          kubernetesAllows(before, { pod: src }, { pod: dst }, probe) &&
          kubernetesAllows(after, { pod: same(src) }, { pod: same(dst) }, probe)
        )
          both.push({ src, dst, probe });
  return both;
}

export function baseWorld(): Omit<World, 'policies'> {
  const namespaces: WorldNamespace[] = [
    { name: 'x', labels: { ns: 'x', team: 'blue' } },
    { name: 'y', labels: { ns: 'y', team: 'blue' } },
    { name: 'z', labels: { ns: 'z' } },
  ];
  const pods: WorldPod[] = [];
  namespaces.forEach((ns, n) =>
    ['a', 'b', 'c'].forEach((name, i) => {
      const ports: WorldPod['ports'] = [
        { name: 'serve-80-tcp', containerPort: 80, protocol: 'TCP' },
        { name: 'serve-81-tcp', containerPort: 81, protocol: 'TCP' },
        { name: 'serve-80-udp', containerPort: 80, protocol: 'UDP' },
        // `http` is 80 on a, 81 on b, and absent on c: a named port resolves per pod.
        ...(name === 'c' ? [] : [{ name: 'http', containerPort: name === 'a' ? 80 : 81, protocol: 'TCP' as const }]),
      ];
      pods.push({
        namespace: ns.name,
        name,
        labels: { pod: name, ...(name !== 'c' ? { app: 'web' } : {}), ...(name === 'b' ? { tier: 'db' } : {}) },
        node: i === 1 ? 'node-2' : 'node-1',
        ip: `10.0.${n + 1}.${10 + i}`,
        ports,
      });
    }),
  );
  return {
    namespaces,
    pods,
    nodes: [
      { name: 'node-1', ip: '192.168.0.1' },
      { name: 'node-2', ip: '192.168.0.2' },
    ],
  };
}

export const PROBES: readonly Probe[] = [
  { protocol: 'TCP', port: 80 },
  { protocol: 'TCP', port: 81 },
  { protocol: 'UDP', port: 80 },
  { protocol: 'SCTP', port: 80 },
];

/** An address outside the cluster (in TEST-NET-1). */
export const OUTSIDE = { ip: '192.0.2.10', label: 'outside' };

/** A NetworkPolicy in `namespace`. */
export const policy = (namespace: string, name: string, spec: NetworkPolicy['spec']): NetworkPolicy => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { namespace, name },
  spec,
});

export interface PolicyCase {
  name: string;
  policies: NetworkPolicy[];
  /** A change to the world after the policies (label changes move pods in and out of selections). */
  mutate?: (world: Omit<World, 'policies'>) => void;
}

/** The policy kinds of the upstream e2e suite and cyclonus's generator, each a case. */
export function policyCases(): PolicyCase[] {
  const all = {};
  return [
    { name: 'no policy: all open', policies: [] },
    {
      name: 'default deny ingress in x',
      policies: [policy('x', 'deny', { podSelector: all, policyTypes: ['Ingress'] })],
    },
    {
      name: 'default deny egress in x',
      policies: [policy('x', 'deny', { podSelector: all, policyTypes: ['Egress'] })],
    },
    {
      name: 'default deny both in y',
      policies: [policy('y', 'deny', { podSelector: all, policyTypes: ['Ingress', 'Egress'] })],
    },
    {
      name: 'allow all ingress, deny all egress for x/a',
      policies: [
        policy('x', 'allow', {
          podSelector: { matchLabels: { pod: 'a' } },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [{}],
        }),
      ],
    },
    {
      name: 'allow from namespace y to x/a',
      policies: [
        policy('x', 'from-y', {
          podSelector: { matchLabels: { pod: 'a' } },
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }] }],
        }),
      ],
    },
    {
      name: 'allow from pod b AND namespace team=blue',
      policies: [
        policy('x', 'and', {
          podSelector: all,
          ingress: [
            {
              from: [
                { namespaceSelector: { matchLabels: { team: 'blue' } }, podSelector: { matchLabels: { pod: 'b' } } },
              ],
            },
          ],
        }),
      ],
    },
    {
      name: 'allow from pod b OR namespace z',
      policies: [
        policy('x', 'or', {
          podSelector: all,
          ingress: [
            {
              from: [
                { namespaceSelector: { matchLabels: { ns: 'z' } } },
                { podSelector: { matchLabels: { pod: 'b' } } },
              ],
            },
          ],
        }),
      ],
    },
    {
      name: 'allow from all namespaces (empty namespaceSelector) on TCP 80',
      policies: [
        policy('z', 'all-ns', {
          podSelector: { matchLabels: { pod: 'c' } },
          ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 80 }] }],
        }),
      ],
    },
    {
      name: 'ipBlock with except',
      policies: [
        policy('x', 'block', {
          podSelector: all,
          ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.2.0/24', '10.0.3.11/32'] } }] }],
        }),
      ],
    },
    {
      name: 'named port ingress (resolved per selected pod)',
      policies: [
        policy('y', 'named', {
          podSelector: all,
          ingress: [
            { from: [{ namespaceSelector: {} }], ports: [{ port: 'http' }, { port: 'serve-80-udp', protocol: 'UDP' }] },
          ],
        }),
      ],
    },
    {
      name: 'endPort range',
      policies: [
        policy('x', 'range', {
          podSelector: { matchExpressions: [{ key: 'pod', operator: 'In', values: ['a', 'b'] }] },
          ingress: [
            {
              ports: [
                { protocol: 'TCP', port: 79, endPort: 80 },
                { protocol: 'SCTP', port: 80, endPort: 90 },
              ],
            },
          ],
        }),
      ],
    },
    {
      name: 'egress to namespace z on UDP, and to pods of x',
      policies: [
        policy('x', 'egress', {
          podSelector: { matchLabels: { app: 'web' } },
          policyTypes: ['Egress'],
          egress: [
            { to: [{ namespaceSelector: { matchLabels: { ns: 'z' } } }], ports: [{ protocol: 'UDP' }] },
            { to: [{ podSelector: {} }] },
          ],
        }),
      ],
    },
    {
      name: 'egress on a named port (resolved on the destination)',
      policies: [
        policy('y', 'egress-named', {
          podSelector: all,
          policyTypes: ['Egress'],
          egress: [
            { to: [{ namespaceSelector: { matchLabels: { team: 'blue' } } }], ports: [{ port: 'http' }] },
            { ports: [{ port: 'serve-80-udp', protocol: 'UDP' }] },
          ],
        }),
      ],
    },
    {
      name: 'egress to ipBlock 0.0.0.0/0 except the pods',
      policies: [
        policy('z', 'outside', {
          podSelector: all,
          egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }] }],
        }),
      ],
    },
    {
      name: 'several policies are a union',
      policies: [
        policy('x', 'deny', { podSelector: all, policyTypes: ['Ingress'] }),
        policy('x', 'from-y-80', {
          podSelector: { matchLabels: { pod: 'a' } },
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }], ports: [{ port: 80 }] }],
        }),
        policy('x', 'from-b-81', {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [
            { from: [{ podSelector: { matchLabels: { pod: 'b' } }, namespaceSelector: {} }], ports: [{ port: 81 }] },
          ],
        }),
      ],
    },
    {
      name: 'policyTypes Egress only: its ingress rules are ignored',
      policies: [
        policy('z', 'egress-only', {
          podSelector: { matchLabels: { pod: 'a' } },
          policyTypes: ['Egress'],
          ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }],
          egress: [{ to: [{ namespaceSelector: {} }], ports: [{ port: 81 }] }],
        }),
      ],
    },
    {
      name: 'NotIn and DoesNotExist selectors',
      policies: [
        policy('y', 'expr', {
          podSelector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
          ingress: [
            { from: [{ namespaceSelector: { matchExpressions: [{ key: 'ns', operator: 'NotIn', values: ['x'] }] } }] },
          ],
        }),
      ],
    },
    {
      name: 'label changes move pods in and out of selections',
      policies: [
        policy('x', 'from-blue-web', {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [
            {
              from: [
                { namespaceSelector: { matchLabels: { team: 'blue' } }, podSelector: { matchLabels: { app: 'web' } } },
              ],
            },
          ],
        }),
      ],
      mutate: (world) => {
        // z joins team blue; y/a stops being web; x/c becomes web (now selected, so isolated).
        world.namespaces.find((n) => n.name === 'z')!.labels.team = 'blue';
        delete world.pods.find((p) => p.namespace === 'y' && p.name === 'a')!.labels.app;
        world.pods.find((p) => p.namespace === 'x' && p.name === 'c')!.labels.app = 'web';
      },
    },
  ];
}

/** Every cell of a case: each ordered pair of distinct pods, a pod and the outside, a node and a pod; each probe. */
export function cells(world: World): { src: Endpoint; dst: Endpoint; probe: Probe }[] {
  const out: { src: Endpoint; dst: Endpoint; probe: Probe }[] = [];
  const ends: Endpoint[] = world.pods.map((pod) => ({ pod }));
  for (const probe of PROBES) {
    for (const src of ends) for (const dst of ends) if (src !== dst) out.push({ src, dst, probe });
    for (const pod of ends) {
      out.push({ src: pod, dst: OUTSIDE, probe }, { src: OUTSIDE, dst: pod, probe });
      for (const node of world.nodes) out.push({ src: { ip: node.ip, label: node.name }, dst: pod, probe });
    }
  }
  return out;
}

export const endpointName = (e: Endpoint): string => ('pod' in e ? `${e.pod.namespace}/${e.pod.name}` : e.label);

/**
 * Compares the two evaluators on every cell; the mismatches as a printed matrix (rows: sources, columns:
 * destinations, per probe; `.` agree-allow, `x` agree-deny, `A` Kubernetes allows but Neutron denies, `D` the
 * reverse), or undefined when they agree everywhere.
 */
export function compareMatrix(
  world: World,
  neutron: (src: Endpoint, dst: Endpoint, probe: Probe) => boolean,
): { mismatches: number; cells: number; matrix?: string } {
  const all = cells(world);
  let mismatches = 0;
  const marks = new Map<string, string>();
  for (const { src, dst, probe } of all) {
    const k = kubernetesAllows(world, src, dst, probe);
    const n = neutron(src, dst, probe);
    if (k !== n) mismatches++;
    marks.set(
      `${endpointName(src)}|${endpointName(dst)}|${probe.protocol}/${probe.port}`,
      k === n ? (k ? '.' : 'x') : k ? 'A' : 'D',
    );
  }
  if (mismatches === 0) return { mismatches, cells: all.length };
  const names = [
    ...world.pods.map((p) => `${p.namespace}/${p.name}`),
    OUTSIDE.label,
    ...world.nodes.map((n) => n.name),
  ];
  const lines: string[] = [];
  for (const probe of PROBES) {
    const p = `${probe.protocol}/${probe.port}`;
    lines.push(`${p.padEnd(10)} ${names.map((n) => n.padStart(8)).join('')}`);
    for (const src of names)
      lines.push(
        `${src.padEnd(10)} ${names.map((dst) => (marks.get(`${src}|${dst}|${p}`) ?? ' ').padStart(8)).join('')}`,
      );
  }
  return { mismatches, cells: all.length, matrix: lines.join('\n') };
}

/** A merge patch from one label map to another (removed keys as null). */
const labelPatch = (from: Record<string, string>, to: Record<string, string>) => ({
  metadata: { labels: { ...Object.fromEntries(Object.keys(from).map((k) => [k, null])), ...to } },
});

/** One write of a relabel: the world once it is made, and the write. */
export interface RelabelStep {
  world: Omit<World, 'policies'>;
  write(client: KubeClient): Promise<void>;
}

/** The writes that take the live objects' labels from `from` to `to`, one object each: namespaces first, then pods. */
export function relabelSteps(from: Omit<World, 'policies'>, to: Omit<World, 'policies'>): RelabelStep[] {
  const same = (a: Record<string, string>, b: Record<string, string>) => JSON.stringify(a) === JSON.stringify(b);
  const steps: RelabelStep[] = [];
  let world = structuredClone(from);
  for (const ns of to.namespaces) {
    const old = from.namespaces.find((n) => n.name === ns.name)!;
    if (same(old.labels, ns.labels)) continue;
    world = structuredClone(world);
    world.namespaces.find((n) => n.name === ns.name)!.labels = { ...ns.labels };
    steps.push({
      world,
      write: async (client) =>
        void (await client.patch(resources.namespaces, ns.name, undefined, labelPatch(old.labels, ns.labels), 'merge')),
    });
  }
  for (const pod of to.pods) {
    const old = from.pods.find((p) => p.namespace === pod.namespace && p.name === pod.name)!;
    if (same(old.labels, pod.labels)) continue;
    world = structuredClone(world);
    world.pods.find((p) => p.namespace === pod.namespace && p.name === pod.name)!.labels = { ...pod.labels };
    steps.push({
      world,
      write: async (client) =>
        void (await client.patch(resources.pods, pod.name, pod.namespace, labelPatch(old.labels, pod.labels), 'merge')),
    });
  }
  return steps;
}

/** Writes the label changes from `from` to `to` to the live objects. */
export async function relabel(
  client: KubeClient,
  from: Omit<World, 'policies'>,
  to: Omit<World, 'policies'>,
): Promise<void> {
  for (const step of relabelSteps(from, to)) await step.write(client);
}
