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
import { isConflict, resources, type KubeClient } from '../../kube/client/index.ts';
import { OpenStackError, type Port } from '../../openstack/index.ts';
import {
  ownerOf,
  ownerTags,
  POD_DEVICE_OWNER,
  resourceName,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
  type ReconcilerConfig,
  type SubnetInfo,
  type SubnetStrategy,
} from '../network/index.ts';
import type { CachedPod } from './trim.ts';
import { wantsPort, type WiredPod } from './wiring.ts';

/** "A pod port was deleted": pods waiting on the port quota or a full subnet may get one now. */
export interface PortFreed {
  portId: string;
}

export interface PodReconcilerOptions {
  cloud: Cloud;
  config: Pick<ReconcilerConfig, 'clusterId' | 'securityGroups'>;
  client: KubeClient;
  pods: Lister<CachedPod>;
  subnets: SubnetStrategy;
  /** Ports the last verification proved gone: an annotation naming one is not trusted. */
  gonePorts: { has(portId: string): boolean };
  /** Where the reconciler says that it deleted a pod port. */
  portsFreed: EventChannel<PortFreed>;
  logger: Logger;
  /** Normal `PortCreated` and Warning `PortMissing` Events on the pod. */
  recorder?: EventRecorder | undefined;
  /**
   * Called right after a pod's first VIF annotation (for its uid) is written, with the pod the API server returned
   * (metrics).
   */
  onNetworkReady?: ((pod: Pod) => void) | undefined;
}

