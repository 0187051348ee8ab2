/**
 * The translation of every NetworkPolicy at once, from the caches: which security groups should exist, the rules of
 * each, and which groups each pod's port should carry. Membership, not addresses: a peer selector is a group whose
 * members are the matching pods' ports, and rules name it with `remote_group_id`, so a pod's start changes only which
 * groups its own port carries (see docs/translation.md, "NetworkPolicy").
 */
import {
  cidrContains,
  formatCidr,
  parseCidr,
  parseIp,
  StringPool,
  type DeepReadonly,
  type IpCidr,
} from '../../../core/index.ts';
import { keyOf, matchesLabels, selectorFromMap, type Namespace, type NetworkPolicy } from '../../../kube/api/index.ts';
import type { Lister } from '../../../kube/cache/index.ts';
import {
  compilePolicy,
  isolationOf,
  podSetKey,
  PolicyError,
  type CompiledPolicy,
  type Direction,
  type PodSet,
  type Protocol,
} from './compile.ts';
import { groupId, groupKey, type GroupSpec, type NamedPort } from './groups.ts';
import type { DesiredRule, Ethertype } from './rules.ts';
import type { DesiredGroup, PolicyNode, PolicyPod } from './objects.ts';
import { vipRules, type BalancedService, type PolicyService } from './service-vips.ts';
import { admittedPeers, hostCidrs, type AdmittedPeers } from './load-balancer-peers.ts';

export interface PolicyModelSources {
  /** NetworkPolicies, with the `byNamespace` index. */
  policies: Lister<NetworkPolicy>;
  namespaces: Lister<Namespace>;
  /** Pods, with the `byNamespace` index. */
  pods: Lister<PolicyPod>;
  nodes: Lister<PolicyNode>;
  /** Whether Raven wires this pod (only a pod with a port can be a member). */
  wired: (pod: DeepReadonly<PolicyPod>) => boolean;
  /** The pod's address (Raven's record of its port), for an ipBlock on a named port. */
  address: (pod: DeepReadonly<PolicyPod>) => string | undefined;
  /** Where load balancers reach their members from: what an isolated pod always accepts. */
  loadBalancerCidrs: () => readonly string[];
  /** The IP families of pod addresses (a rule naming pods is one per family). */
  podFamilies: () => readonly Ethertype[];
  /**
   * Services with Raven's load balancer (their clusterIPs are Octavia VIPs), with the `byNamespace` index: an egress
   * rule to pods also allows their VIPs. Undefined: Services are not translated.
   */
  balancedServices?: Lister<PolicyService> | undefined;
  /** Whether Raven gives this Service a load balancer. */
  balanced?: ((svc: DeepReadonly<PolicyService>) => boolean) | undefined;
  /**
   * Security groups one namespace's policies may need at most (`quotas.securityGroupsPerNamespace`; 0 or absent: no
   * limit). Policies are admitted oldest first; one that would go past it is refused as a policy Raven cannot read.
   */
  groupsPerNamespace?: number | undefined;
}

import { NamespaceGroupQuota } from './quota.ts';
import {
  addPolicyRules,
  dedupe,
  emptyIndex,
  expandTemplate,
  familyGroup,
  namedPort,
  type Family,
  type Index,
  type Template,
} from './templates.ts';

/** Whether two lists hold the same objects in the same order (the informers replace an object on each change). */
const sameObjects = (a: readonly object[], b: readonly object[]) =>
  a.length === b.length && a.every((o, i) => o === b[i]);

const OPEN_INGRESS: GroupSpec = { kind: 'open', direction: 'ingress' };
const OPEN_EGRESS: GroupSpec = { kind: 'open', direction: 'egress' };
/**
 * The NetworkPolicy translation over the caches. Pure in its inputs: each answer is computed from the listers when
 * asked (the compiled policies are kept until a policy changes), so it holds no state a crash could lose.
 */
export class PolicyModel {
  readonly #s: PolicyModelSources;
  #index: Index | undefined;
  #generation = 0;
  /** A pod's groups, kept while nothing they depend on changed (its object, its namespace's, the policies). */
  readonly #podMemo = new Map<string, { stamp: string; keys: readonly string[] }>();
  /** Pods with equal groups share one list of them (most do: a label set's pods), and every key is one string. */
  readonly #groupLists = new StringPool();
  readonly #compiled = new Map<string, { rv: string | undefined; policy: CompiledPolicy | PolicyError }>();

