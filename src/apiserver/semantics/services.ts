import { RavenError } from '../../core/index.ts';
import type { KubeObject, Service, ServiceSpec, StatusCause } from '../../kube/api/index.ts';
import type { PortAllocator, ServiceIpAllocator } from '../allocators/index.ts';
import { ApiError, apiErrors } from '../http/errors.ts';
import { builtinResources } from '../resources/index.ts';
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

/**
 * Services: defaults, and cluster IPs and node ports taken from the configured ranges on create (or when an update
 * starts needing them) and given back on delete. A given `spec.clusterIP` must be free and in range.
 */
export function serviceHooks(ips: ServiceIpAllocator, nodePorts: PortAllocator): KindHooks<Service> {
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
      // An update that leaves the cluster IP out keeps the stored one (`None` included), as the real server does.
      if (old && spec.clusterIP === undefined && before.clusterIP !== undefined && spec.type !== 'ExternalName')
        spec.clusterIP = before.clusterIP;
      try {
        if (needsClusterIp(spec)) {
          const keepsStoredIp = old !== undefined && needsClusterIp(before) && spec.clusterIP === before.clusterIP;
          if (keepsStoredIp) {
            // Already taken when the Service was created; validation refuses a change of a set IP.
          } else if (spec.clusterIP) {
            const ip = spec.clusterIP;
            try {
              ips.allocate(ip);
            } catch (err) {
              throw invalid(
                obj,
                'spec.clusterIPs',
                [ip],
                `failed to allocate IP ${ip}: ${err instanceof Error ? err.message : String(err)}`,
              );
            }
            taken.push(() => ips.release(ip));
          } else {
            const ip = ips.allocateNext();
            spec.clusterIP = ip;
            taken.push(() => ips.release(ip));
          }
          const clusterIP = spec.clusterIP!;
          spec.clusterIPs = [clusterIP];
          const v6 = clusterIP.includes(':');
          spec.ipFamilies ??= [v6 ? 'IPv6' : 'IPv4'];
          spec.ipFamilyPolicy ??= 'SingleStack';
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
      if (
        before.clusterIP &&
        needsClusterIp(before) &&
        !(after && needsClusterIp(after) && after.clusterIP === before.clusterIP)
      ) {
        ips.release(before.clusterIP);
      }
      if (needsNodePorts(before)) {
        const kept = new Set(after && needsNodePorts(after) ? (after.ports ?? []).map((p) => p.nodePort) : []);
        for (const p of before.ports ?? [])
          if (p.nodePort !== undefined && !kept.has(p.nodePort)) nodePorts.release(p.nodePort);
      }
    },
  };
}
