/**
 * The policies indexed for the translation: each rule as templates on the pod sets that hold them (a policy's target,
 * or its pods per number of a named port), with the sets and named-port families a group exists for.
 */
import { cidrExclude, formatCidr, type DeepReadonly, type IpCidr } from '../../../core/index.ts';
import { everythingSelector } from '../../../kube/api/index.ts';
import { podSetKey, type CompiledRule, type Direction, type PodSet, type PortMatch, type Protocol } from './compile.ts';
import type { CompiledPolicy, PolicyError } from './compile.ts';
import { groupKey, type GroupSpec, type NamedPort } from './groups.ts';
import type { DesiredRule, Ethertype } from './rules.ts';
import type { PolicyPod } from './objects.ts';

/** Where a rule's remote end is, before named ports are resolved. */
export type Remote =
  | { kind: 'any' }
  | { kind: 'cidrs'; cidrs: IpCidr[] }
  | { kind: 'set'; set: PodSet }
  /** An egress rule on a named port: the destination pods whose port resolves, per number. */
  | { kind: 'named'; family: Family };

/** Pods with a named port, per number: of a pod set, or of addresses in CIDRs. */
export interface Family {
  key: string;
  of: { set: PodSet } | { cidrs: IpCidr[] };
  name: string;
  protocol: Protocol;
}

export interface Template {
  direction: Direction;
  protocol: Protocol | null;
  /** A numeric range, or none (every port); a named ingress port is its holder's. */
  range?: [number, number];
  remote: Remote;
}

/** The policies of the moment, compiled and indexed (recomputed when a policy changes). */
export interface Index {
  signature: string;
  /** Counts rebuilds: a pod's groups computed under an older index are stale. */
  generation: number;
  byNamespace: Map<string, CompiledPolicy[]>;
  errors: Map<string, PolicyError>;
  /** Rules held by the pods of a set (plain) or by those of a named-port family (per number). */
  holders: Map<string, { set: PodSet; family?: Family; templates: Template[] }>;
  /** Every plain set a group exists for, and every family. */
  sets: Map<string, PodSet>;
  families: Map<string, Family>;
}

export const ALL_PODS: PodSet = { namespaces: everythingSelector, pods: everythingSelector };
const neutronProtocol = (p: Protocol | null) => (p === null ? null : (p.toLowerCase() as 'tcp' | 'udp' | 'sctp'));

/** An index holding nothing yet. */
export function emptyIndex(signature: string, generation: number): Index {
  const maps = { byNamespace: new Map(), errors: new Map(), holders: new Map(), sets: new Map(), families: new Map() };
  return { signature, generation, ...maps };
}

/** Indexes every rule of a policy ({@link addRule}). */
export function addPolicyRules(index: Index, policy: CompiledPolicy): void {
  for (const rule of policy.ingress) addRule(index, policy.target, 'ingress', rule);
  for (const rule of policy.egress) addRule(index, policy.target, 'egress', rule);
}

/** Indexes one rule: its templates on their holders, the sets and families they need. */
export function addRule(index: Index, target: PodSet, direction: Direction, rule: CompiledRule): void {
  const remotes: Remote[] = (rule.peers ?? [undefined]).map((peer) => {
    if (!peer) return { kind: 'any' };
    if ('block' in peer) return { kind: 'cidrs', cidrs: cidrExclude(peer.block.cidr, peer.block.except) };
    return { kind: 'set', set: peer.set };
  });
  const ports: (PortMatch | undefined)[] = rule.ports ?? [undefined];
  for (const port of ports) {
    const named = typeof port?.port === 'string' ? { name: port.port, protocol: port.protocol } : undefined;
    const range: [number, number] | undefined =
      typeof port?.port === 'number' ? [port.port, port.endPort ?? port.port] : undefined;
    for (let remote of remotes) {
      let family: Family | undefined;
      if (named && direction === 'ingress') family = familyOf(index, { set: target }, named);
      if (named && direction === 'egress') {
        // The destination resolves the name: only pods are destinations then.
        const of =
          remote.kind === 'cidrs' ? { cidrs: remote.cidrs } : { set: remote.kind === 'set' ? remote.set : ALL_PODS };
        remote = { kind: 'named', family: familyOf(index, of, named) };
      }
      if (remote.kind === 'set') index.sets.set(podSetKey(remote.set), remote.set);
      const holderKey = family ? family.key : podSetKey(target);
      const holder = index.holders.get(holderKey) ?? { set: target, ...(family ? { family } : {}), templates: [] };
      holder.templates.push({ direction, protocol: port?.protocol ?? null, ...(range ? { range } : {}), remote });
      index.holders.set(holderKey, holder);
      if (!family) index.sets.set(podSetKey(target), target);
    }
  }
}

function familyOf(index: Index, of: Family['of'], port: { name: string; protocol: Protocol }): Family {
  const where = 'set' in of ? `set ${podSetKey(of.set)}` : `cidrs ${of.cidrs.map(formatCidr).join(',')}`;
  const key = `${where}|port=${port.protocol}/${port.name}`;
  const family = index.families.get(key) ?? { key, of, ...port };
  index.families.set(key, family);
  return family;
}

export function familyGroup(family: Family, number: number): GroupSpec {
  const port = { name: family.name, protocol: family.protocol, number };
  return 'set' in family.of
    ? { kind: 'pods', set: family.of.set, port }
    : { kind: 'block', cidrs: family.of.cidrs, port };
}

/**
 * A template's Neutron rules: named ports resolved (`n` for its holder's, the destinations' for egress); a rule naming
 * a pod set is one per family the pods have addresses of (`ethertypes`).
 */
export function expandTemplate(
  t: Template,
  n: number | undefined,
  numbersOf: (f: Family) => number[],
  ethertypes: readonly Ethertype[],
): DesiredRule[] {
  const protocol = neutronProtocol(t.protocol);
  const base = (min: number | null, max: number | null) => ({ direction: t.direction, protocol, min, max });
  const [min, max] = t.range ?? (n !== undefined ? [n, n] : [null, null]);
  switch (t.remote.kind) {
    case 'any':
      return (['IPv4', 'IPv6'] as const).map((ethertype) => ({ ...base(min, max), ethertype }));
    case 'cidrs':
      return t.remote.cidrs.map((c) => ({
        ...base(min, max),
        ethertype: c.version === 6 ? 'IPv6' : 'IPv4',
        remotePrefix: formatCidr(c),
      }));
    case 'set': {
      const remoteGroup = groupKey({ kind: 'pods', set: t.remote.set });
      return ethertypes.map((ethertype) => ({ ...base(min, max), ethertype, remoteGroup }));
    }
    case 'named': {
      const family = t.remote.family;
      return numbersOf(family).flatMap((number) =>
        ethertypes.map((ethertype) => ({
          ...base(number, number),
          ethertype,
          remoteGroup: groupKey(familyGroup(family, number)),
        })),
      );
    }
  }
}

/** A pod's container port of that name and protocol. */
export function namedPort(pod: DeepReadonly<PolicyPod>, name: string, protocol: Protocol): NamedPort | undefined {
  for (const c of pod.spec.containers ?? [])
    for (const p of c.ports ?? [])
      if (p.name === name && (p.protocol ?? 'TCP') === protocol) return { name, protocol, number: p.containerPort };
  return undefined;
}

export function dedupe(rules: DesiredRule[]): DesiredRule[] {
  const seen = new Map<string, DesiredRule>();
  for (const r of rules)
    seen.set(JSON.stringify([r.direction, r.ethertype, r.protocol, r.min, r.max, r.remotePrefix, r.remoteGroup]), r);
  return [...seen.values()];
}
