import type { DeepReadonly, Logger } from '../../core/index.ts';
import { RetryableError, type EventChannel, type EventRecorder, type ReconcileResult } from '../../controller/index.ts';
import {
  formatVif,
  objectReference,
  parseVif,
  splitKey,
  VIF_ANNOTATION,
  type EventType,
  type Pod,
  type Vif,
} from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { isConflict, isNotFound as isKubeNotFound, resources, type KubeClient } from '../../kube/client/index.ts';
import { OpenStackError, type Port } from '../../openstack/index.ts';
import {
  familySubnets,
  isOwned,
  subnetHolding,
  untagged,
  podPortTags,
  podPortMark,
  POD_DEVICE_OWNER,
  resourceName,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
  type PodGroupIds,
  type ReconcilerConfig,
  type SubnetInfo,
  type SubnetStrategy,
} from '../network/index.ts';
import { recordedPort, type RecordedPort } from './port-record.ts';
import type { PodPorts } from './ports.ts';
import type { CachedPod } from './trim.ts';
import {
  annotationMatches,
  differsInSignatureOnly,
  portFits,
  vifDifferences,
  vifFor,
  type VifSigning,
} from './vif-check.ts';
import type { PendingClaims } from './claims.ts';
import type { PortPools } from './pools.ts';
import { nestedVifFor, nodeOfPort, type NestedPods, type PodTrunk } from './nested.ts';
import { wantsPort, type WiredPod } from './wiring.ts';

/** "A pod port was deleted": pods waiting on the port quota or a full subnet may get one now. */
export interface PortFreed {
  portId: string;
}

/** The NetworkPolicy translation's part in a pod's port: which groups it carries. */
export interface PodSecurityGroups {
  /** The groups the pod's port must carry now (Neutron ids, sorted), or those that do not exist yet. */
  of(pod: DeepReadonly<CachedPod>): PodGroupIds;
  /** Called when the reconciler changed the groups of a pod's port (metrics; the policy reconciler looks again). */
  changed: (podKey: string) => void;
  /** Called when Neutron says a group the pod's port was to carry does not exist: Raven's record of them is stale. */
  gone?: () => void;
  /**
   * Make before break: whether the port (carrying `keep` and `drop`) may drop `drop` now, or must wait for what the
   * narrowing relies on (docs/policy.md, "Transitions"). Absent: at once.
   */
  mayDrop?: (portId: string, drop: readonly string[], keep: readonly string[]) => { waitMs: number } | undefined;
  /** Called when the reconciler added groups to a port (the record of when each port widened has this one writer). */
  widened?: (portId: string) => void;
}

export interface PodReconcilerOptions {
  cloud: Cloud;
  config: Pick<ReconcilerConfig, 'clusterId' | 'securityGroups'>;
  client: KubeClient;
  pods: Lister<CachedPod>;
  subnets: SubnetStrategy;
  /** Raven's pod ports in Neutron, written through: its record is what an annotation is checked against. */
  ports: PodPorts;
  /** The warm pools and the claims of the ports taken from them; absent: pools are off. */
  pools?: { pools: PortPools; claims: PendingClaims } | undefined;
  /**
   * The NetworkPolicy translation: each port carries exactly its pod's groups (one port update when they change).
   * Absent: ports get the configured `securityGroups` when made, and are never re-grouped.
   */
  groups?: PodSecurityGroups | undefined;
  /** Whether a pod with this uid exists and wants a port: a port whose `device_id` names none is free. */
  portWanted: (uid: string) => boolean;
  /** Where the reconciler says that it deleted a pod port. */
  portsFreed: EventChannel<PortFreed>;
  logger: Logger;
  /**
   * `PortCreated` (a cold create), `PortMissing`, `VifTampered`, `ForeignPort`, `PodIPChanged` Events on the pod; a
   * warm pool's port gets none (its VIF annotation is the record).
   */
  recorder?: EventRecorder | undefined;
  /** Called once per pod uid, right after its first VIF annotation is written, with the pod the API server returned. */
  onNetworkReady?: ((pod: Pod) => void) | undefined;
  /** Raven's VIF key and term: VIFs of bound ports are signed, so the node may plug them without asking Neutron. */
  vifSigning?: VifSigning | undefined;
  /** Nested mode: a pod on a VM node gets a subport of the node's trunk (docs/nested.md); absent: off. */
  nested?: NestedPods | undefined;
}

