import ipaddr from 'ipaddr.js';
import type { DeepReadonly } from '../../core/index.ts';
import {
  SERVICE_NAME_LABEL,
  type EndpointPort,
  type EndpointSlice,
  type Endpoints,
  type KubeObject,
  type Service,
  type ServicePort,
} from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type {
  HealthMonitorType,
  LbAlgorithm,
  ListenerProtocol,
  MemberCreate,
  PoolProtocol,
  SessionPersistence,
} from '../../openstack/index.ts';
import { familyOf, subnetHolding, type IpFamily, type SubnetInfo } from '../network/index.ts';
import type { ListenerLimits, MonitorOptions, ServiceOptions } from './options.ts';
import { specOf } from './types.ts';

/** The Octavia protocols a Service port maps to (listener and pool alike). */
export type LbProtocol = 'TCP' | 'UDP' | 'SCTP';

/** The listener fields Raven sets (and so compares): Octavia's defaults unless an annotation says otherwise. */
export type ListenerFields = ListenerLimits & {
  allowed_cidrs: string[] | null;
  insert_headers: Record<string, string>;
};

/** The pool fields Raven sets. */
export interface PoolFields {
  lb_algorithm: LbAlgorithm;
  session_persistence: SessionPersistence | null;
}

/** One listener (and its default pool) a Service wants: one per Service port. */
export interface DesiredListener {
  /** `<listener protocol>:<port>`: how a listener is matched (names may change, these may not). */
  key: string;
  /** `<lb name>/<port name or number>`, for the listener and its pool. */
  name: string;
  /** The Service port's protocol. */
  protocol: LbProtocol;
  /** HTTP for a TCP port with `x-forwarded-for` (headers need an HTTP listener), else the port's protocol. */
  listenerProtocol: ListenerProtocol;
  /** PROXY/PROXYV2 with `proxy-protocol`, HTTP under an HTTP listener, else the port's protocol. */
  poolProtocol: PoolProtocol;
  port: number;
  /** The Service port's name (`''` when unnamed): what EndpointSlice ports are matched on. */
  portName: string;
  listener: ListenerFields;
  pool: PoolFields;
  monitor: (MonitorOptions & { type: HealthMonitorType }) | undefined;
  members: MemberCreate[];
}

export interface DesiredListeners {
  listeners: DesiredListener[];
  /** Ports left out, with why (a Warning Event each). */
  skipped: { port: DeepReadonly<ServicePort>; reason: string }[];
}

/** The name of the EndpointSlice index by Service (`<namespace>/<service name>`). */
export const SLICE_SERVICE_INDEX = 'byService';

const serviceKeyOf = (obj: DeepReadonly<KubeObject>): string | undefined => {
  const name = obj.metadata.labels?.[SERVICE_NAME_LABEL];
  return name && obj.metadata.namespace ? `${obj.metadata.namespace}/${name}` : undefined;
};

/**
 * The indexer the EndpointSlice informer needs: `endpointSlices.addIndexers(serviceSliceIndexers)` before the
 * reconciler runs (it reads a Service's slices with `byIndex(SLICE_SERVICE_INDEX, key)`).
 */
export const serviceSliceIndexers = {
  [SLICE_SERVICE_INDEX]: (slice: DeepReadonly<EndpointSlice>): string[] => {
    const key = serviceKeyOf(slice);
    return key ? [key] : [];
  },
};

/**
 * Map function for `controller.watches(sliceInformer, sliceToService)`: an EndpointSlice → the key of its Service
 * (label `kubernetes.io/service-name`).
 */
export function sliceToService(slice: DeepReadonly<EndpointSlice>): string[] {
  const key = serviceKeyOf(slice);
  return key ? [key] : [];
}

/**
 * Map function for `controller.watches(endpointsInformer, endpointsToService(slices))`: core/v1 Endpoints share their
 * Service's key — only while the Service has no EndpointSlice, since slices win (a real cluster keeps both, and a
 * second reconcile per endpoint change would cost OpenStack reads for nothing). Nothing is lost when the last slice
 * goes: its delete maps to the Service too, and that reconcile reads the Endpoints.
 */
