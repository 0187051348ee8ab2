import type { DeepReadonly, Logger } from '../../core/index.ts';
import { RetryableError, type EventRecorder, type EventType, type ReconcileResult } from '../../controller/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import { resources, type KubeClient } from '../../kube/client/index.ts';
import { OpenStackError, type Port } from '../../openstack/index.ts';
import { ownerOf, ownerTags, POD_DEVICE_OWNER, resourceName } from '../common/identity.ts';
import { WAIT_FOR_OUTSIDE_FIX_MS } from '../common/retry.ts';
import type { Cloud, ReconcilerConfig, SubnetInfo } from '../common/types.ts';
import { formatVif, parseVif, VIF_ANNOTATION, type Vif } from '../common/vif.ts';
import type { SubnetStrategy } from '../namespace/strategy.ts';

export interface PodReconcilerOptions {
  cloud: Cloud;
  config: ReconcilerConfig;
  client: KubeClient;
  pods: Lister<KubeObject>;
  subnets: SubnetStrategy;
  logger: Logger;
  /** Normal `PortCreated` and Warning `PortMissing` Events on the pod. */
  recorder?: EventRecorder | undefined;
  /** Queues a pod key again: pods waiting on the port quota or a full subnet, as soon as one of their ports is deleted. */
  requeue?: ((key: string) => void) | undefined;
  /** Called right after a pod's first VIF annotation (for its uid) is written, with the pod the API server returned (metrics). */
  onNetworkReady?: ((pod: KubeObject) => void) | undefined;
}

interface PodSpec {
  nodeName?: string;
  hostNetwork?: boolean;
}

const SUBNET_WAIT_MS = 1_000;

/** Whether a pod should have a port: scheduled, not hostNetwork, not finished. Terminating pods keep theirs until gone. */
export function wantsPort(pod: DeepReadonly<KubeObject> | undefined): boolean {
  if (!pod) return false;
  const spec = pod.spec as PodSpec | undefined;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return Boolean(spec?.nodeName) && !spec?.hostNetwork && phase !== 'Succeeded' && phase !== 'Failed';
}

/** The VIF a port gives a pod on `subnet`. */
export function vifFor(podUid: string, port: Port, subnet: SubnetInfo): Vif {
  const prefixLength = Number(subnet.cidr.split('/')[1]);
  return {
    version: 1,
    podUid,
    portId: port.id,
    networkId: port.network_id,
    subnetId: subnet.subnetId,
    mac: port.mac_address,
    ips: port.fixed_ips
      .filter((ip) => ip.subnet_id === subnet.subnetId)
      .map((ip) => ({ address: ip.ip_address, prefixLength, gateway: subnet.gatewayIp })),
    mtu: subnet.mtu,
    active: port.status === 'ACTIVE',
  };
}

/**
 * Pod → Neutron port, published on the pod as `raven.openstack.org/vif` (one Kubernetes write per pod).
 *
 * - A pod whose annotation already names a port for its uid is done without any OpenStack call: a restart over
 *   thousands of wired pods costs only the informers' paginated lists. (Drift — a port deleted by hand — is for a
 *   resync with verification, not for every reconcile.)
 * - Otherwise its port is found by `device_id` = pod uid (so a crash after the create, or after a lost answer, never
 *   makes a second port), created when missing — `device_owner` `compute:raven`, `binding:host_id` = node, the
 *   configured security groups, owner tags — and the annotation is written.
 * - A pod that is gone, finished, or hostNetwork has its ports (found by name, as a deleted pod's uid is no longer
 *   known) deleted; so are ports of an earlier pod of the same name. Pods that failed on the quota or a full subnet
 *   are queued again as soon as a port is deleted, rather than waiting out their back-off.
 * - {@link PodReconciler.distrust} makes the next reconcile of a pod look in Neutron despite its annotation (the
 *   verification sweep found its port gone); a missing port is created again and the annotation rewritten.
 */
export class PodReconciler {
  readonly #o: PodReconcilerOptions;
  /** Pods whose annotation the next reconcile must not trust. */
  readonly #distrusted = new Set<string>();
  /** Pods that failed on the port quota or a full subnet: worth a try once a port is freed. */
  readonly #waitingForRoom = new Set<string>();

  constructor(options: PodReconcilerOptions) {
    this.#o = options;
  }

