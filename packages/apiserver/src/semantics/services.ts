import { RavenError } from '../../../../src/core/index.ts';
import type { KubeObject, Service, ServiceSpec, StatusCause } from '../../../../src/kube/api/index.ts';
import type { PortAllocator, ServiceIpFamilies } from '../allocators/index.ts';
import { ApiError, apiErrors } from '../http/errors.ts';
import { builtinResources } from '../resources/index.ts';
import { invalid as invalidCause } from '../validation/field.ts';
import type { KindHooks } from './types.ts';

const serviceDef = builtinResources.find((d) => d.kind === 'Service' && d.group === '')!;

function specOf(obj: Service | undefined): ServiceSpec {
  return obj?.spec ?? {};
}

function needsClusterIp(spec: ServiceSpec): boolean {
  return spec.type !== 'ExternalName' && spec.clusterIP !== 'None';
}

function needsNodePorts(spec: ServiceSpec): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

function invalid(obj: KubeObject, field: string, value: unknown, err: unknown): ApiError {
  const detail = err instanceof RavenError ? err.message : String(err);
  const cause: StatusCause = {
    reason: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  };
  return apiErrors.invalid(serviceDef, obj.metadata.name ?? '', [cause]);
}

type Family = 'IPv4' | 'IPv6';
const familyOfIp = (ip: string): Family => (ip.includes(':') ? 'IPv6' : 'IPv4');
const otherFamily = (f: Family): Family => (f === 'IPv4' ? 'IPv6' : 'IPv4');

function invalidFields(obj: KubeObject, causes: StatusCause[]): ApiError {
  return apiErrors.invalid(serviceDef, obj.metadata.name ?? '', causes);
}

/** field.Invalid, formatted as upstream's (Go values: `[]string{"fd00::5"}`). */
const cause = (field: string, value: unknown, message: string): StatusCause => invalidCause(field, value, message);

const same = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((v, i) => v === b?.[i]);

/**
 * kube-apiserver's `initIPFamilyFields` (pkg/registry/core/service/storage/alloc.go): `ipFamilyPolicy` defaulted
 * (the old one on update; SingleStack, or RequireDualStack for a headless Service without selector), `ipFamilies`
 * inferred from `clusterIPs`, checked against the cluster's ranges (`RequireDualStack` refused on a single-stack
 * cluster, a family it has no range for refused), and the other family added for a (Prefer|Require)DualStack Service
 * on a dual-stack cluster. A PreferDualStack Service whose addresses and families are unchanged is left as it is, so a
 * cluster that changes its dual-stackness neither upgrades nor downgrades it.
 */
