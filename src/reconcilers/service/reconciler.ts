import { formatCidr, parseIp, realClock, type Clock, type DeepReadonly, type Logger } from '../../core/index.ts';
import { RetryableError, TerminalError, type EventRecorder, type ReconcileResult } from '../../controller/index.ts';
import {
  objectReference,
  splitKey,
  type EndpointSlice,
  type EventType,
  type LoadBalancerIngress,
  type Pod,
  type Service,
} from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { isConflict, isNotFound, resources, type KubeClient } from '../../kube/client/index.ts';
import {
  providerTraits,
  provisioningState,
  type FloatingIp,
  type LoadBalancer,
  type MemberCreate,
  type OctaviaVersions,
  type ProviderTraits,
} from '../../openstack/index.ts';
import {
  familyOf,
  familySubnets,
  ownerOf,
  rangesOf,
  clusterTag,
  ownerTags,
  resourceName,
  type Cloud,
  type ClusterNetworkSource,
  type LoadBalancerPeers,
  type ReconcilerConfig,
  type SubnetInfo,
  type SubnetStrategy,
} from '../network/index.ts';
import { splitActual, type Split } from './actual.ts';
import {
  desiredListeners,
  endpointsMembers,
  SLICE_SERVICE_INDEX,
  sliceMembers,
  type DesiredListeners,
} from './desired.ts';
import { ensureFloatingIps, listOwnFloatingIps, releaseInput, type FloatingIpInput } from './floating-ips.ts';
import { allowedCidrs, ANNOTATIONS, serviceOptions, type ServiceOptions } from './options.ts';
import { resolveFloatingSubnet } from './floating-subnet.ts';
import { releaseFloatingIp } from './fip-ownership.ts';
import { describeRefused, memberFilter, POD_IP_INDEX, type MemberFilter } from './members.ts';
import { listenerAccess, MAX_POLICY_CIDRS } from './access.ts';
import {
  applyStep,
  createLoadBalancer,
  deleteLoadBalancer,
  listLoadBalancers,
  octaviaTime,
  readChildren,
} from './loadbalancer.ts';
import { nextStep } from './plan.ts';
import type { CachedEndpoints } from './trim.ts';
import { seenLoadBalancer, type ConvergedLoadBalancers } from './converged.ts';
import { isLoadBalancerType, LB_FINALIZER, specOf, wantsLoadBalancer, type BalancedService } from './types.ts';
import { createVipPort, listVipPorts, vipsOf, type Vip } from './vip-port.ts';

export interface ServiceReconcilerOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  cluster: ClusterNetworkSource;
  client: KubeClient;
  services: Lister<Service>;
  /** Must carry {@link serviceSliceIndexers} (`byService`). */
  endpointSlices: Lister<EndpointSlice>;
  /** core/v1 Endpoints, read only for a Service that has no EndpointSlices. Optional. */
  endpoints?: Lister<CachedEndpoints> | undefined;
  /** The pods' subnet of a namespace: members get it as `subnet_id`. */
  subnets: SubnetStrategy;
  /**
   * Pods indexed by address (`podIpIndexers`): an endpoint address a pod holds is a member only of its own
   * namespace's Services. Absent, an address on a shared pod subnet is taken as the Service's namespace's.
   */
  pods?: Lister<Pod> | undefined;
  /**
   * Under NetworkPolicy: who a member pod's ingress policies admit on its port (the policy module's). Each listener
   * then admits only what all its members' policies admit, and a member whose policies admit no one is left out.
   */
  peers?: LoadBalancerPeers | undefined;
  recorder?: EventRecorder | undefined;
  /** Where a converged pass records the ids it left (the load balancer verification reads them). */
  converged?: ConvergedLoadBalancers | undefined;
  clock?: Clock;
  logger: Logger;
}

/** How long a Service with an endpoint no known pod holds yet (members.ts) waits before looking again. */
const MEMBER_RECHECK_MS = 10_000;

/** How long a Service whose namespace has no pod subnet yet waits before looking again. */
const SUBNET_WAIT_MS = 1_000;

/** What the members' policies decided for one pass (`#desired`): the Service's Warnings. */
interface AccessReport {
  notAdmitted: { member: MemberCreate; protocol: string; pod: string | undefined }[];
  capped: { protocol: string; count: number }[];
}