/** `10.0.0.0/24` or, dual-stack, `10.0.0.0/24 and fd00::/64`. */
function subnetsText(subnet: SubnetInfo): string {
  return familySubnets(subnet)
    .map((s) => s.cidr)
    .join(' and ');
}

/** How long a pod whose namespace has no subnet yet waits before looking again (its arrival also queues the pod). */
const SUBNET_WAIT_MS = 1_000;
/** How long a pod whose security groups are not all made yet waits (their creation also queues it). */
const GROUPS_WAIT_MS = 1_000;
/** How long a pod on a VM node whose trunk is not known yet waits (the trunk's arrival also queues it). */
const NESTED_WAIT_MS = 1_000;

/**
 * Pod → Neutron port, published on the pod as `raven.openstack.org/vif` (one Kubernetes write per pod). Its outcome
 * depends on the pod cache, Neutron (and Raven's record of it: {@link PodPortRecord}) and the key.
 *
 * - **The annotation is a projection, never an input.** A pod whose annotation is exactly the VIF of the port Raven's
 *   record holds for it (`device_id` = its uid, on its namespace's subnet) is done without any OpenStack call. Any
 *   other annotation — another pod's port, another address, garbage — is rewritten from the record at once, with a
 *   Warning `VifTampered` naming what differed.
 * - Otherwise its port is found by `device_id` = pod uid among the ports of its name, and taken only when it carries
 *   Raven's tags for it (or none: its tags were lost to a crash between create and tag) and sits on the pod's subnet.
 *   Anything else claiming the pod is left alone (a Warning `ForeignPort`), and Raven's own port on a wrong network is
 *   deleted. A missing port is created — `device_owner` `compute:raven`, `binding:host_id` = node, the configured
 *   security groups, owner tags — asking for the address the pod had when its port vanished (else a Warning
 *   `PodIPChanged`).
 * - The annotation is written with the cached pod's resourceVersion: a reconcile working from a stale cache gets a
 *   conflict and looks again, so no pod is wired (and counted) twice.
 * - A pod that is gone, finished, or hostNetwork has this cluster's ports of its name deleted; so are those of an
 *   earlier pod of the same name. Each deletion is sent on `portsFreed`, which wakes the pods waiting on the quota or
 *   a full subnet. Ports without this cluster's tags are never deleted.
 */
export class PodReconciler {
  readonly #o: PodReconcilerOptions;