function initIPFamilyFields(ranges: ServiceIpFamilies, obj: Service, old: Service | undefined): void {
  const spec = specOf(obj);
  const before = old ? specOf(old) : undefined;
  if (spec.type === 'ExternalName') return;
  if (
    before &&
    before.type === spec.type &&
    spec.ipFamilyPolicy === 'PreferDualStack' &&
    before.ipFamilyPolicy === 'PreferDualStack' &&
    same(spec.clusterIPs, before.clusterIPs) &&
    same(spec.ipFamilies, before.ipFamilies)
  )
    return;
  const selectorless = Object.keys(spec.selector ?? {}).length === 0;
  const headless = spec.clusterIP === 'None';
  spec.ipFamilyPolicy ??= before?.ipFamilyPolicy ?? (headless && selectorless ? 'RequireDualStack' : 'SingleStack');
  const policy = spec.ipFamilyPolicy;
  const causes: StatusCause[] = [];
  if (before) {
    if (policy === 'SingleStack') {
      // Unchanged addresses or families and the policy set to SingleStack: the secondary goes.
      if (same(spec.clusterIPs, before.clusterIPs) && (spec.clusterIPs?.length ?? 0) > 1)
        spec.clusterIPs = spec.clusterIPs!.slice(0, 1);
      if (same(spec.ipFamilies, before.ipFamilies) && (spec.ipFamilies?.length ?? 0) > 1)
        spec.ipFamilies = spec.ipFamilies!.slice(0, 1);
    } else {
      const reduced = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
        (a?.length ?? 0) > 0 && a!.length < (b?.length ?? 0);
      if (reduced(spec.clusterIPs, before.clusterIPs))
        causes.push(cause('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"));
      if (reduced(spec.ipFamilies, before.ipFamilies))
        causes.push(cause('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"));
    }
  }
  if (policy === 'SingleStack') {
    if (spec.clusterIPs?.length === 2)
      causes.push(
        cause(
          'spec.ipFamilyPolicy',
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
        ),
      );
    if (spec.ipFamilies?.length === 2)
      causes.push(
        cause(
          'spec.ipFamilyPolicy',
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
        ),
      );
  }
  const families = [...(spec.ipFamilies ?? [])] as Family[];
  for (const [i, ip] of (spec.clusterIPs ?? []).entries()) {
    if (ip === 'None') break;
    if (i < families.length) continue;
    const family = familyOfIp(ip);
    if (!ranges.of(family))
      causes.push(cause(`spec.clusterIPs[${i}]`, spec.clusterIPs, `${family} is not configured on this cluster`));
    else families.push(family);
  }
  if (causes.length > 0) throw invalidFields(obj, causes);
  if (headless && selectorless) {
    // Headless without selector: any families, even on a single-stack cluster.
    if (families.length === 0) families.push(ranges.defaultFamily);
    if (families.length < 2 && policy !== 'SingleStack') families.push(otherFamily(families[0]!));
    spec.ipFamilies = families;
    return;
  }
  if (policy === 'RequireDualStack' && !ranges.dualStack)
    causes.push(cause('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  families.forEach((family, i) => {
    if (!ranges.of(family)) causes.push(cause(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
  });
  if (causes.length > 0) throw invalidFields(obj, causes);
  if (families.length === 0) families.push(ranges.defaultFamily);
  if (policy !== 'SingleStack' && families.length === 1 && ranges.dualStack) families.push(otherFamily(families[0]!));
  spec.ipFamilies = families;
}

/**
 * Services: defaults, the IP families (upstream's rules, above), and cluster IPs — one per family, each from its
 * family's range — and node ports taken on create (or when an update starts needing them) and given back on delete.
 * A given `spec.clusterIPs[i]` must be free and in its family's range.
 */
export function serviceHooks(ranges: ServiceIpFamilies, nodePorts: PortAllocator): KindHooks<Service> {
  return {
    defaults(obj) {
      const spec = (obj.spec ??= {});
      if (spec.clusterIP === '') delete spec.clusterIP;
      spec.type ??= 'ClusterIP';
      if (spec.type !== 'ExternalName') {
        spec.sessionAffinity ??= 'None';
        spec.internalTrafficPolicy ??= 'Cluster';
      }
      if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
      if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
      for (const port of spec.ports ?? []) {
        port.protocol ??= 'TCP';
        port.targetPort ??= port.port;
      }
      if (spec.clusterIP === undefined && spec.clusterIPs?.[0]) spec.clusterIP = spec.clusterIPs[0];
    },
    initialize(obj) {
      obj.status = { loadBalancer: {} };
    },
    allocate(obj, old) {
      const spec = specOf(obj);
      const before = specOf(old);
      const taken: Array<() => void> = [];
      // An update that leaves the cluster IPs out keeps the stored ones (`None` included), as the real server does.
      if (old && spec.type !== 'ExternalName') {
        if (spec.clusterIP === undefined && before.clusterIP !== undefined) spec.clusterIP = before.clusterIP;
        if (!spec.clusterIPs?.length && before.clusterIPs?.length && spec.clusterIP === before.clusterIP)
          spec.clusterIPs = [...before.clusterIPs];
      }
      if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
      initIPFamilyFields(ranges, obj, old);
      try {
        if (needsClusterIp(spec)) {
          const kept = old && needsClusterIp(before) ? (before.clusterIPs ?? []) : [];
          const ips: string[] = [];
          for (const [i, family] of (spec.ipFamilies ?? []).entries()) {
            const allocator = ranges.of(family)!;
            const asked = spec.clusterIPs?.[i];
            if (asked !== undefined && kept[i] === asked) {
              // Already taken when the Service was created; validation refuses a change of a set IP.
              ips.push(asked);
            } else if (asked !== undefined) {
              if (familyOfIp(asked) !== family)
                throw invalid(
                  obj,
                  `spec.clusterIPs[${i}]`,
                  asked,
                  `expected an ${family} value as indicated by \`ipFamilies[${i}]\``,
                );
              try {
                allocator.allocate(asked);
              } catch (err) {
                throw invalid(
                  obj,
                  'spec.clusterIPs',
                  spec.clusterIPs,
                  `failed to allocate IP ${asked}: ${err instanceof Error ? err.message : String(err)}`,
                );
              }
              taken.push(() => allocator.release(asked));
              ips.push(asked);
            } else {
              const ip = allocator.allocateNext();
              taken.push(() => allocator.release(ip));
              ips.push(ip);
            }
          }
          spec.clusterIPs = ips;
          spec.clusterIP = ips[0]!;
        } else if (spec.clusterIP === 'None') {
          spec.clusterIPs = ['None'];
        }
        if (needsNodePorts(spec)) {
          const kept = new Set(needsNodePorts(before) ? (before.ports ?? []).map((p) => p.nodePort) : []);
          (spec.ports ?? []).forEach((port, i) => {
            if (port.nodePort !== undefined && kept.has(port.nodePort)) return;
            if (port.nodePort !== undefined) {
              const value = port.nodePort;
              try {
                nodePorts.allocate(value);
              } catch (err) {
                throw invalid(obj, `spec.ports[${i}].nodePort`, value, err);
              }
              taken.push(() => nodePorts.release(value));
            } else {
              const value = nodePorts.allocateNext();
              port.nodePort = value;
              taken.push(() => nodePorts.release(value));
            }
          });
        }
      } catch (err) {
        for (const undo of taken) undo();
        throw err instanceof ApiError ? err : invalid(obj, 'spec', spec.clusterIP ?? '', err);
      }
    },
    release(obj, old) {
      const before = specOf(old);
      const after = obj ? specOf(obj) : undefined;
      if (needsClusterIp(before)) {
        const still = new Set(after && needsClusterIp(after) ? (after.clusterIPs ?? [after.clusterIP]) : []);
        const ips = before.clusterIPs?.length ? before.clusterIPs : before.clusterIP ? [before.clusterIP] : [];
        for (const ip of ips) if (!still.has(ip)) ranges.forIp(ip)?.release(ip);
      }
      if (needsNodePorts(before)) {
        const kept = new Set(after && needsNodePorts(after) ? (after.ports ?? []).map((p) => p.nodePort) : []);
        for (const p of before.ports ?? [])
          if (p.nodePort !== undefined && !kept.has(p.nodePort)) nodePorts.release(p.nodePort);
      }
    },
  };
}
