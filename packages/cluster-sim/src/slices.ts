/**
 * What the EndpointSlice controller wants for one Service: pure functions of the Service and its namespace's pods,
 * tested without a server. See endpointslices.ts for the reconciler that writes them.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { parseIp, type DeepReadonly } from '../../../src/core/index.ts';
import { matchesLabels, selectorFromMap } from '../../../src/kube/api/index.ts';
import type { Endpoint, EndpointPort, EndpointSlice, Pod, Service } from '../../../src/kube/api/index.ts';

export const serviceNameLabel = 'kubernetes.io/service-name';
export const managedByLabel = 'endpointslice.kubernetes.io/managed-by';
/** The real controller's name: consumers (Raven) filter on it. */
export const managedBy = 'endpointslice-controller.k8s.io';

/** The real controller's default `--max-endpoints-per-slice`: a bigger service gets more slices. */
export const defaultMaxEndpointsPerSlice = 100;

/** A service's selector, or undefined when it has none (an empty selector is stored as none, as upstream). */
export function selectorOf(svc: DeepReadonly<Service>): Record<string, string> | undefined {
  const selector = svc.spec?.selector;
  return selector && Object.keys(selector).length > 0 ? selector : undefined;
}

/** Whether a service's selector picks this pod (same namespace, labels match). */
export function selects(svc: DeepReadonly<Service>, pod: DeepReadonly<Pod>): boolean {
  const selector = selectorOf(svc);
  return (
    selector !== undefined &&
    svc.metadata.namespace === pod.metadata.namespace &&
    matchesLabels(selectorFromMap(selector), pod.metadata.labels)
  );
}

/**
 * Lower-case base-36 digest: deterministic slice names (the real controller's are random; ours must survive restarts).
 */
function shortHash(text: string): string {
  return BigInt(`0x${createHash('sha256').update(text).digest('hex').slice(0, 12)}`)
    .toString(36)
    .padStart(5, '0')
    .slice(0, 5);
}

/** A service port's target on one pod: a number, or the pod's container port of that name (undefined if none). */
export function resolveTargetPort(
  pod: DeepReadonly<Pod>,
  target: number | string | undefined,
  port: number,
  protocol: string,
): number | undefined {
  if (target === undefined || target === '' || target === 0) return port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

type Family = 'IPv4' | 'IPv6';

/**
 * An address of `family` the API accepts in an EndpointSlice: not loopback, link-local or unspecified (hostNetwork
 * pods on simulated nodes have 127.0.1.x IPs, and listing one would make the whole slice invalid).
 */
function sliceable(ip: string, family: Family): boolean {
  if (family === 'IPv6') {
    const lower = ip.toLowerCase();
    return isIP(ip) === 6 && lower !== '::' && lower !== '::1' && !/^fe[89ab]/.test(lower);
  }
  if (isIP(ip) !== 4) return false;
  const [a, b] = ip.split('.').map(Number);
  return a !== 127 && a !== 0 && !(a === 169 && b === 254);
}

function endpointOf(svc: DeepReadonly<Service>, pod: DeepReadonly<Pod>, family: Family): Endpoint | undefined {
  // A slice holds one family: a dual-stack pod's address of that family, whichever of its IPs comes first.
  const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
  const ip = ips.find((i) => sliceable(i, family));
  const phase = pod.status?.phase;
  if (!ip || phase === 'Succeeded' || phase === 'Failed') return undefined;
  const podReady = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  // As upstream: ready = (ready or published anyway) and not terminating; serving ignores termination.
  const serving = podReady || svc.spec?.publishNotReadyAddresses === true;
  return {
    addresses: [ip],
    conditions: { ready: serving && !terminating, serving, terminating },
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      uid: pod.metadata.uid ?? '',
    },
  };
}