/** What one pass converges a balanced Service's load balancer to, and what it found (`#ensure`). */
interface EnsureTarget {
  key: string;
  lbName: string;
  svc: BalancedService;
  serviceSubnet: SubnetInfo;
  vips: readonly Vip[];
  /** What Octavia and Neutron hold now. */
  split: Split;
  versions: OctaviaVersions;
  options: ServiceOptions;
}

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
 *   never a re-creation. Pending past `stuckAfterSeconds` → a `LoadBalancerStuck` Warning.
 * - Events: `EnsuringLoadBalancer` on create, `EnsuredLoadBalancer` when a pass finds everything converged; retryable
 *   failures (`QuotaExceeded`, `LoadBalancerError`, `VipAddressInUse` …) are thrown and become Warnings. Events that
 *   report a state seen at every pass are recorded `once` (the recorder drops a repeat within its window), so the
 *   reconciler keeps no memory of what it already said.
 */
/** The first look after a write of Raven's, when `loadBalancer.pendingRequeueMs` is longer. */
const QUICK_LOOK_MS = 250;

export class ServiceReconciler {
  readonly #o: ServiceReconcilerOptions;
  readonly #clock: Clock;
  readonly #provider: ProviderTraits;
  /** Who members' policies admit — only needed where the provider hides the client's address from the members. */
  readonly #peers: LoadBalancerPeers | undefined;

  constructor(options: ServiceReconcilerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#provider = providerTraits(options.config.loadBalancer.provider);
    this.#peers = this.#provider.keepsClientAddress ? undefined : options.peers;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const { namespace = '', name } = splitKey(key);
    const svc = this.#o.services.get(key);
    const live = svc && !svc.metadata.deletionTimestamp ? svc : undefined;
    const wanted = wantsLoadBalancer(live, this.#o.config) ? live : undefined;
    const finalized = svc?.metadata.finalizers?.includes(LB_FINALIZER) ?? false;
    // A Service that never had a load balancer (it would carry the finalizer) costs no OpenStack call.
    if (!wanted) this.#o.converged?.delete(key);
    if (svc && !wanted && !finalized) return;
    // The bootstrap's `ready` event queues every Service again once the service subnet is known.
    const cluster = this.#o.cluster.current();
    if (!cluster) return;
    const { clusterId } = this.#o.config;
    const lbName = resourceName(clusterId, namespace, name);
    const subnet = cluster.serviceSubnet;
    if (wanted && !subnet) {
      const message = `service ${key} needs a load balancer but Raven has no service subnet configured (serviceSubnet)`;
      throw new TerminalError(message, { reason: 'NoServiceSubnet' });
    }
    const { octavia } = this.#o.cloud;
    // Fetched once and cached. Without tags (v2.5) Raven could not tell its load balancers apart: it would sweep them.
    const versions = await octavia.versions({ signal });
    if (!versions.supports('tags')) {
      const message = `Octavia ${versions.current.id} has no tags (v2.5): Raven cannot manage load balancers there`;
      throw new TerminalError(message, { reason: 'UnsupportedOctavia' });
    }
    const chosen = wanted && subnet ? this.#options(wanted, versions) : undefined;
    const vips =
      wanted && subnet && chosen
        ? this.#vips(wanted, subnet, versions, chosen.options, this.#policyRestricted(wanted))
        : undefined;
    const split = await this.#actual(lbName, wanted, vips?.vips, signal);
    if (await this.#teardown(key, svc, split, signal)) {
      return { requeueAfterMs: this.#o.config.loadBalancer.pendingRequeueMs, waiting: 'PENDING_DELETE' };
    }
    if (wanted && subnet && chosen && vips) {
      const { options, problems, ignored } = chosen;
      // One bad value and nothing changes: the load balancer stays as it was until the Service is fixed.
      for (const p of problems) this.#event(wanted, 'Warning', 'InvalidLoadBalancerOption', p.message, { once: true });
      if (problems.length > 0) return;
      for (const p of ignored) this.#event(wanted, 'Warning', 'LoadBalancerOptionIgnored', p.message, { once: true });
      for (const w of vips.warnings) this.#event(wanted, 'Warning', 'VipFamilyNotServed', w, { once: true });
      return this.#ensure(
        { key, lbName, svc: wanted, serviceSubnet: subnet, vips: vips.vips, split, versions, options },
        signal,
      );
    }
    if (live) await this.#writeIngress(live, [], signal);
    if (svc && finalized) return this.#removeFinalizer(svc, signal);
  };

  /**
   * The Service's VIPs: one per clusterIP (dual-stack: the primary, and the other family's as Octavia's additional
   * VIP), with a warning for each family left out — one the service network has no subnet for, Octavia without
   * additional VIPs (before v2.26), or `loadBalancerSourceRanges` or members' NetworkPolicies (`restricted`), which
   * Octavia applies to the primary VIP's family only: the other VIP would be open to all.
   */
  #vips(
    svc: BalancedService,
    subnet: SubnetInfo,
    versions: OctaviaVersions,
    options: ServiceOptions,
    restricted: boolean,
  ): { vips: Vip[]; warnings: string[] } {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    const spec = specOf(svc);
    const clusterIPs = spec.clusterIPs?.length ? spec.clusterIPs : [svc.spec.clusterIP];
    const { vips, unserved } = vipsOf(clusterIPs, subnet);
    const warnings = unserved.map(
      (ip) =>
        `clusterIP ${ip} of service ${key} gets no VIP: Raven's service network has no subnet of its family (serviceSubnet.cidrs)`,
    );
    const secondary = vips.slice(1).map((v) => v.address);
    if (secondary.length === 0) return { vips, warnings };
    if (!versions.supports('additionalVips')) {
      warnings.push(
        `clusterIP ${secondary.join(', ')} of service ${key} gets no VIP: Octavia ${versions.current.id} has no additional VIPs (v2.26), so the load balancer serves the primary family only`,
      );
      return { vips: vips.slice(0, 1), warnings };
    }
    if (!this.#provider.additionalVips) {
      warnings.push(
        `clusterIP ${secondary.join(', ')} of service ${key} gets no VIP: Octavia's provider ${this.#provider.name} makes no additional VIPs, so the load balancer serves the primary family only`,
      );
      return { vips: vips.slice(0, 1), warnings };
    }
    if (options.sourceRanges.length > 0 || restricted) {
      const what = options.sourceRanges.length > 0 ? 'loadBalancerSourceRanges' : "its pods' NetworkPolicies";
      warnings.push(
        `clusterIP ${secondary.join(', ')} of service ${key} gets no VIP: Octavia applies ${what} (allowed_cidrs) to the primary VIP's family only, and the other VIP would be open to all`,
      );
      return { vips: vips.slice(0, 1), warnings };
    }
    return { vips, warnings };
  }

