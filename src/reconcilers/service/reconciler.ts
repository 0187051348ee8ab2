import { realClock, type Clock, type DeepReadonly, type Logger } from '../../core/index.ts';
import {
  RetryableError,
  TerminalError,
  type EventRecorder,
  type EventType,
  type ReconcileResult,
} from '../../controller/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { isConflict, isNotFound, resources, type KubeClient } from '../../kube/client/index.ts';
import { provisioningState, type LoadBalancer } from '../../openstack/index.ts';
import { ownerOf, ownerTags, resourceName } from '../common/identity.ts';
import type { ClusterNetwork, Cloud, ReconcilerConfig, SubnetInfo } from '../common/types.ts';
import type { SubnetStrategy } from '../namespace/strategy.ts';
import { splitActual, type Split } from './actual.ts';
import {
  desiredListeners,
  endpointsMembers,
  SLICE_SERVICE_INDEX,
  sliceMembers,
  type DesiredListeners,
} from './desired.ts';
import { ensureFloatingIps, listOwnFloatingIps } from './floating-ips.ts';
import {
  applyStep,
  createLoadBalancer,
  deleteLoadBalancer,
  listLoadBalancers,
  octaviaTime,
  readChildren,
} from './loadbalancer.ts';
import { nextStep } from './plan.ts';
import {
  isLoadBalancerType,
  LB_FINALIZER,
  specOf,
  vipAddressOf,
  wantsLoadBalancer,
  type ServiceStatus,
} from './types.ts';
import { createVipPort, listVipPorts } from './vip-port.ts';

export interface ServiceReconcilerOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  cluster: ClusterNetwork;
  client: KubeClient;
  services: Lister<KubeObject>;
  /** Must carry {@link serviceSliceIndexers} (`byService`). */
  endpointSlices: Lister<KubeObject>;
  /** core/v1 Endpoints, read only for a Service that has no EndpointSlices. Optional. */
  endpoints?: Lister<KubeObject> | undefined;
  /** The pods' subnet of a namespace: members get it as `subnet_id`. */
  subnets: SubnetStrategy;
  recorder?: EventRecorder | undefined;
  clock?: Clock;
  logger: Logger;
}

const SUBNET_WAIT_MS = 1_000;

/**
 * Service → Octavia load balancer (VIP = clusterIP on the service subnet, on a VIP port Raven owns), one listener +
 * ROUND_ROBIN pool per port, members = ready endpoints, floating IPs, `status.loadBalancer.ingress`.
 *
 * - Level-triggered on `namespace/name`: everything under the Service's name (`raven/<cluster>/<ns>/<name>`) is
 *   listed — load balancers by name and cluster tag, the VIP port by name, floating IPs by description — and sorted
 *   by uid into what the current Service keeps and what goes (see `actual.ts`). Nothing is ever created twice.
 * - The finalizer `raven.openstack.org/loadbalancer` goes on before the first create, and comes off only once the
 *   load balancer, its floating IPs and its VIP port are confirmed gone.
 * - Octavia takes one change at a time: after each, and while it reports `PENDING_*`, the reconcile returns
 *   `{ requeueAfterMs: pendingRequeueMs }` (never sleeps). Changes are diffs — listeners, pools, a member batch —
 *   never a re-creation. Pending past `stuckAfterSeconds` → one `LoadBalancerStuck` Warning per stuck period.
 * - Events: `EnsuringLoadBalancer` on create, `EnsuredLoadBalancer` once a change is fully applied; retryable
 *   failures (`QuotaExceeded`, `LoadBalancerError`, `VipAddressInUse` …) are thrown and become Warnings.
 */
export class ServiceReconciler {
  readonly #o: ServiceReconcilerOptions;
  readonly #clock: Clock;
  /** Keys with a change since their last `EnsuredLoadBalancer`. */
  readonly #changed = new Set<string>();
  /** Per key: the stuck period last reported (`<lb id>@<since>`). */
  readonly #stuck = new Map<string, string>();
  /** Per key: the warnings already recorded while they still hold. */
  readonly #warned = new Map<string, Set<string>>();

