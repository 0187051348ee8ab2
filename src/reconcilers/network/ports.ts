import type { NeutronClient, Port, RequestPriority } from '../../openstack/index.ts';
import { POD_DEVICE_OWNER, podPortTags } from './identity.ts';

/**
 * This cluster's pod ports: `device_owner` `compute:raven` with the cluster's and the pod kind's tags, every page.
 * The one list the pod port record, the port verification and the garbage collector read.
 */
export function listPodPorts(
  neutron: NeutronClient,
  clusterId: string,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<Port[]> {
  return neutron.ports.list({ device_owner: POD_DEVICE_OWNER, tags: podPortTags(clusterId) }, { signal, priority });
}