  constructor(sources: PolicyModelSources) {
    this.#s = sources;
  }

  /**
   * The policy compiled, or why it cannot be translated — unreadable, or past its namespace's share of groups — (its
   * target then stays isolated with no rule: fail closed).
   */
  compiled(policyKey: string): CompiledPolicy | PolicyError | undefined {
    const policy = this.#s.policies.get(policyKey);
    return policy ? (this.#current().errors.get(policyKey) ?? this.#compile(policy)) : undefined;
  }

  /** The keys of the groups a pod's port should carry, sorted; none for a pod Raven does not wire. */
  podGroups(pod: DeepReadonly<PolicyPod>): readonly string[] {
    if (!this.#s.wired(pod)) return [];
    const index = this.#current();
    const uid = pod.metadata.uid ?? '';
    const namespace = pod.metadata.namespace ?? '';
    const nsVersion = this.#s.namespaces.get(namespace)?.metadata.resourceVersion ?? '';
    const blocks = [...index.families.values()].some((f) => 'cidrs' in f.of);
    const stamp = `${index.generation}|${pod.metadata.resourceVersion ?? ''}|${nsVersion}|${blocks ? (this.#s.address(pod) ?? '') : ''}`;
    const memo = this.#podMemo.get(uid);
    if (memo?.stamp === stamp && pod.metadata.resourceVersion !== undefined) return memo.keys;
    const keys = this.#groupLists.list(this.#podGroups(pod, index));
    if (this.#podMemo.size > 100_000) this.#podMemo.clear();
    this.#podMemo.set(uid, { stamp, keys });
    return keys;
  }

  #podGroups(pod: DeepReadonly<PolicyPod>, index: Index): string[] {
    const namespace = pod.metadata.namespace ?? '';
    const isolated = new Set<Direction>();
    for (const policy of index.byNamespace.get(namespace) ?? [])
      if (this.#inSet(pod, policy.target)) for (const d of policy.isolates) isolated.add(d);
    const keys: string[] = [];
    if (!isolated.has('ingress')) keys.push(groupKey(OPEN_INGRESS));
    if (!isolated.has('egress')) keys.push(groupKey(OPEN_EGRESS));
    if (isolated.size > 0 && pod.spec.nodeName) keys.push(groupKey({ kind: 'node', node: pod.spec.nodeName }));
    for (const set of index.sets.values()) if (this.#inSet(pod, set)) keys.push(groupKey({ kind: 'pods', set }));
    for (const family of index.families.values()) {
      const port = this.#member(pod, family);
      if (port) keys.push(groupKey(familyGroup(family, port.number)));
    }
    return keys.sort();
  }

  /**
   * Every group the translation wants now, by id. Kept while what it is made of is unchanged — the policies, the nodes'
   * addresses, the load balancers' CIDRs, the pods' IP families, the numbers each named port resolves to and the
   * Services' VIP rules (pods, namespaces and Services count only through those) — as the reconcilers ask for it on
   * every key: rebuilding it was most of Raven's CPU at 1,000 pods and 100 policies (`npm run bench -- policies`).
   */
  groups(): ReadonlyMap<string, DesiredGroup> {
    const index = this.#current();
    const numbers = this.#allNumbers(index);
    const vips = this.#allVips(index);
    const nodes = this.#s.nodes.list();
    const ethertypes = this.#s.podFamilies();
    const stamp = JSON.stringify([
      index.generation,
      nodes.map((n) => [n.metadata.name, n.status?.addresses]),
      this.#s.loadBalancerCidrs(),
      [...numbers],
      ethertypes,
      [...vips],
    ]);
    if (this.#groupsMemo?.stamp === stamp) return this.#groupsMemo.groups;
    const groups = this.#groups(index, nodes, numbers, ethertypes, vips);
    this.#groupsMemo = { stamp, groups };
    return groups;
  }

  #groupsMemo: { stamp: string; groups: ReadonlyMap<string, DesiredGroup> } | undefined;
  #numbersMemo:
    | {
        generation: number;
        pods: readonly object[];
        namespaces: readonly object[];
        addresses: string;
        numbers: Map<string, number[]>;
      }
    | undefined;

  /**
   * The numbers of every named-port family, kept while the cached pods and namespaces are the same objects (the
   * informers' stores replace an object on each change, never edit it) and, with ipBlock families, the same addresses:
   * matching every pod against every family on each call was the next half of the CPU.
   */
  #allNumbers(index: Index): Map<string, number[]> {
    const pods = this.#s.pods.list();
    const namespaces = this.#s.namespaces.list();
    const blocks = [...index.families.values()].some((f) => 'cidrs' in f.of);
    const addresses = blocks ? pods.map((p) => this.#s.address(p) ?? '').join(',') : '';
    const memo = this.#numbersMemo;
    if (
      memo?.generation === index.generation &&
      memo.addresses === addresses &&
      sameObjects(memo.pods, pods) &&
      sameObjects(memo.namespaces, namespaces)
    )
      return memo.numbers;
    const numbers = new Map<string, number[]>();
    for (const family of index.families.values()) numbers.set(family.key, this.#numbers(family));
    // Copies: a lister may answer with a list it later edits in place.
    this.#numbersMemo = {
      generation: index.generation,
      pods: [...pods],
      namespaces: [...namespaces],
      addresses,
      numbers,
    };
    return numbers;
  }

  /**
   * The VIP rules of each plain holder's egress templates (see `service-vips.ts`), kept as the named ports' numbers
   * are: while the policies, the cached Services, pods and namespaces are the same objects.
   */
  #allVips(index: Index): Map<string, DesiredRule[]> {
    const { balancedServices } = this.#s;
    if (!balancedServices) return new Map();
    const services = balancedServices.list();
    const pods = this.#s.pods.list();
    const namespaces = this.#s.namespaces.list();
    const memo = this.#vipsMemo;
    if (
      memo?.generation === index.generation &&
      sameObjects(memo.services, services) &&
      sameObjects(memo.pods, pods) &&
      sameObjects(memo.namespaces, namespaces)
    )
      return memo.vips;
    const balanced = this.#balancedServices();
    const vips = new Map<string, DesiredRule[]>();
    if (balanced.length > 0)
      for (const [key, holder] of index.holders) {
        if (holder.family) continue;
        const rules = holder.templates.flatMap((t) =>
          vipRules(t, balanced, (pod) =>
            t.remote.kind === 'named' ? this.#member(pod, t.remote.family) : this.#egressTo(pod, t) || undefined,
          ),
        );
        if (rules.length > 0) vips.set(key, rules);
      }
    this.#vipsMemo = {
      generation: index.generation,
      services: [...services],
      pods: [...pods],
      namespaces: [...namespaces],
      vips,
    };
    return vips;
  }

  #vipsMemo:
    | {
        generation: number;
        services: readonly object[];
        pods: readonly object[];
        namespaces: readonly object[];
        vips: Map<string, DesiredRule[]>;
      }
    | undefined;

  #groups(
    index: Index,
    nodes: readonly DeepReadonly<PolicyNode>[],
    numbers: ReadonlyMap<string, number[]>,
    ethertypes: readonly Ethertype[],
    vips: ReadonlyMap<string, DesiredRule[]>,
  ): Map<string, DesiredGroup> {
    const out = new Map<string, { key: string; id: string; spec: GroupSpec; rules: DesiredRule[] }>();
    const add = (spec: GroupSpec, rules: DesiredRule[] = []): void => {
      const key = groupKey(spec);
      const id = groupId(key);
      const group = out.get(id) ?? { key, id, spec, rules: [] };
      group.rules.push(...rules);
      out.set(id, group);
    };
    const any = (direction: Direction): DesiredRule[] =>
      (['IPv4', 'IPv6'] as const).map((ethertype) => ({ direction, ethertype, protocol: null, min: null, max: null }));
    add(OPEN_INGRESS, any('ingress'));
    add(OPEN_EGRESS, any('egress'));
    for (const node of nodes) add({ kind: 'node', node: node.metadata.name ?? '' }, this.#nodeRules(node));
    const numbersOf = (family: Family): number[] => numbers.get(family.key) ?? [];
    for (const [holderKey, holder] of index.holders) {
      const expand = (n?: number) => [
        ...holder.templates.flatMap((t) => expandTemplate(t, n, numbersOf, ethertypes)),
        ...(vips.get(holderKey) ?? []),
      ];
      if (holder.family) for (const n of numbersOf(holder.family)) add(familyGroup(holder.family, n), expand(n));
      else add({ kind: 'pods', set: holder.set }, expand());
    }
    for (const set of index.sets.values()) add({ kind: 'pods', set });
    for (const family of index.families.values()) for (const n of numbersOf(family)) add(familyGroup(family, n));
    for (const group of out.values()) group.rules = dedupe(group.rules);
    return out;
  }

  /** Why each policy that cannot be translated cannot, by `namespace/name`. */
  errors(): ReadonlyMap<string, PolicyError> {
    return this.#current().errors;
  }

  /** The groups whose rules or membership a policy's translation makes (its part of {@link groups}). */
  policyGroups(policyKey: string): string[] {
    const compiled = this.compiled(policyKey);
    if (!compiled || compiled instanceof PolicyError) return [];
    const sets = new Set([podSetKey(compiled.target)]);
    for (const rule of [...compiled.ingress, ...compiled.egress])
      for (const peer of rule.peers ?? []) if ('set' in peer) sets.add(podSetKey(peer.set));
    return [...this.groups().values()]
      .filter((g) => g.spec.kind === 'pods' && sets.has(podSetKey(g.spec.set)))
      .map((g) => g.id);
  }

  /**
   * The pods whose groups a change of this policy may change (its version before or after): those of its target and of
   * every pod set its rules name. The pod controller's map for policy changes.
   */
  affectedPods(policy: DeepReadonly<NetworkPolicy>): string[] {
    const compiled = this.#compile(policy);
    const sets: PodSet[] = [];
    let everyone = false;
    if (compiled instanceof PolicyError) {
      const isolation = isolationOf(policy);
      if (isolation) sets.push(isolation.target);
    } else {
      sets.push(compiled.target);
      for (const rule of [...compiled.ingress, ...compiled.egress]) {
        // An egress rule on a named port to anyone, or to an ipBlock, makes groups of any pod's named port.
        const named = (rule.ports ?? []).some((p) => typeof p.port === 'string');
        if (named && (!rule.peers || rule.peers.some((p) => 'block' in p))) everyone = true;
        for (const peer of rule.peers ?? []) if ('set' in peer) sets.push(peer.set);
      }
    }
    const pods =
      everyone || sets.some((s) => s.namespace === undefined)
        ? this.#s.pods.list()
        : [...new Set(sets.map((s) => s.namespace!))].flatMap((ns) => this.#s.pods.byIndex('byNamespace', ns));
    return pods.filter((pod) => everyone || sets.some((set) => this.#inSet(pod, set))).map(keyOf);
  }

  /**
   * The groups whose existence or rules depend on this pod through a named port: its own per-number groups, and the
   * groups holding egress rules to a family it is in (their rules list the numbers the family resolves to).
   */
  namedPortGroups(pod: DeepReadonly<PolicyPod>): string[] {
    const index = this.#current();
    const ids: string[] = [];
    for (const family of index.families.values()) {
      const port = this.#member(pod, family);
      if (!port) continue;
      ids.push(groupId(groupKey(familyGroup(family, port.number))));
      for (const holder of index.holders.values())
        if (!holder.family && holder.templates.some((t) => t.remote.kind === 'named' && t.remote.family === family))
          ids.push(groupId(groupKey({ kind: 'pods', set: holder.set })));
    }
    return ids;
  }

  /**
   * The groups whose egress rules may list the VIPs of a Service selecting this pod: those holding an egress rule to a
   * set or named port the pod is in. None when no load-balanced Service selects it.
   */
  serviceVipGroups(pod: DeepReadonly<PolicyPod>): string[] {
    const services = this.#s.balancedServices?.byIndex('byNamespace', pod.metadata.namespace ?? '') ?? [];
    if (!services.some((svc) => this.#isBalanced(svc) && this.#selects(svc, pod))) return [];
    return this.#egressGroups((t) => this.#egressTo(pod, t));
  }

  /** The groups whose egress rules may list Service VIPs (a Service's change can change only theirs). */
  egressGroups(): string[] {
    return this.#s.balancedServices
      ? this.#egressGroups((t) => t.remote.kind === 'set' || t.remote.kind === 'named')
      : [];
  }

  #egressGroups(holds: (t: Template) => boolean): string[] {
    const ids: string[] = [];
    for (const holder of this.#current().holders.values())
      if (holder.family === undefined && holder.templates.some((t) => t.direction === 'egress' && holds(t)))
        ids.push(groupId(groupKey({ kind: 'pods', set: holder.set })));
    return ids;
  }

  #egressTo(pod: DeepReadonly<PolicyPod>, t: Template): boolean {
    if (t.direction !== 'egress') return false;
    if (t.remote.kind === 'set') return this.#inSet(pod, t.remote.set);
    return t.remote.kind === 'named' && this.#member(pod, t.remote.family) !== undefined;
  }

  /**
   * Who the pod's ingress policies admit on its `port`/`protocol`, as addresses: what a load balancer in front of it
   * may let through (`load-balancer-peers.ts`). A policy Raven cannot read admits no one (fail closed). A pod Raven
   * does not wire (hostNetwork) is in no group, so no policy isolates it: everyone.
   */
  loadBalancerPeers(pod: DeepReadonly<PolicyPod>, port: number, protocol: Protocol): AdmittedPeers {
    if (!this.#s.wired(pod)) return { everyone: true };
    const index = this.#current();
    return admittedPeers({
      pod,
      port,
      protocol,
      policies: index.byNamespace.get(pod.metadata.namespace ?? '') ?? [],
      inSet: (p, set) => this.#inSet(p, set),
      setAddresses: (set) => this.#setAddresses(index, set),
    });
  }

  /**
   * A set's wired pods' addresses, kept while the policies and the cached pods and namespaces are the same objects (as
   * the named ports' numbers are): a Service module's look at every member after a pod change asks for the same few
   * sets again and again, and matching every pod each time was most of its cost. A pod's address changes with its
   * object too (Raven writes its VIF on it, the kubelet its `podIP`).
   */
  #setAddresses(index: Index, set: PodSet): readonly IpCidr[] {
    const pods = this.#s.pods.list();
    const namespaces = this.#s.namespaces.list();
    let memo = this.#addressMemo;
    if (
      !memo ||
      memo.generation !== index.generation ||
      !sameObjects(memo.pods, pods) ||
      !sameObjects(memo.namespaces, namespaces)
    )
      memo = this.#addressMemo = {
        generation: index.generation,
        pods: [...pods],
        namespaces: [...namespaces],
        sets: new Map(),
      };
    const key = podSetKey(set);
    let cidrs = memo.sets.get(key);
    if (!cidrs) {
      const candidates = set.namespace !== undefined ? this.#s.pods.byIndex('byNamespace', set.namespace) : pods;
      const members = candidates.filter((p) => this.#s.wired(p) && this.#inSet(p, set));
      cidrs = hostCidrs(members.map((p) => this.#s.address(p)));
      memo.sets.set(key, cidrs);
    }
    return cidrs;
  }

  #addressMemo:
    | {
        generation: number;
        pods: readonly object[];
        namespaces: readonly object[];
        sets: Map<string, readonly IpCidr[]>;
      }
    | undefined;

  /** The keys of the pods that should carry the group of this key. */
  members(key: string): string[] {
    return this.#s.pods
      .list()
      .filter((pod) => this.podGroups(pod).includes(key))
      .map(keyOf);
  }

  /** The load-balanced Services with a selector, and the wired pods each selects. */
  #balancedServices(): BalancedService[] {
    const { balancedServices } = this.#s;
    if (!balancedServices) return [];
    return balancedServices
      .list()
      .filter((svc) => this.#isBalanced(svc))
      .map((service) => ({
        service,
        backends: this.#s.pods
          .byIndex('byNamespace', service.metadata.namespace ?? '')
          .filter((pod) => this.#s.wired(pod) && this.#selects(service, pod)),
      }));
  }

  /** A Service Raven load-balances, with a selector (one without has no backends Raven knows of). */
  #isBalanced(svc: DeepReadonly<PolicyService>): boolean {
    return this.#s.balanced?.(svc) === true && Object.keys(svc.spec?.selector ?? {}).length > 0;
  }

  #selects(svc: DeepReadonly<PolicyService>, pod: DeepReadonly<PolicyPod>): boolean {
    return matchesLabels(selectorFromMap(svc.spec?.selector), pod.metadata.labels);
  }

  #nodeRules(node: DeepReadonly<PolicyNode>): DesiredRule[] {
    const rules: DesiredRule[] = [];
    const prefix = (text: string) => {
      const parsed = parseCidr(text.includes('/') ? text : `${text}/${parseIp(text)?.version === 6 ? 128 : 32}`);
      return (
        parsed && {
          remotePrefix: formatCidr(parsed.cidr),
          ethertype: parsed.cidr.version === 6 ? ('IPv6' as const) : ('IPv4' as const),
        }
      );
    };
    // Kubernetes: traffic to and from the pod's own node is always allowed (kubelet probes).
    for (const a of node.status?.addresses ?? []) {
      const p = a.type === 'InternalIP' ? prefix(a.address) : undefined;
      if (p)
        for (const direction of ['ingress', 'egress'] as const)
          rules.push({ direction, protocol: null, min: null, max: null, ...p });
    }
    for (const cidr of this.#s.loadBalancerCidrs()) {
      const p = prefix(cidr);
      if (p) rules.push({ direction: 'ingress', protocol: null, min: null, max: null, ...p });
    }
    return rules;
  }

  /** The numbers a family's named port resolves to on its member pods. */
  #numbers(family: Family): number[] {
    const pods =
      'set' in family.of && family.of.set.namespace !== undefined
        ? this.#s.pods.byIndex('byNamespace', family.of.set.namespace)
        : this.#s.pods.list();
    const found = new Set<number>();
    for (const pod of pods) {
      const port = this.#member(pod, family);
      if (port) found.add(port.number);
    }
    return [...found].sort((a, b) => a - b);
  }

  /** The pod's named port when the pod is of the family. */
  #member(pod: DeepReadonly<PolicyPod>, family: Family): NamedPort | undefined {
    if (!this.#s.wired(pod)) return undefined;
    const port = namedPort(pod, family.name, family.protocol);
    if (!port) return undefined;
    if ('set' in family.of) return this.#inSet(pod, family.of.set) ? port : undefined;
    const address = parseIp(this.#s.address(pod) ?? '');
    return address && family.of.cidrs.some((c) => cidrContains(c, address)) ? port : undefined;
  }

  #inSet(pod: DeepReadonly<PolicyPod>, set: PodSet): boolean {
    const namespace = pod.metadata.namespace ?? '';
    if (set.namespace !== undefined ? set.namespace !== namespace : !this.#namespaceMatches(namespace, set))
      return false;
    return matchesLabels(set.pods, pod.metadata.labels);
  }

  #namespaceMatches(namespace: string, set: PodSet): boolean {
    const labels = this.#s.namespaces.get(namespace)?.metadata.labels;
    return matchesLabels(set.namespaces!, labels);
  }

  #compile(policy: DeepReadonly<NetworkPolicy>): CompiledPolicy | PolicyError {
    const key = keyOf(policy);
    const rv = policy.metadata.resourceVersion;
    const cached = this.#compiled.get(key);
    if (cached && cached.rv === rv && rv !== undefined) return cached.policy;
    let compiled: CompiledPolicy | PolicyError;
    try {
      compiled = compilePolicy(policy);
    } catch (err) {
      compiled = err instanceof PolicyError ? err : new PolicyError(String(err));
    }
    this.#compiled.set(key, { rv, policy: compiled });
    return compiled;
  }

  #current(): Index {
    const policies = this.#s.policies.list();
    const signature = policies.map((p) => `${keyOf(p)}@${p.metadata.resourceVersion ?? ''}`).join(' ');
    if (this.#index?.signature === signature) return this.#index;
    const index = emptyIndex(signature, ++this.#generation);
    const live = new Set<string>();
    const quota = new NamespaceGroupQuota(this.#s.groupsPerNamespace ?? 0);
    for (const policy of quota.admissionOrder(policies)) {
      const key = keyOf(policy);
      live.add(key);
      let compiled = this.#compile(policy);
      if (!(compiled instanceof PolicyError)) compiled = quota.admit(compiled);
      if (compiled instanceof PolicyError) {
        index.errors.set(key, compiled);
        // Fail closed: the pods it selects stay isolated in its directions, with none of its rules.
        const isolation = isolationOf(policy);
        if (!isolation) continue;
        compiled = isolation;
      }
      const list = index.byNamespace.get(compiled.namespace) ?? [];
      list.push(compiled);
      index.byNamespace.set(compiled.namespace, list);
      addPolicyRules(index, compiled);
    }
    for (const key of this.#compiled.keys()) if (!live.has(key)) this.#compiled.delete(key);
    this.#index = index;
    return index;
  }
}
