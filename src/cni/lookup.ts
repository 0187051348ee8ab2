import { errorMessage } from '../core/index.ts';
import { isStatus, parseVif, VIF_ANNOTATION, type Pod, type Vif } from '../kube/api/index.ts';
import { isNotFound as isKubeNotFound, resources, type KubeClient } from '../kube/client/index.ts';
import { isNotFound, type NeutronClient } from '../openstack/index.ts';
import { CniError, CniErrorCode } from './spec/index.ts';
import type { NeutronView, PodIdentity, TrunkView } from './verify.ts';

export interface PodRef {
  namespace: string;
  name: string;
  /** `K8S_POD_UID` when the runtime passes it: the incarnation being started. */
  uid?: string | undefined;
}

type Found = { pod: PodIdentity; vif: Vif };

/** The pod's VIF when Raven has written one for this incarnation; otherwise why not, in words. */
function vifOf(pod: Pod, ref: PodRef): Found | string {
  const { namespace = '', name = '', uid = '' } = pod.metadata;
  if (ref.uid && uid !== ref.uid) return `the API has pod uid ${uid}, the runtime starts ${ref.uid}`;
  const raw = pod.metadata.annotations?.[VIF_ANNOTATION];
  if (raw === undefined) return `Raven has not written the ${VIF_ANNOTATION} annotation yet`;
  const vif = parseVif(raw);
  if (!vif) return `the ${VIF_ANNOTATION} annotation is not a version-1 VIF`;
  if (vif.podUid !== uid) return `the ${VIF_ANNOTATION} annotation was written for pod uid ${vif.podUid}, not ${uid}`;
  return { pod: { namespace, name, uid }, vif };
}

/**
 * The pod and its VIF once Raven has written one for this incarnation: a read, then a watch of that one pod from the
 * read's resourceVersion, for at most `timeoutMs`. Past it: "try again later" (code 11) with the reason, so the
 * runtime retries the sandbox rather than failing the pod.
 */
export async function waitForVif(
  client: KubeClient,
  ref: PodRef,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Found> {
  // Held and read below: a timeout signal referenced only by AbortSignal.any can be collected before it fires on
  // Node 20 (nodejs/node#57736), and the wait would never end.
  const timeout = AbortSignal.timeout(timeoutMs);
  const deadline = AbortSignal.any([signal, timeout]);
  const label = `pod ${ref.namespace}/${ref.name}`;
  let reason = 'not read yet';
  try {
    for (;;) {
      let pod: Pod;
      try {
        pod = await client.get(resources.pods, ref.name, ref.namespace, { signal: deadline });
      } catch (err) {
        if (!isKubeNotFound(err)) throw err;
        // The runtime asks only for pods the kubelet runs: a 404 is a pod deleted meanwhile, or a cache behind.
        throw new CniError(CniErrorCode.TRY_AGAIN_LATER, `${label} does not exist in the Kubernetes API`);
      }
      let found = vifOf(pod, ref);
      if (typeof found !== 'string') return found;
      reason = found;
      for await (const event of client.watch(resources.pods, {
        namespace: ref.namespace,
        fieldSelector: `metadata.name=${ref.name}`,
        resourceVersion: pod.metadata.resourceVersion,
        timeoutSeconds: Math.ceil(timeoutMs / 1000),
        signal: deadline,
      })) {
        if (event.type === 'ERROR' || isStatus(event.object)) break; // 410 Gone: read again
        if (event.type === 'BOOKMARK') continue;
        if (event.type === 'DELETED')
          throw new CniError(CniErrorCode.TRY_AGAIN_LATER, `${label} was deleted while waiting for its VIF`);
        found = vifOf(event.object, ref);
        if (typeof found !== 'string') return found;
        reason = found;
      }
    }
  } catch (err) {
    if (err instanceof CniError) throw err;
    if (timeout.aborted && !signal.aborted)
      throw new CniError(
        CniErrorCode.TRY_AGAIN_LATER,
        `${label}: no VIF after ${Math.round(timeoutMs / 1000)} s: ${reason}`,
      );
    throw new CniError(
      CniErrorCode.UPSTREAM_UNAVAILABLE,
      `${label}: reading it from Kubernetes failed: ${errorMessage(err)}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * The port the VIF names, its network's subnets (its subnet, and on a dual-stack network the other family's) and the
 * network, read at once. A missing port is a refusal, not a retry.
 */
export function readNeutron(neutron: NeutronClient, vif: Vif, signal: AbortSignal): Promise<NeutronView> {
  return neutronRead(async () => {
    const [port, subnets, network] = await Promise.all([
      neutron.ports.get(vif.portId, { signal }),
      neutron.subnets.list({ network_id: vif.networkId }, { signal }),
      neutron.networks.get(vif.networkId, { signal }),
    ]);
    const subnet = subnets.find((s) => s.id === vif.subnetId);
    if (!subnet)
      throw new CniError(
        CniErrorCode.PORT_VERIFICATION_FAILED,
        `the VIF annotation names subnet ${vif.subnetId}, which network ${vif.networkId} does not have`,
      );
    return { port, subnet, others: subnets.filter((s) => s !== subnet), network };
  });
}

/**
 * For a nested VIF, its port's view and the trunk it names with the trunk's parent port (read after the trunk, whose
 * record names it), both at once.
 */
export async function readNested(
  neutron: NeutronClient,
  vif: Vif & { nested: { trunkId: string } },
  signal: AbortSignal,
): Promise<NeutronView & TrunkView> {
  const [view, trunkView] = await Promise.all([
    readNeutron(neutron, vif, signal),
    neutronRead(async () => {
      const trunk = await neutron.trunks.get(vif.nested.trunkId, { signal });
      return { trunk, parent: await neutron.ports.get(trunk.port_id, { signal }) };
    }),
  ]);
  return { ...view, ...trunkView };
}

/** Neutron's reads with their errors as CNI errors: a missing object refuses the VIF, anything else is a retry. */
async function neutronRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof CniError) throw err;
    if (isNotFound(err))
      throw new CniError(
        CniErrorCode.PORT_VERIFICATION_FAILED,
        `the VIF annotation names a port, subnet, network or trunk Neutron does not have: ${errorMessage(err)}`,
        { cause: err },
      );
    throw new CniError(CniErrorCode.UPSTREAM_UNAVAILABLE, `reading Neutron failed: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}
