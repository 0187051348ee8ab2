/**
 * A NetworkPolicy read the way Kubernetes defines it (`networking.k8s.io/v1`), into a form the translation and the
 * tests' evaluator share: who the policy selects, which directions it isolates, and each rule's peers and ports with
 * every default applied. Nothing here knows of Neutron.
 */
import { errorMessage, parseCidr, RavenError, type DeepReadonly, type IpCidr } from '../../../core/index.ts';
import {
  everythingSelector,
  formatLabelSelector,
  selectorFromLabelSelector,
  type LabelSelector,
  type LabelSelectorExpr,
  type NetworkPolicy,
  type NetworkPolicyPeer,
  type NetworkPolicyPort,
} from '../../../kube/api/index.ts';

export type Direction = 'ingress' | 'egress';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/**
 * Pods by selector: those of one namespace (a policy's own, for its `podSelector` and a peer with a `podSelector` only),
 * or those of every namespace a `namespaceSelector` matches; in both, only pods `pods` matches.
 */
export interface PodSet {
  namespace?: string;
  namespaces?: LabelSelectorExpr;
  pods: LabelSelectorExpr;
}

/** An `ipBlock`: its CIDR without its excepts. */
export interface AddressBlock {
  cidr: IpCidr;
  except: IpCidr[];
}

export type Peer = { set: PodSet } | { block: AddressBlock };

/**
 * A port entry with its defaults: protocol TCP when absent; no `port` means every port of the protocol; a named port
 * is resolved on the pod the traffic goes to (the selected pod for ingress, the peer for egress); `endPort` makes a
 * range with a numeric `port`.
 */
export interface PortMatch {
  protocol: Protocol;
  port?: number | string;
  endPort?: number;
}

/** One ingress or egress rule: `peers` undefined means every source (or destination), `ports` undefined every port. */
export interface CompiledRule {
  peers?: Peer[];
  ports?: PortMatch[];
}

export interface CompiledPolicy {
  namespace: string;
  name: string;
  target: PodSet;
  /** The directions the policy isolates its pods in (`policyTypes`, with Kubernetes' defaulting). */
  isolates: ReadonlySet<Direction>;
  ingress: CompiledRule[];
  egress: CompiledRule[];
}

/** A policy Raven cannot read: it says why (the `TranslationFailed` Event). */
export class PolicyError extends RavenError {
  constructor(message: string) {
    super('NETWORK_POLICY_INVALID', message);
  }
}

const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];

/**
 * The policy as Kubernetes reads it. `policyTypes` absent or empty: Ingress, plus Egress when the policy has egress
 * rules (the API server's defaulting, applied again in case the stored object lacks it). Rules of a direction the
 * policy does not isolate are ignored, as Kubernetes ignores them.
 * @throws PolicyError for what validation would have refused (a bad selector, CIDR, port or protocol).
 */
export function compilePolicy(policy: DeepReadonly<NetworkPolicy>): CompiledPolicy {
  const { namespace, name, target, isolates } = targetOf(policy);
  const spec = policy.spec;
  const rules = (direction: Direction, list: readonly DeepReadonly<RuleLike>[] | undefined): CompiledRule[] =>
    isolates.has(direction)
      ? (list ?? []).map((r, i) => compileRule(namespace, r.from ?? r.to, r.ports, `spec.${direction}[${i}]`))
      : [];
  return {
    namespace,
    name,
    target,
    isolates,
    ingress: rules('ingress', spec?.ingress),
    egress: rules('egress', spec?.egress),
  };
}

/**
 * Only whom the policy selects and in which directions, without its rules: what still holds of a policy whose rules
 * cannot be read (its pods stay isolated: fail closed). Undefined when even its podSelector is bad.
 */
export function isolationOf(policy: DeepReadonly<NetworkPolicy>): CompiledPolicy | undefined {
  try {
    return { ...targetOf(policy), ingress: [], egress: [] };
  } catch {
    return undefined;
  }
}

type RuleLike = { from?: NetworkPolicyPeer[]; to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] };