function portsFor(svc: DeepReadonly<Service>, pod: DeepReadonly<Pod>): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const p of svc.spec?.ports ?? []) {
    const protocol = p.protocol ?? 'TCP';
    const port = resolveTargetPort(pod, p.targetPort, p.port, protocol);
    // A named port this pod does not have: the pod still serves the others (as upstream).
    if (port === undefined) continue;
    ports.push({ name: p.name ?? '', protocol, port, ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) });
  }
  return ports;
}

/**
 * The slices a service with a selector should have, for each of its `ipFamilies` (IPv4 when unset; dual-stack: a set
 * of slices per family, `addressType` that family, as upstream): see {@link familySlices}.
 */
export function desiredSlices(
  svc: DeepReadonly<Service>,
  pods: readonly DeepReadonly<Pod>[],
  maxEndpoints = defaultMaxEndpointsPerSlice,
): EndpointSlice[] {
  const families = (svc.spec?.ipFamilies?.length ? svc.spec.ipFamilies : ['IPv4']).filter(
    (f): f is Family => f === 'IPv4' || f === 'IPv6',
  );
  return families.flatMap((family) => familySlices(svc, pods, family, maxEndpoints));
}

/**
 * The slices of one family: the service's pods with an address of that family grouped by their resolved ports (one
 * slice per port set, as upstream; usually one), at most `maxEndpoints` per slice, endpoints sorted by address. A
 * service with no such pods still gets one empty slice. The first IPv4 slice is `<service>-<hash of uid>`; the others'
 * names add the family (IPv6), their port set and position, so every name is stable while the pods are.
 */
function familySlices(
  svc: DeepReadonly<Service>,
  pods: readonly DeepReadonly<Pod>[],
  family: Family,
  maxEndpoints: number,
): EndpointSlice[] {
  const groups = new Map<string, { ports: EndpointPort[]; endpoints: Endpoint[] }>();
  for (const pod of pods) {
    if (!selects(svc, pod)) continue;
    const endpoint = endpointOf(svc, pod, family);
    if (!endpoint) continue;
    const ports = portsFor(svc, pod);
    const key = JSON.stringify(ports);
    const group = groups.get(key) ?? { ports, endpoints: [] };
    group.endpoints.push(endpoint);
    groups.set(key, group);
  }
  const chunks: { key: string; ports: EndpointPort[]; endpoints: Endpoint[] }[] = [];
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    group.endpoints.sort((a, b) => compareIps(a.addresses[0]!, b.addresses[0]!));
    for (let i = 0; i < group.endpoints.length; i += maxEndpoints)
      chunks.push({
        key: `${key}#${i / maxEndpoints}`,
        ports: group.ports,
        endpoints: group.endpoints.slice(i, i + maxEndpoints),
      });
  }
  if (chunks.length === 0) chunks.push({ key: '', ports: [], endpoints: [] });
  const { name = '', namespace, uid = '' } = svc.metadata;
  const base = family === 'IPv4' ? uid : `${uid}/${family}`;
  return chunks.map((chunk, i) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${name}-${shortHash(i === 0 ? base : `${base}/${chunk.key}`)}`,
      namespace,
      labels: { [serviceNameLabel]: name, [managedByLabel]: managedBy },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid, controller: true, blockOwnerDeletion: true }],
    },
    addressType: family,
    endpoints: chunk.endpoints,
    ports: chunk.ports,
  }));
}

function compareIps(a: string, b: string): number {
  const x = parseIp(a)?.value ?? 0n;
  const y = parseIp(b)?.value ?? 0n;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether a stored slice already says what the desired one does (the fields this controller owns). */
export function sliceUpToDate(current: DeepReadonly<EndpointSlice>, desired: EndpointSlice): boolean {
  const labels = current.metadata.labels ?? {};
  return (
    Object.entries(desired.metadata.labels ?? {}).every(([k, v]) => labels[k] === v) &&
    isDeepStrictEqual(current.metadata.ownerReferences ?? [], desired.metadata.ownerReferences) &&
    current.addressType === desired.addressType &&
    isDeepStrictEqual(current.endpoints ?? [], desired.endpoints) &&
    isDeepStrictEqual(current.ports ?? [], desired.ports)
  );
}
