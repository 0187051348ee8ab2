/**
 * The security groups NetworkPolicies become, named by what they stand for: a group is a set of pods (its members are
 * their ports) or one of Raven's base groups, and its key is the canonical text of that set, so equal selectors in
 * any number of policies share one group.
 */
import { createHash } from 'node:crypto';
import { formatCidr, type IpCidr } from '../../../core/index.ts';
import { formatLabelSelector } from '../../../kube/api/index.ts';
import { podSetKey, type Direction, type PodSet, type Protocol } from './compile.ts';

/** A named container port resolved on a pod: the pods whose port `name` (of `protocol`) is `number`. */
export interface NamedPort {
  name: string;
  protocol: Protocol;
  number: number;
}

/**
 * What a group is:
 * - `open`: Raven's base group that allows every packet of a direction (what a pod no policy isolates carries);
 * - `node`: what an isolated pod on that node always allows (its node; the load balancers, for ingress);
 * - `pods`: the pods of a set (a policy's podSelector or a peer), optionally only those whose named port resolves to a
 *   number (a named port is resolved per pod);
 * - `block`: the pods whose address lies in an ipBlock and whose named port resolves to a number (an egress rule to
 *   an ipBlock on a named port: only a pod has named ports).
 */
export type GroupSpec =
  | { kind: 'open'; direction: Direction }
  | { kind: 'node'; node: string }
  | { kind: 'pods'; set: PodSet; port?: NamedPort }
  | { kind: 'block'; cidrs: readonly IpCidr[]; port: NamedPort };

function portText(port: NamedPort | undefined): string {
  return port ? `|port=${port.protocol}/${port.name}=${port.number}` : '';
}

/** The group's canonical text: equal for equal groups, different otherwise. */
export function groupKey(spec: GroupSpec): string {
  switch (spec.kind) {
    case 'open':
      return `open|${spec.direction}`;
    case 'node':
      return `node|${spec.node}`;
    case 'pods':
      return `pods|${podSetKey(spec.set)}${portText(spec.port)}`;
    case 'block':
      return `block|${spec.cidrs.map(formatCidr).join(',')}${portText(spec.port)}`;
  }
}

/**
 * Whether a new port of a pod of `namespace` waits for the group of this key while it does not exist: Raven's own
 * groups (open, node) and the groups of its namespace's pod sets — what its own namespace's policies make. Not the
 * groups only other namespaces' policies need (a `namespaceSelector` peer, an ipBlock's named port): the pod gets its
 * port without them and joins them once made. Leaving a port out of a group only takes away what that group's rules
 * allow (a group allows, never denies), so this fails closed, and one namespace's groups that cannot be made (its
 * share or the project's quota full) never keep another namespace's pods without a port.
 */
export function podWaitsFor(key: string, namespace: string): boolean {
  return key.startsWith('open|') || key.startsWith('node|') || key.startsWith(`pods|ns=${namespace}|`);
}

/** The namespace whose pods a group of this key holds, when it is one namespace's pod set (`pods|ns=<ns>|…`). */
export function namespaceOfGroup(key: string): string | undefined {
  const prefix = 'pods|ns=';
  return key.startsWith(prefix) ? key.slice(prefix.length, key.indexOf('|', prefix.length)) : undefined;
}

/**
 * The group's id in Neutron's terms: 16 hex digits of its key's SHA-256, in its tag `raven.uid=<id>` and its name. The
 * key itself can be longer than a tag or a name may be; the translation knows each desired group's id, so a group
 * whose id no desired group has is one to delete.
 */
export function groupId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** `raven/<cluster>/sg/…`: the base groups by their role, the node groups by node, the others by id. */
export function groupNameParts(spec: GroupSpec, id: string): string[] {
  switch (spec.kind) {
    case 'open':
      return ['sg', `open-${spec.direction}`];
    case 'node':
      return ['sg', 'node', spec.node];
    default:
      return ['sg', id];
  }
}

/** What the group is, for people (`openstack security group list`, `raven plan`). */
export function describeGroup(spec: GroupSpec): string {
  const port = (p: NamedPort | undefined) => (p ? ` whose port ${p.name}/${p.protocol} is ${p.number}` : '');
  switch (spec.kind) {
    case 'open':
      return `every ${spec.direction === 'ingress' ? 'incoming' : 'outgoing'} packet (pods no policy isolates)`;
    case 'node':
      return `node ${spec.node} and the load balancers (isolated pods on the node)`;
    case 'pods': {
      const { namespace, namespaces, pods } = spec.set;
      const which = formatLabelSelector(pods) || 'all';
      const where =
        namespace !== undefined ? `namespace ${namespace}` : `namespaces ${formatLabelSelector(namespaces!) || 'all'}`;
      return `pods ${which} of ${where}${port(spec.port)}`;
    }
    case 'block':
      return `pods in ${spec.cidrs.map(formatCidr).join(', ')}${port(spec.port)}`;
  }
}
