/**
 * Who a pod's ingress policies admit on one of its ports, as addresses: what a load balancer in front of the pod may
 * let through. With the amphora provider the packet that reaches the pod comes from the amphora (a proxy: the
 * client's address is gone), so the pod's own groups cannot tell clients apart; the listener's `allowed_cidrs` can,
 * and this is what they are made from (docs/policy.md, "Load balancers (Octavia)").
 */
import { cidrExclude, cidrUnion, parseIp, type DeepReadonly, type IpCidr } from '../../../core/index.ts';
import type { CompiledPolicy, PodSet, Protocol } from './compile.ts';
import type { PolicyPod } from './objects.ts';
import { namedPort } from './templates.ts';
import type { AdmittedPeers } from '../../network/index.ts';

export type { AdmittedPeers };

export interface AdmittedPeersInput<P extends PolicyPod> {
  pod: DeepReadonly<P>;
  /** The pod's port the traffic goes to (the member's `protocol_port`) and its protocol. */
  port: number;
  protocol: Protocol;
  /** The policies of the pod's namespace (one Raven cannot read: its isolation only, with no rule). */
  policies: readonly CompiledPolicy[];
  inSet: (pod: DeepReadonly<P>, set: PodSet) => boolean;
  /**
   * The addresses of the wired pods a set selects now, as CIDRs (a pod Raven does not wire, hostNetwork, is no peer
   * by selector, as in the groups).
   */
  setAddresses: (set: PodSet) => readonly IpCidr[];
}

/**
 * The peers the pod's ingress policies admit on `port`/`protocol`: the union over the policies that select it of the
 * rules whose ports hold it (a named port resolved on the pod) — an ipBlock as written (its excepts cut out), a pod
 * or namespace selector as the addresses of the wired pods it selects, an empty `from` as everyone. Aggregated into
 * the fewest CIDRs. A pod no policy isolates for ingress admits everyone; one whose policies admit no peer on the
 * port gets an empty list.
 */
export function admittedPeers<P extends PolicyPod>(input: AdmittedPeersInput<P>): AdmittedPeers {
  const { pod, port, protocol } = input;
  const selecting = input.policies.filter((p) => p.isolates.has('ingress') && input.inSet(pod, p.target));
  if (selecting.length === 0) return { everyone: true };
  const found: IpCidr[] = [];
  for (const policy of selecting)
    for (const rule of policy.ingress) {
      const holds =
        !rule.ports ||
        rule.ports.some((m) => {
          if (m.protocol !== protocol) return false;
          if (m.port === undefined) return true;
          if (typeof m.port === 'string') return namedPort(pod, m.port, protocol)?.number === port;
          return m.port <= port && port <= (m.endPort ?? m.port);
        });
      if (!holds) continue;
      if (!rule.peers) return { everyone: true };
      for (const peer of rule.peers)
        found.push(
          ...('block' in peer ? cidrExclude(peer.block.cidr, peer.block.except) : input.setAddresses(peer.set)),
        );
    }
  return { everyone: false, cidrs: cidrUnion(found) };
}

/** Addresses as host CIDRs, aggregated: what {@link AdmittedPeersInput.setAddresses} answers. */
export function hostCidrs(addresses: Iterable<string | undefined>): IpCidr[] {
  const hosts: IpCidr[] = [];
  for (const text of addresses) {
    const ip = parseIp(text ?? '');
    if (ip) hosts.push({ version: ip.version, network: ip.value, prefixLength: ip.version === 4 ? 32 : 128 });
  }
  return cidrUnion(hosts);
}