export function endpointsToService(slices: Lister<EndpointSlice>): (endpoints: DeepReadonly<Endpoints>) => string[] {
  return (endpoints) => {
    const { namespace, name } = endpoints.metadata;
    if (!namespace || !name) return [];
    const key = `${namespace}/${name}`;
    return slices.byIndex(SLICE_SERVICE_INDEX, key).length === 0 ? [key] : [];
  };
}

/**
 * Where an endpoint address lives: `subnet_id` only when the address is inside one of the pods' subnets (dual-stack:
 * the one of its family), else Octavia routes it from the VIP subnet.
 */
function memberSubnet(address: string, subnet: SubnetInfo | undefined): string | undefined {
  return subnet ? subnetHolding(subnet, address)?.subnetId : undefined;
}

/** The IP families a Service's load balancer serves (those of its VIPs): whose endpoints become members. */
export type Families = readonly IpFamily[];

/** `(address, port)` pairs, each once, sorted: equal sets compare equal. */
function membersOf(pairs: Iterable<[string, number]>, subnet: SubnetInfo | undefined): MemberCreate[] {
  const seen = new Map<string, MemberCreate>();
  for (const [address, port] of pairs) {
    const key = `${address}:${port}`;
    if (seen.has(key)) continue;
    const subnetId = memberSubnet(address, subnet);
    seen.set(key, { address, protocol_port: port, ...(subnetId ? { subnet_id: subnetId } : {}) });
  }
  return [...seen.values()].sort((a, b) =>
    a.address === b.address ? a.protocol_port - b.protocol_port : a.address < b.address ? -1 : 1,
  );
}

/**
 * The endpoint port serving a Service port: the one of the same name (and protocol) — the endpoints controller names
 * them after the Service's ports — else, for a numeric targetPort, the one with that number.
 */
function matchPort(ports: readonly DeepReadonly<EndpointPort>[], port: DeepReadonly<ServicePort>): number | undefined {
  const protocol = port.protocol ?? 'TCP';
  const name = port.name ?? '';
  const sameProtocol = ports.filter((p) => (p.protocol ?? 'TCP') === protocol);
  const match =
    sameProtocol.find((p) => (p.name ?? '') === name) ??
    (typeof port.targetPort === 'number' ? sameProtocol.find((p) => p.port === port.targetPort) : undefined);
  return match?.port ?? undefined;
}

/**
 * Ready endpoints of a Service's EndpointSlices for one Service port (see {@link matchPort}): those of the slices whose
 * `addressType` is a family the load balancer serves (dual-stack: both, one slice set per family).
 */
export function sliceMembers(
  slices: readonly DeepReadonly<EndpointSlice>[],
  port: DeepReadonly<ServicePort>,
  subnet: SubnetInfo | undefined,
  families: Families = ['IPv4'],
): MemberCreate[] {
  const pairs: [string, number][] = [];
  for (const s of slices) {
    if (!families.includes((s.addressType ?? 'IPv4') as IpFamily)) continue;
    const target = matchPort(s.ports ?? [], port);
    if (!target) continue;
    for (const ep of s.endpoints ?? []) {
      // Kubernetes: a nil `ready` means ready.
      if (ep.conditions?.ready === false) continue;
      for (const address of ep.addresses) pairs.push([address, target]);
    }
  }
  return membersOf(pairs, subnet);
}

/**
 * The same from core/v1 Endpoints, the fallback for a Service without EndpointSlices: the `addresses` of each subset
 * (`notReadyAddresses` are left out), on the subset's port matched as for slices; of the served families, as for
 * slices.
 */
