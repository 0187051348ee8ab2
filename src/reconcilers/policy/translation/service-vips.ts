/**
 * Egress to a Service's load balancer. Kubernetes applies NetworkPolicy after kube-proxy's DNAT, so a pod allowed to
 * reach some pods may reach them through their Service. With Raven a load-balanced Service's clusterIP is an Octavia
 * VIP: the packet leaves the pod addressed to the VIP, which a rule naming the pods' group does not match. So an egress
 * rule to pods also allows the VIPs (each clusterIP, on the Service's port) of the load-balanced Services that send
 * that port to one of those pods, as kuryr-kubernetes did. The VIP then reaches every backend of the Service: the
 * granularity is the Service (docs/policy.md).
 */
import { formatCidr, parseCidr, parseIp, type DeepReadonly } from '../../../core/index.ts';
import type { Protocol } from './compile.ts';
import type { NamedPort } from './groups.ts';
import type { PolicyPod } from './objects.ts';
import type { DesiredRule } from './rules.ts';
import { namedPort, type Template } from './templates.ts';

/** What the translation reads of a Service: its selector, clusterIPs and ports. */
export interface PolicyService {
  metadata: { namespace?: string | undefined; name?: string | undefined };
  spec?:
    | {
        selector?: Record<string, string> | undefined;
        clusterIP?: string | undefined;
        clusterIPs?: string[] | undefined;
        ports?: { port: number; protocol?: string | undefined; targetPort?: number | string | undefined }[] | undefined;
      }
    | undefined;
}

/** A load-balanced Service and the pods its selector picks (Raven wires them). */
export interface BalancedService {
  service: DeepReadonly<PolicyService>;
  backends: readonly DeepReadonly<PolicyPod>[];
}

/**
 * The VIP rules an egress template adds: for each Service port of the template's protocol whose target, on a backend
 * the template's remote holds (`peerPort`: that pod's port of a named-port remote, `true` for a pod of a plain set,
 * undefined for a pod outside), lies in the template's ports. None for other templates.
 */
export function vipRules(
  t: Template,
  services: readonly BalancedService[],
  peerPort: (pod: DeepReadonly<PolicyPod>) => NamedPort | true | undefined,
): DesiredRule[] {
  if (t.direction !== 'egress' || (t.remote.kind !== 'set' && t.remote.kind !== 'named')) return [];
  const rules: DesiredRule[] = [];
  for (const { service, backends } of services) {
    const peers = backends.flatMap((pod) => {
      const port = peerPort(pod);
      return port ? [{ pod, port }] : [];
    });
    if (peers.length === 0) continue;
    for (const sp of service.spec?.ports ?? []) {
      const protocol = (sp.protocol ?? 'TCP') as Protocol;
      if (t.protocol !== null && t.protocol !== protocol) continue;
      const allowed = peers.some(({ pod, port }) => {
        const target = targetNumber(pod, sp, protocol);
        if (target === undefined) return false;
        if (port !== true) return port.protocol === protocol && port.number === target;
        return t.range === undefined || (target >= t.range[0] && target <= t.range[1]);
      });
      if (!allowed) continue;
      for (const address of clusterIPs(service)) {
        const version = parseIp(address)?.version;
        const host = version && parseCidr(`${address}/${version === 6 ? 128 : 32}`);
        if (!host) continue;
        rules.push({
          direction: 'egress',
          ethertype: version === 6 ? 'IPv6' : 'IPv4',
          protocol: protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp',
          min: sp.port,
          max: sp.port,
          remotePrefix: formatCidr(host.cidr),
        });
      }
    }
  }
  return rules;
}

/** The port a Service port sends to on `pod`: `targetPort` as a number, or the pod's port of that name; else `port`. */
function targetNumber(
  pod: DeepReadonly<PolicyPod>,
  sp: { port: number; targetPort?: number | string | undefined },
  protocol: Protocol,
): number | undefined {
  if (typeof sp.targetPort === 'string') return namedPort(pod, sp.targetPort, protocol)?.number;
  return sp.targetPort ?? sp.port;
}

function clusterIPs(service: DeepReadonly<PolicyService>): readonly string[] {
  const spec = service.spec;
  const ips = spec?.clusterIPs?.length ? spec.clusterIPs : spec?.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => ip !== 'None');
}
