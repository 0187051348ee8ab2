/**
 * What the per-pod-rule translation (kuryr-kubernetes: one `remote_ip_prefix` rule per peer pod address per port and
 * protocol, in one security group per policy) would need for the same policies and pods: the comparison the
 * `policies` bench prints beside Raven's own count. A calculator over the cluster's state, not a translation: it
 * writes nothing, and reads the policies with Raven's parser (`compilePolicy`, Kubernetes' semantics) so both sides
 * read the same rules.
 *
 * The model, per policy (its rules are never shared with another policy's):
 * - a peer that names pods (`podSelector`, `namespaceSelector`, or both): one rule per matching pod that has an address
 *   (Raven wired it) × each port entry (no `ports`: one rule, every port);
 * - an `ipBlock`: one rule per CIDR of the block minus its excepts (the fewest that cover it, as Raven writes) × each
 *   port entry;
 * - no peers (everyone): IPv4 and IPv6 × each port entry;
 * - a named port: on ingress, one rule per number it resolves to among the policy's own pods; on egress to pods, the
 *   peer pod's own number (a pod without the port adds none);
 * - equal rules of one policy are one rule.
 */
import { cidrExclude, formatCidr } from '../src/core/index.ts';
import { everythingSelector, matchesLabels, type Namespace, type NetworkPolicy } from '../src/kube/api/index.ts';
import {
  compilePolicy,
  type CompiledRule,
  type Direction,
  type PodSet,
  type PortMatch,
} from '../src/reconcilers/index.ts';

const EVERY_POD: PodSet = { namespaces: everythingSelector, pods: everythingSelector };

/** What the calculator reads of a pod. */
export interface KuryrPod {
  metadata: { namespace?: string; name?: string; labels?: Record<string, string> };
  spec?: { containers?: { ports?: { name?: string; containerPort: number; protocol?: string }[] }[] };
}

export interface KuryrState {
  namespaces: readonly Namespace[];
  /** Only pods with an address count (Raven's wired pods: those with a VIF). */
  pods: readonly KuryrPod[];
  policies: readonly NetworkPolicy[];
}

export interface KuryrCount {
  rules: number;
  /** Of those, the rules naming one pod's address: the ones a pod start or delete writes. */
  perPodRules: number;
  /** Policies the parser refused (counted as no rules, as they would have none). */
  refused: number;
}

/** The per-pod-rule count for the whole state. */
export function kuryrRuleCount(state: KuryrState): KuryrCount {
  const nsLabels = new Map(state.namespaces.map((n) => [n.metadata.name ?? '', n.metadata.labels]));
  const inSet = (pod: KuryrPod, set: PodSet): boolean => {
    const ns = pod.metadata.namespace ?? '';
    const nsOk = set.namespace !== undefined ? set.namespace === ns : matchesLabels(set.namespaces!, nsLabels.get(ns));
    return nsOk && matchesLabels(set.pods, pod.metadata.labels);
  };
  const named = (pod: KuryrPod, port: PortMatch): number | undefined => {
    for (const c of pod.spec?.containers ?? [])
      for (const p of c.ports ?? [])
        if (p.name === port.port && (p.protocol ?? 'TCP') === port.protocol) return p.containerPort;
    return undefined;
  };
  let rules = 0;
  let perPodRules = 0;
  let refused = 0;
  for (const policy of state.policies) {
    let compiled;
    try {
      compiled = compilePolicy(policy);
    } catch {
      refused++;
      continue;
    }
    const targets = state.pods.filter((p) => inSet(p, compiled.target));
    const texts = new Set<string>();
    const perPod = new Set<string>();
    const add = (text: string, pod: boolean): void => {
      texts.add(text);
      if (pod) perPod.add(text);
    };
    const rulesOf = (direction: Direction, rule: CompiledRule): void => {
      for (const port of rule.ports ?? [undefined]) {
        // The port ranges an entry stands for, as `proto:min-max` texts; a named ingress port: its numbers on the targets.
        const fixed = (): string[] => {
          if (!port) return ['any'];
          if (port.port === undefined) return [`${port.protocol}:all`];
          if (typeof port.port === 'number') return [`${port.protocol}:${port.port}-${port.endPort ?? port.port}`];
          if (direction === 'egress') return []; // resolved per peer pod below
          const numbers = new Set(targets.flatMap((t) => named(t, port) ?? []));
          return [...numbers].map((n) => `${port.protocol}:${n}-${n}`);
        };
        const egressNamed = direction === 'egress' && typeof port?.port === 'string';
        for (let peer of rule.peers ?? [undefined]) {
          // Egress on a named port to everyone: every pod with the port is a destination.
          if (!peer && egressNamed) peer = { set: EVERY_POD };
          if (!peer) {
            for (const range of fixed())
              for (const eth of ['IPv4', 'IPv6']) add(`${direction} ${range} any ${eth}`, false);
            continue;
          }
          // An egress named port to an ipBlock needs the pods' addresses: not in the bench's mix (no rule counted).
          if ('block' in peer) {
            for (const cidr of cidrExclude(peer.block.cidr, peer.block.except))
              for (const range of fixed()) add(`${direction} ${range} ${formatCidr(cidr)}`, false);
            continue;
          }
          for (const pod of state.pods) {
            if (!inSet(pod, peer.set)) continue;
            const ip = `${pod.metadata.namespace}/${pod.metadata.name}`;
            if (egressNamed) {
              const n = named(pod, port);
              if (n !== undefined) add(`${direction} ${port.protocol}:${n}-${n} ${ip}`, true);
            } else for (const range of fixed()) add(`${direction} ${range} ${ip}`, true);
          }
        }
      }
    };
    for (const rule of compiled.ingress) rulesOf('ingress', rule);
    for (const rule of compiled.egress) rulesOf('egress', rule);
    rules += texts.size;
    perPodRules += perPod.size;
  }
  return { rules, perPodRules, refused };
}
