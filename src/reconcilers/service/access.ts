/**
 * Who a listener admits under NetworkPolicy. With the amphora provider a member sees the amphora's address, not the
 * client's, so its ingress policies cannot tell clients apart; the listener can: its `allowed_cidrs` become the peers
 * every member's policies admit on its port (a load balancer cannot pick a member per client), intersected with
 * `loadBalancerSourceRanges`. A member whose policies admit no peer on its port is left out of the pool.
 * docs/policy.md, "Load balancers (Octavia)".
 */
import { cidrIntersect, formatCidr, parseCidr, type IpCidr, type IpVersion } from '../../core/index.ts';
import type { MemberCreate } from '../../openstack/index.ts';
import type { AdmittedPeers, LoadBalancerPeers } from '../network/index.ts';
import type { LbProtocol } from './desired.ts';
import { allowedCidrs, LIMITS } from './options.ts';

/** The most `allowed_cidrs` a listener is given from policies; past it the listener admits no client (fail closed). */
export const MAX_POLICY_CIDRS = LIMITS.sourceRanges;

export interface ListenerAccessInput {
  protocol: LbProtocol;
  /** The listener's members (ready endpoints the member filter admitted). */
  members: readonly MemberCreate[];
  /** The pod (`namespace/name`) holding a member's address, if any: an address no pod holds has no policies. */
  podOf: (address: string) => string | undefined;
  peers: LoadBalancerPeers;
  /** `loadBalancerSourceRanges` (empty: open), the VIP's family, and the pods' ranges (`allowedCidrs`). */
  sourceRanges: readonly string[];
  family: IpVersion;
  podRanges: readonly string[];
}

export interface ListenerAccess {
  members: MemberCreate[];
  allowedCidrs: string[] | null;
  /** Members left out: their pod's policies admit no peer on their port. */
  notAdmitted: MemberCreate[];
  /** How many CIDRs the policies came to when that was past {@link MAX_POLICY_CIDRS} (the listener then admits none). */
  capped?: number;
}

const nobody = (family: IpVersion) => [family === 4 ? '0.0.0.0/32' : '::/128'];

/**
 * The members a listener keeps and its `allowed_cidrs`: the intersection of what each member's policies admit on its
 * port (members no policy isolates restrict nothing), within `loadBalancerSourceRanges` and the pods' ranges when
 * those are set, of the VIP's family. No member restricted: `loadBalancerSourceRanges` alone, as without policies.
 */
export function listenerAccess(input: ListenerAccessInput): ListenerAccess {
  const { family } = input;
  const members: MemberCreate[] = [];
  const notAdmitted: MemberCreate[] = [];
  let admitted: IpCidr[] | undefined;
  for (const member of input.members) {
    const pod = input.podOf(member.address);
    const peers: AdmittedPeers = pod ? input.peers(pod, member.protocol_port, input.protocol) : { everyone: true };
    if (peers.everyone) {
      members.push(member);
      continue;
    }
    if (peers.cidrs.length === 0) {
      notAdmitted.push(member);
      continue;
    }
    members.push(member);
    admitted = admitted ? cidrIntersect(admitted, peers.cidrs) : peers.cidrs;
  }
  const open = allowedCidrs(input.sourceRanges, family, input.podRanges);
  if (!admitted) return { members, allowedCidrs: open, notAdmitted };
  const within = open
    ? cidrIntersect(
        admitted,
        open.flatMap((c) => parseCidr(c)?.cidr ?? []),
      )
    : admitted;
  // Octavia takes only the primary VIP's family (a 400 for the other).
  const list = within.filter((c) => c.version === family).map(formatCidr);
  if (list.length > MAX_POLICY_CIDRS)
    return { members, allowedCidrs: nobody(family), notAdmitted, capped: list.length };
  return { members, allowedCidrs: list.length > 0 ? list.sort() : nobody(family), notAdmitted };
}