  /** The next reconcile of `key` looks its port up in Neutron even though the pod's annotation names one. */
  distrust(key: string): void {
    this.#distrusted.add(key);
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const [namespace = '', name = ''] = key.split('/');
    const pod = this.#o.pods.get(key);
    const uid = pod?.metadata.uid ?? '';
    if (!wantsPort(pod)) {
      this.#distrusted.delete(key);
      this.#waitingForRoom.delete(key);
      return this.#deletePorts(namespace, name, signal);
    }
    const current = pod!.metadata.annotations?.[VIF_ANNOTATION];
    const vif = parseVif(current);
    if (vif?.podUid === uid && !this.#distrusted.has(key)) return;
    const subnet = this.#o.subnets.subnetFor(namespace);
    if (!subnet) return { requeueAfterMs: SUBNET_WAIT_MS };
    // One list by name finds this pod's port (by device_id) and those of earlier pods of the same name.
    const ports = await this.#ports(namespace, name, signal);
    const found = ports.find((p) => p.device_id === uid);
    // A port found untagged lost its tags to a crash between create and tag (Zed tags in a second request).
    if (found && ownerOf(found.tags)?.uid !== uid)
      await this.#o.cloud.neutron.tags.replace('ports', found.id, ownerTags(this.#o.config.clusterId, 'pod', uid), {
        signal,
      });
    if (!found && vif?.podUid === uid) {
      this.#o.logger.warn(
        { pod: key, portId: vif.portId },
        'the port named in the VIF annotation is gone from Neutron; creating another',
      );
      this.#event(
        pod!,
        'Warning',
        'PortMissing',
        `port ${vif.portId} is gone from Neutron; creating another (the pod's network changes: restart it)`,
      );
    }
    const port = found ?? (await this.#create(pod!, namespace, name, uid, subnet, signal));
    const value = formatVif(vifFor(uid, port, subnet));
    if (value !== current) {
      const written = await this.#o.client.patch(
        resources.pods,
        name,
        namespace,
        { metadata: { annotations: { [VIF_ANNOTATION]: value } } },
        'merge',
        { signal },
      );
      if (vif?.podUid !== uid) this.#o.onNetworkReady?.(written);
    }
    this.#distrusted.delete(key);
    await this.#delete(
      ports.filter((p) => p.device_id !== uid),
      namespace,
      name,
      signal,
    );
  };

  #ports(namespace: string, name: string, signal: AbortSignal): Promise<Port[]> {
    return this.#o.cloud.neutron.ports.list(
      { name: resourceName(this.#o.config.clusterId, namespace, name), device_owner: POD_DEVICE_OWNER },
      { signal },
    );
  }

  async #create(
    pod: DeepReadonly<KubeObject>,
    namespace: string,
    name: string,
    uid: string,
    subnet: SubnetInfo,
    signal: AbortSignal,
  ): Promise<Port> {
    const { config } = this.#o;
    try {
      const port = await this.#o.cloud.neutron.ports.create(
        {
          network_id: subnet.networkId,
          fixed_ips: [{ subnet_id: subnet.subnetId }],
          name: resourceName(config.clusterId, namespace, name),
          device_owner: POD_DEVICE_OWNER,
          device_id: uid,
          'binding:host_id': (pod.spec as PodSpec).nodeName!,
          ...(config.securityGroups.length > 0 ? { security_groups: [...config.securityGroups] } : {}),
          tags: ownerTags(config.clusterId, 'pod', uid),
        },
        { signal, reread: false },
      ); // the VIF needs no revision_number: spare Zed's re-read after tagging
      const ip = port.fixed_ips[0]?.ip_address;
      this.#o.logger.info({ pod: `${namespace}/${name}`, portId: port.id, ip }, 'port created');
      this.#event(
        pod,
        'Normal',
        'PortCreated',
        `Neutron port ${port.id} (${ip ?? 'no address'} on subnet ${subnet.cidr}, MAC ${port.mac_address})`,
      );
      this.#waitingForRoom.delete(`${namespace}/${name}`);
      return port;
    } catch (err) {
      if (err instanceof OpenStackError && (err.type === 'OverQuota' || err.type === 'IpAddressGenerationFailure'))
        this.#waitingForRoom.add(`${namespace}/${name}`);
      if (err instanceof OpenStackError && err.type === 'OverQuota')
        throw new RetryableError(
          'QuotaExceeded',
          `Neutron port quota exceeded creating the port of pod ${namespace}/${name}: ${err.message}`,
          { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
        );
      if (err instanceof OpenStackError && err.type === 'IpAddressGenerationFailure')
        throw new RetryableError(
          'SubnetExhausted',
          `subnet ${subnet.cidr} has no free address for pod ${namespace}/${name}`,
          { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
        );
      throw err;
    }
  }

  async #deletePorts(namespace: string, name: string, signal: AbortSignal): Promise<void> {
    await this.#delete(await this.#ports(namespace, name, signal), namespace, name, signal);
  }

  async #delete(
    ports: readonly Pick<Port, 'id'>[],
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<void> {
    let freed = false;
    for (const port of ports) {
      if (await this.#o.cloud.neutron.ports.delete(port.id, { signal })) {
        this.#o.logger.info({ pod: `${namespace}/${name}`, portId: port.id }, 'port deleted');
        freed = true;
      }
    }
    if (freed && this.#o.requeue) {
      for (const key of this.#waitingForRoom) this.#o.requeue(key);
      this.#waitingForRoom.clear();
    }
  }

  #event(pod: DeepReadonly<KubeObject>, type: EventType, reason: string, message: string): void {
    const m = pod.metadata;
    this.#o.recorder?.record(
      {
        kind: 'Pod',
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
}