export function endpointsMembers(
  endpoints: DeepReadonly<Endpoints>,
  port: DeepReadonly<ServicePort>,
  subnet: SubnetInfo | undefined,
  families: Families = ['IPv4'],
): MemberCreate[] {
  const pairs: [string, number][] = [];
  const served = (ip: string): boolean => {
    const family = ipaddr.IPv4.isValidFourPartDecimal(ip) ? 'IPv4' : ip.includes(':') ? familyOf(ip) : undefined;
    return family !== undefined && families.includes(family);
  };
  for (const subset of endpoints.subsets ?? []) {
    const target = matchPort(subset.ports ?? [], port);
    if (!target) continue;
    for (const a of subset.addresses ?? []) if (served(a.ip)) pairs.push([a.ip, target]);
  }
  return membersOf(pairs, subnet);
}

export interface DesiredInput {
  svc: DeepReadonly<Service>;
  lbName: string;
  /** Whether Octavia speaks SCTP (API v2.23). */
  sctp: boolean;
  /** The health monitor types the provider takes: a pool whose protocol's type is not among them gets none. */
  monitorTypes: readonly HealthMonitorType[];
  options: ServiceOptions;
  /** Every listener's `allowed_cidrs` (see `allowedCidrs`). */
  allowedCidrs: string[] | null;
  /** The members of one Service port (from slices, or Endpoints). */
  members: (port: DeepReadonly<ServicePort>) => MemberCreate[];
  /**
   * Under NetworkPolicy: the members a listener keeps and its `allowed_cidrs` (`access.ts`), instead of every member
   * and {@link allowedCidrs}.
   */
  access?:
    | ((protocol: LbProtocol, members: MemberCreate[]) => { members: MemberCreate[]; allowedCidrs: string[] | null })
    | undefined;
}

/** One listener + pool per Service port; SCTP only where Octavia supports it. */
export function desiredListeners(input: DesiredInput): DesiredListeners {
  const listeners: DesiredListener[] = [];
  const skipped: DesiredListeners['skipped'] = [];
  for (const port of specOf(input.svc).ports ?? []) {
    const protocol = port.protocol ?? 'TCP';
    if (protocol !== 'TCP' && protocol !== 'UDP' && protocol !== 'SCTP') {
      skipped.push({ port, reason: `protocol ${protocol} has no Octavia listener` });
      continue;
    }
    if (protocol === 'SCTP' && !input.sctp) {
      skipped.push({ port, reason: 'SCTP needs Octavia API v2.23 or later' });
      continue;
    }
    const portName = port.name ?? '';
    const { options } = input;
    const http = protocol === 'TCP' && options.listener.xForwardedFor;
    const listenerProtocol: ListenerProtocol = http ? 'HTTP' : protocol;
    const poolProtocol: PoolProtocol = protocol === 'TCP' ? (options.proxy ?? (http ? 'HTTP' : 'TCP')) : protocol;
    // Octavia takes a persistence timeout on UDP and SCTP pools only (a 400 on the others).
    const timed = protocol !== 'TCP' && options.affinity;
    const { xForwardedFor: _, ...limits } = options.listener;
    const members = input.members(port);
    const access = input.access?.(protocol, members) ?? { members, allowedCidrs: input.allowedCidrs };
    const monitorType: HealthMonitorType = protocol === 'UDP' ? 'UDP-CONNECT' : protocol === 'SCTP' ? 'SCTP' : 'TCP';
    listeners.push({
      key: `${listenerProtocol}:${port.port}`,
      name: `${input.lbName}/${portName || port.port}`,
      protocol,
      listenerProtocol,
      poolProtocol,
      port: port.port,
      portName,
      listener: {
        ...limits,
        allowed_cidrs: access.allowedCidrs,
        insert_headers: http ? { 'X-Forwarded-For': 'true' } : {},
      },
      pool: {
        lb_algorithm: options.lbMethod,
        session_persistence: options.affinity
          ? {
              type: 'SOURCE_IP',
              cookie_name: null,
              persistence_timeout: timed ? options.affinity.timeoutSeconds : null,
              persistence_granularity: null,
            }
          : null,
      },
      monitor:
        options.monitor && input.monitorTypes.includes(monitorType)
          ? { ...options.monitor, type: monitorType }
          : undefined,
      members: access.members,
    });
  }
  return { listeners, skipped };
}