  constructor(options: ServiceReconcilerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const [namespace = '', name = ''] = key.split('/');
    const svc = this.#o.services.get(key);
    const live = svc && !svc.metadata.deletionTimestamp ? svc : undefined;
    const wants = wantsLoadBalancer(live, this.#o.config);
    const finalized = svc?.metadata.finalizers?.includes(LB_FINALIZER) ?? false;
    // A Service that never had a load balancer (it would carry the finalizer) costs no OpenStack call.
    if (svc && !wants && !finalized) return;
    const { clusterId } = this.#o.config;
    const lbName = resourceName(clusterId, namespace, name);
    const subnet = this.#o.cluster.serviceSubnet;
    if (wants && !subnet)
      throw new TerminalError(
        `service ${key} needs a load balancer but Raven has no service subnet configured (serviceSubnet)`,
        { reason: 'NoServiceSubnet' },
      );
    const { neutron, octavia } = this.#o.cloud;
    // Fetched once and cached. Without tags (v2.5) Raven could not tell its load balancers apart: it would sweep them.
    const versions = await octavia.versions({ signal });
    if (!versions.supports('tags'))
      throw new TerminalError(
        `Octavia ${versions.current.id} has no tags (v2.5): Raven cannot manage load balancers there`,
        { reason: 'UnsupportedOctavia' },
      );
    const [lbs, ports, fips] = await Promise.all([
      listLoadBalancers(octavia, clusterId, lbName, signal),
      listVipPorts(neutron, lbName, signal),
      listOwnFloatingIps(neutron, lbName, signal),
    ]);
    const split = splitActual(
      { lbs, ports, fips },
      wants ? { uid: live!.metadata.uid!, subnetId: subnet!.subnetId, address: vipAddressOf(live!)! } : undefined,
    );
    const going = await this.#teardown(key, svc, split, signal);
    const later = { requeueAfterMs: this.#o.config.loadBalancer.pendingRequeueMs };
    if (going) return later;
    if (wants) return this.#ensure(key, namespace, lbName, live!, subnet!, split, versions.supports('sctp'), signal);
    this.#forget(key);
    if (live) await this.#writeIngress(live, [], signal);
    if (svc && finalized) return this.#removeFinalizer(svc, signal);
  };

  /** Deletes what is stale; true while something is still going (a load balancer being deleted, a port it holds). */
  async #teardown(
    key: string,
    svc: DeepReadonly<KubeObject> | undefined,
    split: Split,
    signal: AbortSignal,
  ): Promise<boolean> {
    const { neutron, octavia } = this.#o.cloud;
    const { stale } = split;
    const log = this.#o.logger;
    for (const fip of stale.fips) {
      if (await neutron.floatingIps.delete(fip.id, { signal }))
        log.info({ service: key, floatingIp: fip.floating_ip_address }, 'floating IP deleted');
    }
    const remaining: LoadBalancer[] = [];
    for (const lb of stale.lbs) {
      if ((await deleteLoadBalancer(octavia, lb, signal)) === 'gone') continue;
      remaining.push(lb);
      if (provisioningState(lb).state === 'PENDING') this.#checkStuck(key, svc, lb);
      else log.info({ service: key, loadBalancerId: lb.id }, 'load balancer delete started');
    }
    // A VIP port goes only once no load balancer uses it (Octavia never deletes a port it did not create).
    const inUse = new Set([...remaining, ...(split.lb ? [split.lb] : [])].map((lb) => lb.vip_port_id));
    let held = false;
    for (const port of stale.ports) {
      if (inUse.has(port.id)) held = true;
      else if (await neutron.ports.delete(port.id, { signal }))
        log.info({ service: key, portId: port.id }, 'VIP port deleted');
    }
    return remaining.length > 0 || held;
  }

  async #ensure(
    key: string,
    namespace: string,
    lbName: string,
    svc: DeepReadonly<KubeObject>,
    serviceSubnet: SubnetInfo,
    split: Split,
    sctp: boolean,
    signal: AbortSignal,
  ): Promise<ReconcileResult | void> {
    const { cloud, config, logger } = this.#o;
    const uid = svc.metadata.uid!;
    const tags = ownerTags(config.clusterId, 'service', uid);
    const later = { requeueAfterMs: config.loadBalancer.pendingRequeueMs };
    if (!svc.metadata.finalizers?.includes(LB_FINALIZER) && !(await this.#addFinalizer(svc, signal)))
      return { requeue: true };
    const podSubnet = this.#o.subnets.subnetFor(namespace);
    if (!podSubnet) return { requeueAfterMs: SUBNET_WAIT_MS };
    const address = vipAddressOf(svc)!;
    let port = split.port;
    if (!port) {
      port = await createVipPort(
        cloud.neutron,
        { clusterId: config.clusterId, lbName, uid, subnet: serviceSubnet, address, service: key },
        signal,
      );
      this.#changed.add(key);
      logger.info({ service: key, portId: port.id, vip: address }, 'VIP port created');
    } else if (!ownerOf(port.tags)) {
      await cloud.neutron.tags.replace('ports', port.id, tags, { signal });
    }
    const desired = this.#desired(svc, key, lbName, podSubnet, sctp);
    const warnings = desired.skipped.map((s) => ({
      reason: 'UnsupportedProtocol',
      message: `port ${s.port.name || s.port.port}/${s.port.protocol ?? 'TCP'} of service ${key} has no load balancer listener: ${s.reason}`,
    }));
    for (const w of warnings) this.#warnOnce(key, svc, w.reason, w.message);
    const lb = split.lb;
    if (!lb) {
      this.#event(
        svc,
        'Normal',
        'EnsuringLoadBalancer',
        `creating load balancer ${lbName} (VIP ${address}, ${desired.listeners.length} listener(s))`,
      );
      const created = await createLoadBalancer(
        cloud.octavia,
        { name: lbName, description: `Raven: service ${key}`, vipPortId: port.id, tags },
        signal,
      );
      this.#changed.add(key);
      logger.info({ service: key, loadBalancerId: created.id, vip: address }, 'load balancer created');
      return later;
    }
    const { state, status } = provisioningState(lb);
    if (state === 'PENDING') {
      this.#checkStuck(key, svc, lb);
      return later;
    }
    this.#stuck.delete(key);
    if (state === 'ERROR')
      throw new RetryableError(
        'LoadBalancerError',
        `Octavia reports load balancer ${lb.id} of service ${key} in ${status}`,
      );
    const step = nextStep(desired.listeners, await readChildren(cloud.octavia, lb, desired.listeners, signal));
    if (step) {
      if (await applyStep(cloud.octavia, lb, step, tags, signal)) {
        this.#changed.add(key);
        logger.info({ service: key, loadBalancerId: lb.id, change: step.kind }, 'load balancer change applied');
      }
      return later;
    }
    const spec = specOf(svc);
    const fips = await ensureFloatingIps(
      {
        neutron: cloud.neutron,
        clusterId: config.clusterId,
        lbName,
        uid,
        service: key,
        vipPort: port,
        vipAddress: address,
        loadBalancerType: isLoadBalancerType(svc),
        loadBalancerIP: spec.loadBalancerIP || undefined,
        externalIPs: spec.externalIPs ?? [],
        networkId: config.floatingIpNetworkId,
      },
      split.fips,
      signal,
    );
    if (fips.changed) this.#changed.add(key);
    for (const w of fips.warnings) this.#warnOnce(key, svc, w.reason, w.message);
    // Warnings that no longer hold may be reported again when they come back.
    this.#warned.set(key, new Set([...warnings, ...fips.warnings].map((w) => `${w.reason}|${w.message}`)));
    await this.#writeIngress(svc, fips.ingress, signal);
    if (this.#changed.delete(key)) {
      this.#event(
        svc,
        'Normal',
        'EnsuredLoadBalancer',
        `load balancer ${lb.id} is ACTIVE: VIP ${address}, ${desired.listeners.length} listener(s)${fips.ingress.length > 0 ? `, ingress ${fips.ingress.join(', ')}` : ''}`,
      );
    }
  }

