import { cidrContains, parseCidr, parseIp, unmapIPv4, type DeepReadonly } from '../../core/index.ts';
import type { Pod } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';

/**
 * Which endpoint addresses may become a Service's pool members. An EndpointSlice is written by whoever may write
 * slices in the Service's namespace, so a hand-written one could name another namespace's pod and put it behind this
 * namespace's public floating IP (CVE-2021-25740 is upstream's version). A member must be:
 * - a pod of the Service's own namespace: an address some pod holds (`status.podIPs`, the kubelet's) counts for that
 *   pod's namespace only; an address in the namespace's own pod subnet (the `namespace` strategy) is its own;
 * - or, for a Service without a selector (one that points outside the cluster, as upstream intends), an address
 *   outside every range the cluster's pods and Services take.
 */

/** The index of pods by address (`status.podIP` and `status.podIPs`): `pods.addIndexers(podIpIndexers)`. */
export const POD_IP_INDEX = 'byPodIp';

export const podIpIndexers = {
  [POD_IP_INDEX]: (pod: DeepReadonly<Pod>): string[] => {
    const ips = [pod.status?.podIP, ...(pod.status?.podIPs ?? []).map((p) => p.ip)];
    return [...new Set(ips.filter((ip): ip is string => Boolean(ip)))];
  },
};

export interface MemberScope {
  namespace: string;
  /** The Service has no selector: its endpoints may lie outside the cluster. */
  selectorless: boolean;
  /** Ranges only this namespace's pods take (its own subnet, `namespace` strategy). */
  own: readonly string[];
  /** Ranges every namespace's pods share (`shared` strategy): an address there must be a pod of the namespace. */
  shared: readonly string[];
  /** Every other range of the cluster's pods and Services. */
  cluster: readonly string[];
  /** Pods indexed by {@link POD_IP_INDEX}. Absent: an address in a shared range is taken as the namespace's. */
  pods?: Lister<Pod> | undefined;
}

export interface MemberFilter {
  admit(address: string): boolean;
  /** Refused addresses, each with why. */
  refused: Map<string, string>;
  /**
   * Refused because no pod holds them yet, on the shared subnet: the pods' watch may be behind the slices' (two
   * streams), so the Service is looked at again rather than left without a member until something else changes.
   */
  unknown: Set<string>;
}

/** The filter for one reconcile of one Service: {@link MemberScope}'s rules, remembering what it refused. */
export function memberFilter(scope: MemberScope): MemberFilter {
  const refused = new Map<string, string>();
  const unknown = new Set<string>();
  const ranges = (list: readonly string[]) => list.flatMap((c) => parseCidr(c)?.cidr ?? []);
  const [own, shared, cluster] = [ranges(scope.own), ranges(scope.shared), ranges(scope.cluster)];
  const ns = scope.namespace;
  const refuse = (address: string, why: string): false => {
    refused.set(address, why);
    return false;
  };
  const admit = (address: string): boolean => {
    const parsed = parseIp(address);
    if (!parsed) return refuse(address, 'not an IP address');
    const ip = unmapIPv4(parsed);
    const within = (list: typeof own) => list.some((c) => cidrContains(c, ip));
    const holders = scope.pods?.byIndex(POD_IP_INDEX, address) ?? [];
    if (holders.length > 0) {
      if (holders.some((p) => p.metadata.namespace === ns)) return true;
      return refuse(address, `the address of a pod of another namespace, not of ${ns}`);
    }
    if (within(own)) return true;
    if (within(shared)) {
      if (!scope.pods) return true;
      unknown.add(address);
      return refuse(address, `on the pods' subnet, and no pod of namespace ${ns} has it`);
    }
    if (within(cluster)) return refuse(address, "inside the cluster's pod or service ranges");
    if (scope.selectorless) return true;
    return refuse(address, 'outside the cluster: only a Service without a selector may point there');
  };
  return { admit, refused, unknown };
}

/** The one Warning for what a reconcile refused: at most five addresses named, the rest counted. */
export function describeRefused(service: string, refused: ReadonlyMap<string, string>): string {
  const named = [...refused].slice(0, 5).map(([address, why]) => `${address} (${why})`);
  const more = refused.size > 5 ? `, and ${refused.size - 5} more` : '';
  return `${refused.size} endpoint address(es) of service ${service} are not members: ${named.join(', ')}${more}; members come only from the Service's own namespace, or, for a Service without a selector, from outside the cluster`;
}