  /** Everything under the Service's name, sorted into what the current Service keeps and what goes. */
  async #actual(
    lbName: string,
    wanted: BalancedService | undefined,
    vips: readonly Vip[] | undefined,
    signal: AbortSignal,
  ): Promise<Split> {
    const { neutron, octavia } = this.#o.cloud;
    const [lbs, ports, fips] = await Promise.all([
      listLoadBalancers(octavia, this.#o.config.clusterId, lbName, signal),
      listVipPorts(neutron, lbName, signal),
      listOwnFloatingIps(neutron, lbName, signal),
    ]);
    const [primary, ...additional] = vips ?? [];
    const keep =
      wanted && primary
        ? {
            uid: wanted.metadata.uid,
            subnetId: primary.subnetId,
            address: primary.address,
            additional,
            providerPort: this.#provider.makesVipPort,
          }
        : undefined;
    return splitActual({ lbs, ports, fips }, keep);
  }

  /**
   * How a stale floating IP of `key` is let go of: kept (keep-floatingip, for the Service that made it) or held for the
   * Service's name for the quarantine — never free for another tenant at once.
   */
  #release(key: string, svc: DeepReadonly<Service> | undefined, fip: FloatingIp) {
    const keep =
      svc?.metadata.annotations?.[ANNOTATIONS.keepFloatingIp]?.toLowerCase() === 'true' &&
      ownerOf(fip.tags)?.uid === svc.metadata.uid;
    const { clusterId, floatingIps: policy } = this.#o.config;
    return releaseInput({
      neutron: this.#o.cloud.neutron,
      clusterId,
      service: key,
      keep,
      policy,
      now: this.#clock.now(),
    });
  }

  /** Deletes what is stale; true while something is still going (a load balancer being deleted, a port it holds). */
  async #teardown(
    key: string,
    svc: DeepReadonly<Service> | undefined,
    split: Split,
    signal: AbortSignal,
  ): Promise<boolean> {
    const { neutron, octavia } = this.#o.cloud;
    const { stale } = split;
    const log = this.#o.logger;
    for (const fip of stale.fips) {
      const became = await releaseFloatingIp(this.#release(key, svc, fip), fip, signal);
      log.info({ service: key, floatingIp: fip.floating_ip_address, became }, 'floating IP released');
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
      else if (await neutron.ports.delete(port.id, { signal })) {
        log.info({ service: key, portId: port.id }, 'VIP port deleted');
      }
    }
    return remaining.length > 0 || held;
  }

  async #ensure(target: EnsureTarget, signal: AbortSignal): Promise<ReconcileResult | void> {
    const { key, lbName, svc, serviceSubnet, vips, split, versions, options } = target;
    const { cloud, config, logger } = this.#o;
    const { uid, namespace } = svc.metadata;
    const address = vips.map((v) => v.address).join(' and ');
    const tags = ownerTags(config.clusterId, 'service', uid);
    // Octavia takes one change at a time: look again once it has settled (the gauge of pending LBs counts `waiting`).
    const later = (state: string) => ({ requeueAfterMs: config.loadBalancer.pendingRequeueMs, waiting: state });
    // Right after a write of ours, a first look sooner: a provider that applies a change at once (ovn: well under
    // 250 ms) then takes the next step without waiting out the amphora's pace; one GET more per step otherwise.
    const soon = (state: string) => ({
      ...later(state),
      requeueAfterMs: Math.min(config.loadBalancer.pendingRequeueMs, QUICK_LOOK_MS),
    });
    if (!svc.metadata.finalizers?.includes(LB_FINALIZER) && !(await this.#addFinalizer(svc, signal))) {
      return { requeue: true };
    }
    const podSubnet = this.#o.subnets.subnetFor(namespace);
    if (!podSubnet) return { requeueAfterMs: SUBNET_WAIT_MS, waiting: 'NoPodSubnet' };
    // The provider that makes its own VIP port gets none of Raven's (it would hold the clusterIP the provider asks for).
    let port = split.port;
    if (!port && !this.#provider.makesVipPort) {
      const vip = {
        clusterId: config.clusterId,
        lbName,
        uid,
        subnet: serviceSubnet,
        address: vips[0]!.address,
        vips,
        service: key,
      };
      port = await createVipPort(cloud.neutron, vip, signal);
      logger.info({ service: key, portId: port.id, vip: address }, 'VIP port created');
    } else if (port && !ownerOf(port.tags)) {
      await cloud.neutron.tags.replace('ports', port.id, tags, { signal });
    }
    const admission = this.#memberFilter(svc, podSubnet);
    const desired = this.#desired(svc, key, lbName, podSubnet, vips, versions.supports('sctp'), options, admission);
    if (admission.refused.size > 0) {
      this.#event(svc, 'Warning', 'EndpointRefused', describeRefused(key, admission.refused), { once: true });
    }
    this.#accessEvents(svc, key, desired);
    if (specOf(svc).internalTrafficPolicy === 'Local') {
      const message = `internalTrafficPolicy Local of service ${key} is not honoured: its load balancer is the clusterIP for every node, so every ready endpoint is a member`;
      this.#event(svc, 'Warning', 'TrafficPolicyNotHonoured', message, { once: true });
    }
    for (const s of desired.skipped) {
      const which = `${s.port.name || s.port.port}/${s.port.protocol ?? 'TCP'}`;
      const message = `port ${which} of service ${key} has no load balancer listener: ${s.reason}`;
      this.#event(svc, 'Warning', 'UnsupportedProtocol', message, { once: true });
    }
    const lb = split.lb;
    const ingressNow = svc.status?.loadBalancer?.ingress ?? [];
    if (!lb && ingressNow.length > 0) {
      // It was built (the ingress says so) and is gone: deleted out of band. Nothing answers on the address until it
      // is back, so the Service says so rather than show an ingress that leads nowhere.
      const message = `load balancer ${lbName} of service ${key} is gone from Octavia (deleted outside Raven): its ingress is withdrawn until it is rebuilt`;
      this.#event(svc, 'Warning', 'LoadBalancerMissing', message, { once: true });
      logger.warn({ service: key }, 'load balancer gone; rebuilding it');
      await this.#writeIngress(svc, [], signal);
    }
    if (!lb) {
      const message = `creating load balancer ${lbName} (VIP ${address}, ${desired.listeners.length} listener(s))`;
      this.#event(svc, 'Normal', 'EnsuringLoadBalancer', message);
      const input = {
        name: lbName,
        description: `Raven: service ${key}`,
        vipPortId: port?.id,
        vips,
        tags,
        flavorId: options.flavorId,
        availabilityZone: options.availabilityZone,
        provider: this.#provider.name,
      };
      const created = await createLoadBalancer(cloud.octavia, input, signal);
      logger.info({ service: key, loadBalancerId: created.id, vip: address }, 'load balancer created');
      return soon('PENDING_CREATE');
    }
    const { state, status } = provisioningState(lb);
    this.#o.converged?.saw(key, seenLoadBalancer(lb));
    if (state === 'PENDING') {
      this.#checkStuck(key, svc, lb);
      return later(lb.provisioning_status);
    }
    if (state === 'ERROR') {
      const message = `Octavia reports load balancer ${lb.id} of service ${key} in ${status}`;
      throw new RetryableError('LoadBalancerError', message);
    }
    // Flavor and zone are chosen at creation; Octavia cannot change them (its PUT refuses both).
    for (const [what, want, have] of [
      ['flavor-id', options.flavorId, lb.flavor_id],
      ['availability-zone', options.availabilityZone, lb.availability_zone],
    ] as const) {
      if (want !== undefined && want !== (have ?? undefined)) {
        const message = `loadbalancer.openstack.org/${what} "${want}" of service ${key} applies when its load balancer is created; load balancer ${lb.id} keeps "${have ?? ''}" (delete and re-create the Service to change it)`;
        this.#event(svc, 'Warning', 'LoadBalancerOptionImmutable', message, { once: true });
      }
    }
    const children = await readChildren(cloud.octavia, lb, desired.listeners, signal);
    const step = nextStep(desired.listeners, children);
    if (step) {
      if (await applyStep(cloud.octavia, lb, step, tags, signal)) {
        logger.info({ service: key, loadBalancerId: lb.id, change: step.kind }, 'load balancer change applied');
      }
      return soon('PENDING_UPDATE');
    }
    const vipPort = port ?? { id: lb.vip_port_id };
    const fipInput = await this.#floatingInput(key, lbName, svc, vipPort, options, signal);
    const fips = await ensureFloatingIps(fipInput, split.fips, signal);
    for (const w of [...fipInput.warnings, ...fips.warnings])
      this.#event(svc, 'Warning', w.reason, w.message, { once: true });
    const entries = fips.ingress.map((ip) => (options.hostname ? { hostname: options.hostname } : { ip }));
    await this.#writeIngress(svc, entries, signal);
    // Converged: said once per state (VIP, listeners, members, ingress), however often a pass finds it so.
    const members = desired.listeners.reduce((n, l) => n + l.members.length, 0);
    const shown = entries.map((e) => e.hostname ?? e.ip);
    const ingress = shown.length > 0 ? `, ingress ${shown.join(', ')}` : '';
    const summary = `VIP ${address}, ${desired.listeners.length} listener(s), ${members} member(s)${ingress}`;
    this.#event(svc, 'Normal', 'EnsuredLoadBalancer', `load balancer ${lb.id} is ACTIVE: ${summary}`, { once: true });
    const vipAddresses = new Set([lb.vip_address, ...(lb.additional_vips ?? []).map((v) => v.ip_address)]);
    const floating = fips.ingress.filter((ip) => !vipAddresses.has(ip));
    this.#o.converged?.saw(key, seenLoadBalancer(lb, children, floating));
    this.#o.converged?.set(key, [
      lb.id,
      vipPort.id,
      ...children.listeners.map((l) => l.id),
      ...children.pools.map((p) => p.id),
      ...[...children.members.values()].flatMap((list) => list.map((m) => m.id)),
      // Its floating IPs on the VIP as this pass found them (a pass that changed them records them next time), those
      // tagged for the cluster: the sweep lists only those.
      ...(fips.changed
        ? []
        : split.fips
            .filter((f) => f.port_id === vipPort.id && f.tags.includes(clusterTag(this.#o.config.clusterId)))
            .map((f) => f.id)),
    ]);
    if (admission.unknown.size > 0) return { requeueAfterMs: MEMBER_RECHECK_MS };
  }

  #desired(
    svc: BalancedService,
    key: string,
    lbName: string,
    subnet: SubnetInfo | undefined,
    vips: readonly Vip[],
    sctp: boolean,
    options: ServiceOptions,
    filter: MemberFilter = this.#memberFilter(svc, subnet),
  ): DesiredListeners & { access: AccessReport } {
    const slices = this.#o.endpointSlices.byIndex(SLICE_SERVICE_INDEX, key);
    const endpoints = slices.length === 0 ? this.#o.endpoints?.get(key) : undefined;
    // Octavia checks allowed_cidrs against the primary VIP's family only.
    const family = parseIp(vips[0]?.address ?? svc.spec.clusterIP)?.version ?? 4;
    const families = vips.flatMap((v) => familyOf(v.address) ?? []);
    // Under NetworkPolicy, members carry no subnet: Octavia reaches them through the router from the VIP subnet, so
    // the amphora's source address is on the service subnet, which an isolated pod accepts (docs/translation.md). A
    // provider that keeps the client's address needs the members' subnet (the OVN provider refuses them without).
    const memberSubnet = this.#o.config.networkPolicies && !this.#provider.memberSubnetRequired ? undefined : subnet;
    const podRanges = this.#podRanges(subnet);
    const report: AccessReport = { notAdmitted: [], capped: [] };
    const peers = this.#peers;
    const podOf = (address: string) => this.#podOf(svc, address);
    const listeners = desiredListeners({
      svc,
      lbName,
      sctp,
      monitorTypes: this.#provider.monitorTypes,
      options,
      allowedCidrs: allowedCidrs(options.sourceRanges, family, podRanges),
      members: (port) =>
        (endpoints
          ? endpointsMembers(endpoints, port, memberSubnet, families)
          : sliceMembers(slices, port, memberSubnet, families)
        ).filter((m) => filter.admit(m.address)),
      access:
        peers &&
        ((protocol, members) => {
          const sourceRanges = options.sourceRanges;
          const access = listenerAccess({ protocol, members, podOf, peers, sourceRanges, family, podRanges });
          for (const m of access.notAdmitted) report.notAdmitted.push({ member: m, protocol, pod: podOf(m.address) });
          if (access.capped !== undefined) report.capped.push({ protocol, count: access.capped });
          return access;
        }),
    });
    return { ...listeners, access: report };
  }

  /** The pod of the Service's namespace that holds `address`, as `namespace/name`. */
  #podOf(svc: BalancedService, address: string): string | undefined {
    const holder = this.#o.pods
      ?.byIndex(POD_IP_INDEX, address)
      .find((p) => p.metadata.namespace === svc.metadata.namespace);
    return holder && `${holder.metadata.namespace}/${holder.metadata.name}`;
  }

  /** Whether a policy of one of the Service's endpoint pods restricts who may reach it on its port. */
  #policyRestricted(svc: BalancedService): boolean {
    for (const e of this.#endpointPeers(svc)) if (!e.peers.everyone) return true;
    return false;
  }

  /**
   * What the policies of the Service's endpoint pods admit, as one string: equal strings, equal listeners. The module
   * compares it when pods, namespaces and policies change, and queues the Service only when it changed.
   */
  peersSignature(svc: BalancedService): string {
    const parts: string[] = [];
    for (const e of this.#endpointPeers(svc)) {
      const peers = e.peers.everyone ? '*' : e.peers.cidrs.map(formatCidr).join(',');
      parts.push(`${e.address}:${e.port}/${e.protocol}=${peers}`);
    }
    return parts.sort().join(' ');
  }

  /** Each endpoint (of its EndpointSlices) a pod of the Service's namespace holds, with what its policies admit. */
  *#endpointPeers(svc: BalancedService) {
    const peers = this.#peers;
    if (!peers) return;
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    for (const slice of this.#o.endpointSlices.byIndex(SLICE_SERVICE_INDEX, key))
      for (const ep of slice.endpoints ?? [])
        for (const address of ep.addresses) {
          const pod = this.#podOf(svc, address);
          if (!pod) continue;
          for (const p of slice.ports ?? []) {
            const protocol = p.protocol ?? 'TCP';
            if (p.port == null || (protocol !== 'TCP' && protocol !== 'UDP' && protocol !== 'SCTP')) continue;
            yield { address, port: p.port, protocol, peers: peers(pod, p.port, protocol) };
          }
        }
  }

  /** The Warnings of what the members' policies decided: members left out, listeners past the bound. */
  #accessEvents(svc: BalancedService, key: string, desired: { access: AccessReport }): void {
    const { notAdmitted, capped } = desired.access;
    if (notAdmitted.length > 0) {
      const named = notAdmitted
        .slice(0, 5)
        .map((n) => `${n.member.address}:${n.member.protocol_port}/${n.protocol}${n.pod ? ` (pod ${n.pod})` : ''}`);
      const more = notAdmitted.length > 5 ? `, and ${notAdmitted.length - 5} more` : '';
      const message = `${notAdmitted.length} endpoint(s) of service ${key} are not members: their pods' NetworkPolicies admit no peer on that port, so no client of the load balancer may reach them: ${named.join(', ')}${more}`;
      this.#event(svc, 'Warning', 'EndpointNotAdmitted', message, { once: true });
    }
    for (const c of capped) {
      const message = `the NetworkPolicies of service ${key}'s pods admit ${c.count} address ranges on a ${c.protocol} port, past the ${MAX_POLICY_CIDRS} a listener takes: the listener admits no client until they admit fewer`;
      this.#event(svc, 'Warning', 'AllowedCidrsCapped', message, { once: true });
    }
  }

  /** Which endpoint addresses may be members of `svc` (members.ts): its namespace's pods, or outside the cluster. */
  #memberFilter(svc: BalancedService, podSubnet: SubnetInfo | undefined): MemberFilter {
    const { config, subnets, cluster } = this.#o;
    const cidrs = (info: SubnetInfo | undefined) => (info ? familySubnets(info).map((s) => s.cidr) : []);
    const shared = subnets.name === 'shared';
    const known = cluster.current();
    const configured = rangesOf(
      config.subnets.strategy === 'shared' ? config.subnets.shared : config.subnets.namespace,
    );
    return memberFilter({
      namespace: svc.metadata.namespace,
      // Upstream's endpoints controller manages no endpoints for an empty selector either.
      selectorless: Object.keys(specOf(svc).selector ?? {}).length === 0,
      own: shared ? [] : cidrs(podSubnet),
      shared: shared ? [...configured, ...cidrs(podSubnet), ...cidrs(known?.podSubnet)] : [],
      cluster: [...configured, ...rangesOf(config.serviceSubnet), ...cidrs(known?.serviceSubnet)],
      pods: this.#o.pods,
    });
  }

  #isLoadBalancerType(svc: DeepReadonly<Service>): boolean {
    return isLoadBalancerType(svc, this.#o.config.loadBalancer.classes);
  }

  #options(svc: BalancedService, versions: OctaviaVersions): ReturnType<typeof serviceOptions> {
    const { config } = this.#o;
    return serviceOptions(svc, versions, {
      floatingNetworks: config.floatingIps.networks ?? [],
      defaultFloatingNetworkId: config.floatingIpNetworkId,
      healthMonitor: config.loadBalancer.healthMonitor ?? false,
      provider: this.#provider,
    });
  }

  /**
   * The pods' ranges, which `loadBalancerSourceRanges` never shut out: the VIP is also the clusterIP, and kube-proxy
   * lets in-cluster clients reach a clusterIP whatever the ranges say.
   */
  #podRanges(podSubnet: SubnetInfo | undefined): string[] {
    const { subnets } = this.#o.config;
    const configured = rangesOf(subnets.strategy === 'shared' ? subnets.shared : subnets.namespace);
    const shared = this.#o.cluster.current()?.podSubnet;
    const of = (info: SubnetInfo | undefined) => (info ? familySubnets(info).map((s) => s.cidr) : []);
    return [...configured, ...of(shared), ...of(podSubnet)];
  }

  /** What the floating IPs of a Service are decided from; `warnings` for a floating subnet that cannot be found. */
  async #floatingInput(
    key: string,
    lbName: string,
    svc: BalancedService,
    vipPort: FloatingIpInput['vipPort'],
    options: ServiceOptions,
    signal: AbortSignal,
  ): Promise<FloatingIpInput & { warnings: { reason: string; message: string }[] }> {
    const { cloud, config } = this.#o;
    const spec = specOf(svc);
    const networkId = options.floatingNetworkId ?? config.floatingIpNetworkId;
    const subnet =
      networkId && options.floatingSubnet
        ? await resolveFloatingSubnet(cloud.neutron, networkId, options.floatingSubnet, key, signal)
        : { subnetId: undefined, warnings: [] };
    return {
      neutron: cloud.neutron,
      clusterId: config.clusterId,
      lbName,
      uid: svc.metadata.uid,
      service: key,
      vipPort,
      vipAddress: svc.spec.clusterIP,
      loadBalancerType: this.#isLoadBalancerType(svc),
      internal: options.internal,
      loadBalancerIP: spec.loadBalancerIP || undefined,
      externalIPs: spec.externalIPs ?? [],
      // A floating subnet that names nothing allocates nothing (rather than from another subnet).
      networkId: options.floatingSubnet && !subnet.subnetId ? undefined : networkId,
      subnetId: subnet.subnetId,
      keep: options.keepFloatingIp,
      policy: config.floatingIps,
      now: this.#clock.now(),
      warnings: subnet.warnings,
    };
  }

  /** A `LoadBalancerStuck` Warning once pending past `stuckAfterSeconds`; its message names the stuck period. */
  #checkStuck(key: string, svc: DeepReadonly<Service> | undefined, lb: LoadBalancer): void {
    const since = octaviaTime(lb.updated_at ?? lb.created_at);
    const seconds = Math.round((this.#clock.now() - since) / 1000);
    if (!since || seconds < this.#o.config.loadBalancer.stuckAfterSeconds) return;
    const at = new Date(since).toISOString();
    const message = `load balancer ${lb.id} has been ${lb.provisioning_status} since ${at} (Octavia); Raven keeps looking`;
    // Logged where the Warning is recorded, once per stuck period, not at every pass that finds it still pending.
    const said = svc ? this.#event(svc, 'Warning', 'LoadBalancerStuck', message, { once: true }) : false;
    const context = { service: key, loadBalancerId: lb.id, status: lb.provisioning_status, seconds };
    if (said) this.#o.logger.warn(context, 'load balancer stuck');
    else this.#o.logger.debug(context, 'load balancer still stuck');
  }

  #event(
    svc: DeepReadonly<Service>,
    type: EventType,
    reason: string,
    message: string,
    options?: { once: boolean },
  ): boolean {
    const ref = objectReference(svc, { kind: 'Service', apiVersion: 'v1' });
    return this.#o.recorder?.record(ref, type, reason, message, options) ?? true;
  }

  /**
   * Adds the finalizer (optimistic concurrency on resourceVersion); false on a conflict (the cache is behind: look
   * again).
   */
  async #addFinalizer(svc: BalancedService, signal: AbortSignal): Promise<boolean> {
    return this.#patchFinalizers(svc, [...(svc.metadata.finalizers ?? []), LB_FINALIZER], signal);
  }

  async #removeFinalizer(svc: DeepReadonly<Service>, signal: AbortSignal): Promise<ReconcileResult | void> {
    const rest = (svc.metadata.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
    if (!(await this.#patchFinalizers(svc, rest, signal))) return { requeue: true };
    const service = `${svc.metadata.namespace}/${svc.metadata.name}`;
    this.#o.logger.info({ service }, 'load balancer gone; finalizer removed');
  }

  async #patchFinalizers(svc: DeepReadonly<Service>, finalizers: string[], signal: AbortSignal): Promise<boolean> {
    const { name = '', namespace, resourceVersion } = svc.metadata;
    const patch = { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion } };
    try {
      await this.#o.client.patch(resources.services, name, namespace, patch, 'merge', { signal });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  /** `status.loadBalancer.ingress`, written (status subresource) only when it differs. */
  async #writeIngress(
    svc: DeepReadonly<Service>,
    ingress: readonly LoadBalancerIngress[],
    signal: AbortSignal,
  ): Promise<void> {
    const current = svc.status?.loadBalancer?.ingress ?? [];
    const same = (a: DeepReadonly<LoadBalancerIngress>, b: LoadBalancerIngress) =>
      (a.ip ?? '') === (b.ip ?? '') && (a.hostname ?? '') === (b.hostname ?? '');
    if (current.length === ingress.length && current.every((i, n) => same(i, ingress[n]!))) return;
    const patch = { status: { loadBalancer: { ingress: ingress.length > 0 ? ingress : null } } };
    try {
      const { name = '', namespace } = svc.metadata;
      await this.#o.client.patch(resources.services, name, namespace, patch, 'merge', {
        signal,
        subresource: 'status',
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