  #desired(
    svc: DeepReadonly<KubeObject>,
    key: string,
    lbName: string,
    subnet: SubnetInfo,
    sctp: boolean,
  ): DesiredListeners {
    const slices = this.#o.endpointSlices.byIndex(SLICE_SERVICE_INDEX, key);
    const endpoints = slices.length === 0 ? this.#o.endpoints?.get(key) : undefined;
    return desiredListeners({
      svc,
      lbName,
      sctp,
      members: (port) => (endpoints ? endpointsMembers(endpoints, port, subnet) : sliceMembers(slices, port, subnet)),
    });
  }

  /** One `LoadBalancerStuck` Warning per stuck period (a load balancer and the time its pending state began). */
  #checkStuck(key: string, svc: DeepReadonly<KubeObject> | undefined, lb: LoadBalancer): void {
    const since = octaviaTime(lb.updated_at ?? lb.created_at);
    const seconds = Math.round((this.#clock.now() - since) / 1000);
    if (!since || seconds < this.#o.config.loadBalancer.stuckAfterSeconds) return;
    const period = `${lb.id}@${since}`;
    if (this.#stuck.get(key) === period) return;
    this.#stuck.set(key, period);
    this.#o.logger.warn(
      { service: key, loadBalancerId: lb.id, status: lb.provisioning_status, seconds },
      'load balancer stuck',
    );
    if (svc)
      this.#event(
        svc,
        'Warning',
        'LoadBalancerStuck',
        `load balancer ${lb.id} has been ${lb.provisioning_status} for ${seconds} s (Octavia); Raven keeps looking`,
      );
  }

  #warnOnce(key: string, svc: DeepReadonly<KubeObject>, reason: string, message: string): void {
    const seen = this.#warned.get(key) ?? new Set<string>();
    this.#warned.set(key, seen);
    if (seen.has(`${reason}|${message}`)) return;
    seen.add(`${reason}|${message}`);
    this.#event(svc, 'Warning', reason, message);
  }

  #forget(key: string): void {
    this.#changed.delete(key);
    this.#stuck.delete(key);
    this.#warned.delete(key);
  }

  #event(svc: DeepReadonly<KubeObject>, type: EventType, reason: string, message: string): void {
    const m = svc.metadata;
    this.#o.recorder?.record(
      {
        kind: 'Service',
        apiVersion: 'v1',
        name: m.name ?? '',
        namespace: m.namespace,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
      },
      type,
      reason,
      message,
    );
  }

  /** Adds the finalizer (optimistic concurrency on resourceVersion); false on a conflict (the cache is behind: look again). */
  async #addFinalizer(svc: DeepReadonly<KubeObject>, signal: AbortSignal): Promise<boolean> {
    return this.#patchFinalizers(svc, [...(svc.metadata.finalizers ?? []), LB_FINALIZER], signal);
  }

  async #removeFinalizer(svc: DeepReadonly<KubeObject>, signal: AbortSignal): Promise<ReconcileResult | void> {
    const rest = (svc.metadata.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
    if (!(await this.#patchFinalizers(svc, rest, signal))) return { requeue: true };
    this.#o.logger.info(
      { service: `${svc.metadata.namespace}/${svc.metadata.name}` },
      'load balancer gone; finalizer removed',
    );
  }

  async #patchFinalizers(svc: DeepReadonly<KubeObject>, finalizers: string[], signal: AbortSignal): Promise<boolean> {
    const { name, namespace, resourceVersion } = svc.metadata;
    try {
      await this.#o.client.patch(
        resources.services,
        name!,
        namespace,
        { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion } },
        'merge',
        { signal },
      );
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  /** `status.loadBalancer.ingress`, written (status subresource) only when the addresses differ. */
  async #writeIngress(svc: DeepReadonly<KubeObject>, ips: readonly string[], signal: AbortSignal): Promise<void> {
    const current = ((svc.status ?? {}) as DeepReadonly<ServiceStatus>).loadBalancer?.ingress ?? [];
    if (current.length === ips.length && current.every((i, n) => i.ip === ips[n] && !i.hostname)) return;
    const ingress = ips.length > 0 ? ips.map((ip) => ({ ip })) : null;
    try {
      await this.#o.client.patch(
        resources.services,
        svc.metadata.name!,
        svc.metadata.namespace,
        { status: { loadBalancer: { ingress } } },
        'merge',
        { signal, subresource: 'status' },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