  constructor(options: PodReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const { namespace = '', name } = splitKey(key);
    const pod = this.#o.pods.get(key);
    // The record's loader queues every pod once it is loaded.
    if (!this.#o.ports.record.synced()) return;
    if (!wantsPort(pod)) return this.#discard(this.#leftBehind(namespace, name), signal);
    const subnet = this.#o.subnets.subnetFor(namespace);
    if (!subnet) return { requeueAfterMs: SUBNET_WAIT_MS, waiting: 'NoSubnet' };
    // A pod on a VM whose trunk is not known (yet, or refused: a Warning on the Node says why) waits: a port bound to
    // the VM's name would never work.
    const nested = this.#o.nested?.nodeOf(pod.spec.nodeName);
    if (nested === 'pending') return { requeueAfterMs: NESTED_WAIT_MS, waiting: 'NestedTrunk' };
    const uid = pod.metadata.uid;
    const current = pod.metadata.annotations?.[VIF_ANNOTATION];
    const vif = parseVif(current);
    const groups = this.#groupsOf(pod);
    // The record holds the pod's port (the one its annotation names, or — the annotation lost, forged or not written
    // yet — another): no OpenStack call, unless its groups must change.
    const recorded = this.#recorded(uid, vif, subnet);
    const expected = recorded && (await this.#vifOf(uid, recorded, subnet, nested, signal));
    // On a VM, the pod's port that is no subport of the node's trunk (the node became a VM; someone removed it):
    // replaced by one that is.
    if (recorded && !expected) await this.#deletePorts([recorded], signal);
    if (recorded && expected) {
      const result = await this.#publish(pod, expected, current, vif, signal);
      // A second port claimed for this pod (a crash between a cold create and its tagging, adopted later): deleted.
      const extra = this.#o.ports.record
        .allForPod(uid)
        .filter((p) => p.id !== recorded.id && !this.#o.pools?.claims.get(p.id));
      if (extra.length > 0 && !result) await this.#deletePorts(extra, signal);
      return result ?? (await this.#regroup(pod, recorded, groups, signal));
    }
    // A new port is made (or taken) in its groups: until they all exist, the pod waits (their creation queues it).
    if ('missing' in groups) return this.#waitForGroups(pod, groups.failed);
    // The warm path: a pool port (on a VM, a free subport of its trunk's pool), published at once; its claim is
    // written to Neutron by the claim reconciler. A pod whose own port vanished is not one: it gets a new port that
    // asks for its address.
    const pooled = this.#fromPool(pod, subnet, vif, groups.ids);
    const pooledVif = pooled && (await this.#vifOf(uid, pooled, subnet, nested, signal));
    if (pooled && !pooledVif) throw new Error(`pool port ${pooled.id} is no subport of trunk ${nested?.trunkId}`);
    if (pooledVif) return this.#publish(pod, pooledVif, current, vif, signal, vif?.podUid !== uid);
    const found = await this.#findOrCreate(pod, subnet, vif, groups.ids, nested, signal);
    const port = nested ? await this.#claimSubport(uid, found.port, nested, signal) : found.port;
    const made = await this.#vifOf(uid, port, subnet, nested, signal);
    if (!made) throw new Error(`port ${port.id} was added to trunk ${nested?.trunkId} but is not on it`);
    return this.#publish(pod, made, current, vif, signal, !found.replacedGone);
  };

  /**
   * The VIF a port gives the pod: on a VM, with its trunk, VLAN id and the parent's MAC (the trunk read once when its
   * subports are not known yet) — undefined when the port is no subport of the node's trunk.
   */
  async #vifOf(
    uid: string,
    port: RecordedPort,
    subnet: SubnetInfo,
    nested: PodTrunk | undefined,
    signal: AbortSignal,
  ): Promise<Vif | undefined> {
    if (!nested) return vifFor(uid, port, subnet, this.#o.vifSigning);
    const { subports } = this.#o.nested!;
    if (subports.vlanOf(nested.trunkId, port.id) === undefined)
      await subports.read(this.#o.cloud.neutron, nested.trunkId, signal);
    const vlan = subports.vlanOf(nested.trunkId, port.id);
    if (vlan === undefined) return undefined;
    const where = { trunkId: nested.trunkId, vlan, parentMac: nested.parentMac };
    return nestedVifFor(uid, port, subnet, where, nested.node, this.#o.vifSigning);
  }

  /**
   * A VM pod's port onto the node's trunk (a free VLAN id), then claimed for the pod: Neutron refuses a port with a
   * `device_id` as a subport, so the claim comes second — a crash between leaves an unclaimed subport of the pod's
   * name, which its next reconcile takes up again.
   */
  async #claimSubport(uid: string, port: RecordedPort, nested: PodTrunk, signal: AbortSignal): Promise<RecordedPort> {
    await this.#o.nested!.subports.attach(this.#o.cloud.neutron, nested.trunkId, port.id, signal);
    if (port.deviceId === uid) return port;
    return this.#o.ports.update(port.id, { device_id: uid }, { signal, priority: 'critical' });
  }

  /** The groups the pod's port must carry: the translation's, or (translation off) the configured ones. */
  #groupsOf(pod: DeepReadonly<CachedPod>): PodGroupIds {
    return this.#o.groups?.of(pod) ?? { ids: [...this.#o.config.securityGroups].sort() };
  }

  /**
   * The port's groups follow the pod's (a policy, a label, a namespace's labels changed), make before break: first one
   * update that adds the new groups beside the old, then — once the translation says that what the narrowing relies on
   * has reached the dataplane — one that drops the old. Never while a claim is pending: the claim writes the groups
   * with the owner, and the pod is queued again when it lands.
   */
  async #regroup(
    pod: DeepReadonly<WiredPod>,
    port: RecordedPort,
    groups: PodGroupIds,
    signal: AbortSignal,
  ): Promise<ReconcileResult | void> {
    const translation = this.#o.groups;
    if (!translation || this.#o.pools?.claims.get(port.id)) return;
    if ('missing' in groups) return this.#waitForGroups(pod, groups.failed);
    const current = port.securityGroups;
    const wanted = groups.ids;
    if (wanted.join(',') === current.join(',')) return;
    const drop = current.filter((id) => !wanted.includes(id));
    if (wanted.some((id) => !current.includes(id))) {
      await this.#setGroups(pod, port, [...new Set([...current, ...wanted])].sort(), signal);
      translation.widened?.(port.id);
      if (drop.length === 0) return;
    }
    const hold = translation.mayDrop?.(port.id, drop, wanted);
    if (hold) return { requeueAfterMs: hold.waitMs, waiting: 'PolicyTransition' };
    await this.#setGroups(pod, port, wanted, signal);
  }

  async #setGroups(
    pod: DeepReadonly<WiredPod>,
    port: RecordedPort,
    ids: readonly string[],
    signal: AbortSignal,
  ): Promise<void> {
    await this.#o.ports.update(port.id, { security_groups: [...ids] }, { signal }).catch((err: unknown) => {
      throw err instanceof OpenStackError && err.type === 'SecurityGroupNotFound' ? this.#groupGone(err) : err;
    });
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    this.#o.logger.info({ pod: key, portId: port.id, groups: ids.length }, 'port security groups changed');
    this.#o.groups?.changed(key);
  }

  /** A group Raven recorded is gone from Neutron: its record is listed again, and the pod retried meanwhile. */
  #groupGone(err: OpenStackError): RetryableError {
    this.#o.groups?.gone?.();
    return new RetryableError('SecurityGroupMissing', `a security group of the pod's port is gone: ${err.message}`, {
      cause: err,
    });
  }

  /**
   * A free port of the pod's pool, recorded as the pod's at once (the claim that makes Neutron say so follows), or
   * undefined when pools are off or the pool is empty.
   */
  #fromPool(
    pod: DeepReadonly<WiredPod>,
    subnet: SubnetInfo,
    vif: Vif | undefined,
    groups: readonly string[],
  ): RecordedPort | undefined {
    const warm = this.#o.pools;
    const { namespace, name, uid } = pod.metadata;
    const own = vif?.podUid === uid;
    // The pool port the pod's own annotation names, free again (its claim was lost to a crash): the same one back.
    const taken = own
      ? warm?.pools.takePort(vif.portId, pod.spec.nodeName, subnet, groups)
      : warm?.pools.take(pod.spec.nodeName, subnet, groups, this.#o.groups !== undefined);
    if (!warm || !taken) return undefined;
    // A port of another set (its own set's pool was empty) gets the pod's groups with its claim.
    const mine: RecordedPort = {
      ...taken,
      deviceId: uid,
      name: resourceName(this.#o.config.clusterId, namespace, name),
      ...(this.#o.groups ? { securityGroups: groups } : {}),
    };
    this.#o.ports.reserve(mine);
    warm.claims.add(taken.id, { uid, from: taken, reserved: mine }, `${namespace}/${name}`);
    // No Event: the VIF annotation names the port, and a warm hit's one Kubernetes write is that annotation.
    return mine;
  }

  /** Ports recorded under a pod's name whose `device_id` names no pod that wants one (the pod is gone or done). */
  #leftBehind(namespace: string, name: string): RecordedPort[] {
    const portName = resourceName(this.#o.config.clusterId, namespace, name);
    return this.#o.ports.record.named(portName).filter((p) => !this.#o.portWanted(p.deviceId));
  }

  /**
   * Ports no pod wants: back to their pool (no Neutron request; a subport stays on its trunk, on its VLAN id), or
   * deleted when pools are off — or when no pool can hold it: bound to no host and no subport of a known VM's trunk.
   */
  async #discard(ports: readonly RecordedPort[], signal: AbortSignal): Promise<void> {
    const warm = this.#o.pools;
    const nowhere = warm ? ports.filter((p) => !nodeOfPort(p, this.#o.nested)) : ports;
    await this.#deletePorts(nowhere, signal);
    if (!warm) return;
    for (const port of ports) {
      if (nowhere.includes(port)) continue;
      warm.claims.delete(port.id);
      warm.pools.give(port);
      this.#o.portsFreed.send({ portId: port.id });
    }
  }

  /** The pod's port in the record, on its subnet: the one the annotation names first, else any. */
  #recorded(uid: string, vif: Vif | undefined, subnet: SubnetInfo): RecordedPort | undefined {
    const named = vif ? this.#o.ports.record.get(vif.portId) : undefined;
    return [named, this.#o.ports.record.forPod(uid)].find((p) => p?.deviceId === uid && portFits(p, subnet));
  }

  /**
   * The pod's port from Neutron: Raven's (adopted when its tags were lost), else a new one — `replacedGone` when it
   * replaces the one the pod's own annotation named.
   */
  async #findOrCreate(
    pod: DeepReadonly<WiredPod>,
    subnet: SubnetInfo,
    vif: Vif | undefined,
    groups: readonly string[],
    nested: PodTrunk | undefined,
    signal: AbortSignal,
  ): Promise<{ port: RecordedPort; replacedGone: boolean }> {
    const { clusterId } = this.#o.config;
    const { namespace, name, uid } = pod.metadata;
    // One list by name finds this pod's port (by device_id) and those of earlier pods of the same name.
    // A subport's device_owner is the trunk driver's (ML2/OVN: trunk:subport): on a VM, by name alone.
    const portName = resourceName(clusterId, namespace, name);
    const ports = await this.#o.cloud.neutron.ports.list(
      nested ? { name: portName } : { name: portName, device_owner: POD_DEVICE_OWNER },
      // The pod waits for this path: ahead of pool refills and garbage collection in Neutron's limit.
      { signal, priority: 'critical' },
    );
    // On a VM, Raven's unclaimed port of this name is one a crash left between its create and its claim: taken up.
    const claiming = ports.filter(
      (p) => p.device_id === uid || (nested !== undefined && p.device_id === '' && isOwned(p.tags, clusterId, 'pod')),
    );
    const fits = (p: Port) => portFits(recordedPort(p), subnet);
    const found =
      claiming.find((p) => isOwned(p.tags, clusterId, 'pod') && fits(p)) ??
      claiming.find((p) => untagged(p.tags) && fits(p));
    if (found && untagged(found.tags)) {
      await this.#o.cloud.neutron.tags.replace('ports', found.id, podPortTags(clusterId), {
        signal,
        priority: 'critical',
      });
    }
    for (const p of claiming) {
      if (p === found || isOwned(p.tags, clusterId, 'pod')) continue;
      const message = `port ${p.id} (network ${p.network_id}) names this pod as its device but is not Raven's port for it on subnet ${subnet.cidr}: left alone, not used`;
      this.#event(pod, 'Warning', 'ForeignPort', message, { once: true });
    }
    // Raven's own ports that are not (or no longer) right: of earlier pods of this name (back to the pool), or this
    // pod's on a wrong network (deleted: no pool wants it).
    const mineElsewhere = ports.filter((p) => p !== found && isOwned(p.tags, clusterId, 'pod'));
    await this.#deletePorts(
      mineElsewhere.filter((p) => p.device_id === uid),
      signal,
    );
    await this.#discard(
      mineElsewhere.filter((p) => p.device_id !== uid && !this.#o.portWanted(p.device_id)).map(recordedPort),
      signal,
    );
    if (found) {
      return { port: this.#o.ports.seen(found), replacedGone: false };
    }
    const previous = this.#previousAddresses(pod, vif, subnet);
    const replacedGone = vif?.podUid === uid;
    if (replacedGone) {
      this.#o.logger.warn({ pod: `${namespace}/${name}`, portId: vif.portId }, 'the pod port is gone from Neutron');
      const addresses = [...previous.values()];
      const keep = addresses.length > 0 ? `; asking for its address ${addresses.join(' and ')} again` : '';
      this.#event(pod, 'Warning', 'PortMissing', `port ${vif.portId} is gone from Neutron: creating another${keep}`);
    }
    return { port: await this.#create(pod, subnet, previous, groups, nested !== undefined, signal), replacedGone };
  }

  /**
   * The addresses the pod had, to ask for again when its port vanished, by subnet: `status.podIPs` (what the kubelet
   * reported, and what Services send traffic to), else its own annotation's — only on the pod's subnets (one per
   * family), and only a preference: Neutron refuses an address someone holds.
   */
  #previousAddresses(pod: DeepReadonly<WiredPod>, vif: Vif | undefined, subnet: SubnetInfo): Map<string, string> {
    const own = vif?.podUid === pod.metadata.uid ? vif.ips.map((ip) => ip.address) : [];
    const reported = pod.status.podIPs?.map((p) => p.ip) ?? (pod.status.podIP ? [pod.status.podIP] : []);
    const out = new Map<string, string>();
    for (const address of [...reported, ...own]) {
      const holder = subnetHolding(subnet, address);
      if (holder && !out.has(holder.subnetId)) out.set(holder.subnetId, address);
    }
    return out;
  }