/** How long a pod whose namespace has no subnet yet waits before looking again. */
const SUBNET_WAIT_MS = 1_000;

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
 * Pod → Neutron port, published on the pod as `raven.openstack.org/vif` (one Kubernetes write per pod). Its outcome
 * depends on the pod cache, Neutron (and Raven's view of it: {@link PodReconcilerOptions.gonePorts}) and the key.
 *
 * - A pod whose annotation names a port for its uid is done without any OpenStack call, unless the port verification
 *   proved that port gone: a restart over thousands of wired pods costs only the informers' paginated lists.
 * - Otherwise its port is found by `device_id` = pod uid (so a crash after the create, or after a lost answer, never
 *   makes a second port), created when missing — `device_owner` `compute:raven`, `binding:host_id` = node, the
 *   configured security groups, owner tags — and the annotation is written.
 * - A pod that is gone, finished, or hostNetwork has its ports (found by name, as a deleted pod's uid is no longer
 *   known) deleted; so are ports of an earlier pod of the same name. Each deletion is sent on `portsFreed`, which
 *   wakes the pods waiting on the quota or a full subnet rather than leaving them to their back-off.
 */
export class PodReconciler {
  readonly #o: PodReconcilerOptions;

  constructor(options: PodReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const { namespace = '', name } = splitKey(key);
    const pod = this.#o.pods.get(key);
    if (!wantsPort(pod)) return this.#deletePorts(await this.#ports(namespace, name, signal), signal);
    const uid = pod.metadata.uid;
    const current = pod.metadata.annotations?.[VIF_ANNOTATION];
    const vif = parseVif(current);
    if (vif?.podUid === uid && !this.#o.gonePorts.has(vif.portId)) return;
    const subnet = this.#o.subnets.subnetFor(namespace);
    if (!subnet) return { requeueAfterMs: SUBNET_WAIT_MS };
    // One list by name finds this pod's port (by device_id) and those of earlier pods of the same name.
    const ports = await this.#ports(namespace, name, signal);
    const found = ports.find((p) => p.device_id === uid);
    // A port found untagged lost its tags to a crash between create and tag (Zed tags in a second request).
    if (found && ownerOf(found.tags)?.uid !== uid) {
      await this.#o.cloud.neutron.tags.replace('ports', found.id, ownerTags(this.#o.config.clusterId, 'pod', uid), {
        signal,
      });
    }
    if (!found && vif?.podUid === uid) {
      this.#o.logger.warn(
        { pod: key, portId: vif.portId },
        'the port named in the VIF annotation is gone from Neutron',
      );
      this.#event(
        pod,
        'Warning',
        'PortMissing',
        `port ${vif.portId} is gone from Neutron; creating another (the pod's network changes: restart it)`,
      );
    }
    const port = found ?? (await this.#create(pod, subnet, signal));
    const value = formatVif(vifFor(uid, port, subnet));
    if (value !== current) {
      // The first VIF of a pod is written only onto the pod as cached: a cache that has not yet seen an earlier
      // reconcile's write gets 409 and the key comes back once it has, instead of writing (and counting) it twice.
      const first = vif?.podUid !== uid;
      const patch = {
        metadata: {
          annotations: { [VIF_ANNOTATION]: value },
          ...(first ? { resourceVersion: pod.metadata.resourceVersion } : {}),
        },
      };
      let written: Pod;
      try {
        written = await this.#o.client.patch(resources.pods, name, namespace, patch, 'merge', { signal });
      } catch (err) {
        if (first && isConflict(err)) return { requeue: true };
        throw err;
      }
      if (first) this.#o.onNetworkReady?.(written);
    }
    await this.#deletePorts(
      ports.filter((p) => p.device_id !== uid),
      signal,
    );
  };

  #ports(namespace: string, name: string, signal: AbortSignal): Promise<Port[]> {
    const portName = resourceName(this.#o.config.clusterId, namespace, name);
    return this.#o.cloud.neutron.ports.list({ name: portName, device_owner: POD_DEVICE_OWNER }, { signal });
  }

  async #create(pod: DeepReadonly<WiredPod>, subnet: SubnetInfo, signal: AbortSignal): Promise<Port> {
    const { config } = this.#o;
    const { namespace, name, uid } = pod.metadata;
    try {
      const port = await this.#o.cloud.neutron.ports.create(
        {
          network_id: subnet.networkId,
          fixed_ips: [{ subnet_id: subnet.subnetId }],
          name: resourceName(config.clusterId, namespace, name),
          device_owner: POD_DEVICE_OWNER,
          device_id: uid,
          'binding:host_id': pod.spec.nodeName,
          ...(config.securityGroups.length > 0 ? { security_groups: [...config.securityGroups] } : {}),
          tags: ownerTags(config.clusterId, 'pod', uid),
        },
        // The VIF needs no revision_number: spare Zed's re-read after tagging.
        { signal, reread: false },
      );
      const ip = port.fixed_ips[0]?.ip_address;
      this.#o.logger.info({ pod: `${namespace}/${name}`, portId: port.id, ip }, 'port created');
      const detail = `${ip ?? 'no address'} on subnet ${subnet.cidr}, MAC ${port.mac_address}`;
      this.#event(pod, 'Normal', 'PortCreated', `Neutron port ${port.id} (${detail})`);
      return port;
    } catch (err) {
      if (err instanceof OpenStackError && err.type === 'OverQuota') {
        const message = `Neutron port quota exceeded creating the port of pod ${namespace}/${name}: ${err.message}`;
        throw new RetryableError('QuotaExceeded', message, { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS });
      }
      if (err instanceof OpenStackError && err.type === 'IpAddressGenerationFailure') {
        const message = `subnet ${subnet.cidr} has no free address for pod ${namespace}/${name}`;
        throw new RetryableError('SubnetExhausted', message, { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS });
      }
      throw err;
    }
  }

  async #deletePorts(ports: readonly Pick<Port, 'id' | 'name'>[], signal: AbortSignal): Promise<void> {
    for (const port of ports) {
      if (await this.#o.cloud.neutron.ports.delete(port.id, { signal })) {
        this.#o.logger.info({ port: port.name, portId: port.id }, 'port deleted');
        this.#o.portsFreed.send({ portId: port.id });
      }
    }
  }

  #event(pod: DeepReadonly<CachedPod>, type: EventType, reason: string, message: string): void {
    this.#o.recorder?.record(objectReference(pod, { kind: 'Pod', apiVersion: 'v1' }), type, reason, message);
  }
}