function targetOf(
  policy: DeepReadonly<NetworkPolicy>,
): Pick<CompiledPolicy, 'namespace' | 'name' | 'target' | 'isolates'> {
  const namespace = policy.metadata.namespace ?? '';
  const spec = policy.spec;
  const declared = spec?.policyTypes ?? [];
  const types = declared.length > 0 ? declared : ['Ingress', ...((spec?.egress?.length ?? 0) > 0 ? ['Egress'] : [])];
  // A policy's podSelector is a struct in Kubernetes: absent is empty, every pod of the namespace.
  return {
    namespace,
    name: policy.metadata.name ?? '',
    target: { namespace, pods: selector(spec?.podSelector ?? {}, 'spec.podSelector') },
    isolates: new Set<Direction>(types.map((t) => (t === 'Egress' ? 'egress' : 'ingress'))),
  };
}

function compileRule(
  namespace: string,
  peers: readonly DeepReadonly<NetworkPolicyPeer>[] | undefined,
  ports: readonly DeepReadonly<NetworkPolicyPort>[] | undefined,
  at: string,
): CompiledRule {
  const rule: CompiledRule = {};
  // An absent or empty list matches everything (Kubernetes: "If this field is empty or missing, this rule matches all").
  if (peers && peers.length > 0) rule.peers = peers.map((p, i) => compilePeer(namespace, p, `${at}.peers[${i}]`));
  if (ports && ports.length > 0) rule.ports = ports.map((p, i) => compilePort(p, `${at}.ports[${i}]`));
  return rule;
}

function compilePeer(namespace: string, peer: DeepReadonly<NetworkPolicyPeer>, at: string): Peer {
  const { podSelector, namespaceSelector, ipBlock } = peer;
  if (ipBlock) {
    if (podSelector || namespaceSelector) throw new PolicyError(`${at}: ipBlock may not be combined with selectors`);
    const cidr = parseCidr(ipBlock.cidr)?.cidr;
    if (!cidr) throw new PolicyError(`${at}.ipBlock.cidr: ${JSON.stringify(ipBlock.cidr)} is not a CIDR`);
    const except = (ipBlock.except ?? []).map((e, i) => {
      const parsed = parseCidr(e)?.cidr;
      if (!parsed) throw new PolicyError(`${at}.ipBlock.except[${i}]: ${JSON.stringify(e)} is not a CIDR`);
      return parsed;
    });
    return { block: { cidr, except } };
  }
  if (!podSelector && !namespaceSelector) throw new PolicyError(`${at}: must specify a peer`);
  const pods = podSelector ? selector(podSelector, `${at}.podSelector`) : everythingSelector;
  // Both in one peer: the pods podSelector matches in the namespaces namespaceSelector matches (an AND).
  return namespaceSelector
    ? { set: { namespaces: selector(namespaceSelector, `${at}.namespaceSelector`), pods } }
    : { set: { namespace, pods } };
}

function compilePort(port: DeepReadonly<NetworkPolicyPort>, at: string): PortMatch {
  const protocol = (port.protocol ?? 'TCP') as Protocol;
  if (!PROTOCOLS.includes(protocol))
    throw new PolicyError(`${at}.protocol: ${JSON.stringify(port.protocol)} is not TCP, UDP or SCTP`);
  const out: PortMatch = { protocol };
  if (port.port === undefined || port.port === null) {
    if (port.endPort !== undefined) throw new PolicyError(`${at}.endPort: needs a numeric port`);
    return out;
  }
  if (typeof port.port === 'string' && !/^\d+$/.test(port.port)) {
    if (port.endPort !== undefined) throw new PolicyError(`${at}.endPort: may not be used with a named port`);
    return { ...out, port: port.port };
  }
  const number = Number(port.port);
  if (!Number.isInteger(number) || number < 1 || number > 65535)
    throw new PolicyError(`${at}.port: ${JSON.stringify(port.port)} is not a port number (1-65535)`);
  out.port = number;
  if (port.endPort !== undefined) {
    if (!Number.isInteger(port.endPort) || port.endPort < number || port.endPort > 65535)
      throw new PolicyError(`${at}.endPort: must be a port number no lower than port ${number}`);
    out.endPort = port.endPort;
  }
  return out;
}

function selector(sel: DeepReadonly<LabelSelector>, at: string): LabelSelectorExpr {
  try {
    return selectorFromLabelSelector(sel as LabelSelector);
  } catch (err) {
    throw new PolicyError(`${at}: ${errorMessage(err)}`);
  }
}

/** A pod set's canonical text: equal sets of pods by equal selectors have equal keys. */
export function podSetKey(set: PodSet): string {
  const where = set.namespace !== undefined ? `ns=${set.namespace}` : `nss=${formatLabelSelector(set.namespaces!)}`;
  return `${where}|pods=${formatLabelSelector(set.pods)}`;
}