  async #create(
    pod: DeepReadonly<WiredPod>,
    subnet: SubnetInfo,
    addresses: ReadonlyMap<string, string>,
    groups: readonly string[],
    subport: boolean,
    signal: AbortSignal,
  ): Promise<RecordedPort> {
    const { config } = this.#o;
    const { namespace, name, uid } = pod.metadata;
    // An address on each of the network's subnets (one per family), the former ones where known.
    const create = (wanted: ReadonlyMap<string, string>) =>
      this.#o.ports.create(
        {
          network_id: subnet.networkId,
          fixed_ips: familySubnets(subnet).map(({ subnetId }) => {
            const ip = wanted.get(subnetId);
            return { subnet_id: subnetId, ...(ip ? { ip_address: ip } : {}) };
          }),
          name: resourceName(config.clusterId, namespace, name),
          description: podPortMark(config.clusterId),
          device_owner: POD_DEVICE_OWNER,
          // A subport is bound by the trunk driver, and claimed only once it is one (Neutron refuses a port with a
          // device_id as a subport).
          ...(subport ? {} : { device_id: uid, 'binding:host_id': pod.spec.nodeName }),
          ...(groups.length > 0 ? { security_groups: [...groups] } : {}),
          tags: podPortTags(config.clusterId),
        },
        // The VIF needs no revision_number: spare Zed's re-read after tagging.
        { signal, reread: false, priority: 'critical' },
      );
    let port: RecordedPort;
    try {
      port = await this.#withErrors(pod, subnet, () => create(addresses));
    } catch (err) {
      // The address is taken (or not Raven's to ask for): any address will do, and the pod is told.
      if (!(addresses.size > 0 && err instanceof RetryableError && err.reason === 'AddressUnavailable')) throw err;
      port = await this.#withErrors(pod, subnet, () => create(new Map()));
      const now = port.fixedIps.map((f) => f.address).join(' and ');
      const former = [...addresses.values()].join(' and ');
      const message = `its former address ${former} is no longer free: the new port has ${now}; the pod's network changes when its sandbox is re-created`;
      this.#event(pod, 'Warning', 'PodIPChanged', message);
    }
    const ips = port.fixedIps.map((f) => f.address);
    this.#o.logger.info({ pod: `${namespace}/${name}`, portId: port.id, ip: ips.join(',') }, 'port created');
    const detail = `${ips.join(' and ') || 'no address'} on subnet ${subnetsText(subnet)}, MAC ${port.mac}`;
    // With warm pools on, a new port means the pod's pool had none free: say so (the pool is being refilled).
    const why = this.#o.pools ? `; the warm pool of node ${pod.spec.nodeName} had no free port` : '';
    this.#event(pod, 'Normal', 'PortCreated', `Neutron port ${port.id} (${detail})${why}`);
    return port;
  }

  /** Neutron's refusals as what they mean for the pod. */
  async #withErrors<T>(pod: DeepReadonly<WiredPod>, subnet: SubnetInfo, call: () => Promise<T>): Promise<T> {
    const { namespace, name } = pod.metadata;
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof OpenStackError)) throw err;
      const outside = { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS };
      switch (err.type) {
        case 'OverQuota':
          throw new RetryableError(
            'QuotaExceeded',
            `Neutron port quota exceeded creating the port of pod ${namespace}/${name}: ${err.message}`,
            outside,
          );
        case 'IpAddressGenerationFailure':
          throw new RetryableError(
            'SubnetExhausted',
            `subnet ${subnet.cidr} has no free address for pod ${namespace}/${name}`,
            outside,
          );
        case 'NetworkNotFound':
        case 'SubnetNotFound':
          this.#o.subnets.subnetGone(namespace);
          throw new RetryableError('NetworkMissing', `the pod network (subnet ${subnet.cidr}) is gone: rebuilding it`, {
            cause: err,
          });
        case 'SecurityGroupNotFound':
          throw this.#groupGone(err);
        case 'IpAddressAlreadyAllocated':
        case 'InvalidIpForSubnet':
        case 'InvalidInput':
          throw new RetryableError('AddressUnavailable', err.message, { cause: err });
      }
      if (err.status === 403) throw new RetryableError('AddressUnavailable', err.message, { cause: err });
      throw err;
    }
  }

  /**
   * Writes the VIF when the annotation is not exactly it, guarded by the cached pod's resourceVersion. A `VifTampered`
   * Warning when the annotation was a VIF of this pod (or not a VIF at all) that Raven did not write as it is —
   * unless `tampered` is false: it named the pod's own port, which is gone.
   */
  async #publish(
    pod: DeepReadonly<WiredPod>,
    expected: Vif,
    current: string | undefined,
    vif: Vif | undefined,
    signal: AbortSignal,
    tampered = true,
  ): Promise<ReconcileResult | void> {
    if (annotationMatches(current, vif, expected, this.#o.vifSigning?.key)) return;
    const { namespace, name, uid, resourceVersion } = pod.metadata;
    const value = formatVif(expected);
    const patch = { metadata: { resourceVersion, annotations: { [VIF_ANNOTATION]: value } } };
    let written: Pod;
    try {
      written = await this.#o.client.patch(resources.pods, name, namespace, patch, 'merge', { signal });
    } catch (err) {
      // The cache is behind (the informer brings the newer pod, and its reconcile), or the pod is gone.
      if (isConflict(err)) return { requeue: true };
      if (isKubeNotFound(err)) return;
      throw err;
    }
    if (tampered && current !== undefined && (vif?.podUid === uid || !vif) && !differsInSignatureOnly(vif, expected)) {
      const differences = vifDifferences(vif, expected);
      this.#o.logger.warn({ pod: `${namespace}/${name}`, differences }, 'VIF annotation rewritten from the record');
      const message = `the ${VIF_ANNOTATION} annotation did not match Raven's record and was rewritten: ${differences}`;
      this.#event(pod, 'Warning', 'VifTampered', message);
    }
    if (vif?.podUid !== uid) this.#o.onNetworkReady?.(written);
  }

  async #deletePorts(ports: readonly Pick<Port, 'id' | 'name'>[], signal: AbortSignal): Promise<void> {
    for (const port of ports) {
      // Neutron refuses to delete a subport (409 PortInUseAsSubPort): off its trunk first.
      await this.#o.nested?.subports.detach(this.#o.cloud.neutron, port.id, signal);
      const deleted = await this.#o.ports.delete(port.id, { signal });
      if (deleted) {
        this.#o.logger.info({ port: port.name, portId: port.id }, 'port deleted');
        this.#o.portsFreed.send({ portId: port.id });
      }
    }
  }

  /**
   * The pod waits for groups not made yet. When making one failed (the project's quota is full, Neutron refuses), it
   * says so on the pod (the recorder counts the repeats on one Event); a group merely not made yet (Raven starting, a
   * policy just written) is no news.
   */
  #waitForGroups(pod: DeepReadonly<CachedPod>, failed: readonly string[]): ReconcileResult {
    if (failed.length > 0) {
      const more = failed.length > 3 ? `; and ${failed.length - 3} more` : '';
      const message = `waiting for its security group(s): ${failed.slice(0, 3).join('; ')}${more}`;
      this.#event(pod, 'Warning', 'SecurityGroupsPending', message);
    }
    return { requeueAfterMs: GROUPS_WAIT_MS, waiting: 'SecurityGroups' };
  }

  #event(
    pod: DeepReadonly<CachedPod>,
    type: EventType,
    reason: string,
    message: string,
    options?: { once: boolean },
  ): void {
    this.#o.recorder?.record(objectReference(pod, { kind: 'Pod', apiVersion: 'v1' }), type, reason, message, options);
  }
}
