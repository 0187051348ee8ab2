import { readFile } from 'node:fs/promises';
import { errorMessage } from '../core/index.ts';
import { VIF_KEY_MIN_BYTES, vifSignatureValid, type Vif } from '../kube/api/index.ts';
import { resources, type KubeClient } from '../kube/client/index.ts';
import { CniError, CniErrorCode } from './spec/index.ts';
import {
  bridgeName,
  nestedPlan,
  tapName,
  type OvsDefaults,
  type PlugKind,
  type PlugPlan,
  type PodIdentity,
} from './verify.ts';

/** The Lease Raven's replicas elect their leader on: its `leaseTransitions` is the current term. */
export interface LeaderLease {
  namespace: string;
  name: string;
}

/** Reads the VIF key a node shares with Raven; a key too short or unreadable is a configuration error, never logged. */
export async function readVifKey(file: string): Promise<Buffer> {
  let key: Buffer;
  try {
    key = await readFile(file);
  } catch (err) {
    throw new CniError(CniErrorCode.INVALID_CONFIG, `vifKeyFile ${file}: ${errorMessage(err)}`, { cause: err });
  }
  if (key.length < VIF_KEY_MIN_BYTES)
    throw new CniError(
      CniErrorCode.INVALID_CONFIG,
      `vifKeyFile ${file} holds ${key.length} bytes; a VIF key has at least ${VIF_KEY_MIN_BYTES}`,
    );
  return key;
}

/**
 * The current leader's term, read from its Lease and kept for `ttlMs` (the leader renews every few seconds; a term
 * changes only on failover). A node daemon keeps one of these for all its calls.
 */
export class LeaderTerm {
  #cached: { key: string; epoch: number; at: number } | undefined;

  constructor(private readonly ttlMs = 2_000) {}

  async current(kube: KubeClient, lease: LeaderLease, signal: AbortSignal): Promise<number> {
    const key = `${lease.namespace}/${lease.name}`;
    const now = performance.now();
    if (this.#cached?.key === key && now - this.#cached.at < this.ttlMs) return this.#cached.epoch;
    const read = await kube.get(resources.leases, lease.name, lease.namespace, { signal });
    const epoch = read.spec?.leaseTransitions ?? 0;
    this.#cached = { key, epoch, at: now };
    return epoch;
  }
}

/** Why a VIF is not trusted on its signature alone (the plugin then verifies it against Neutron), or undefined. */
export async function distrust(
  vif: Vif,
  o: { key: Uint8Array; nodeName: string; nested: boolean; term: (() => Promise<number>) | undefined },
): Promise<string | undefined> {
  if (!vifSignatureValid(vif, o.key)) return vif.signed ? 'its signature does not verify' : 'it is not signed';
  if (vif.signed.node !== o.nodeName) return `it is signed for node ${vif.signed.node}`;
  // A signed plug kind must be this node's: a VM plugs subports only, a host bound ports only.
  if ((vif.signed.plug === 'vlan') !== o.nested || (vif.nested !== undefined) !== o.nested)
    return o.nested ? 'it is not a subport VIF, and this node is a VM' : 'it is a subport VIF, and this node is no VM';
  if (!o.term) return undefined;
  let term: number;
  try {
    term = await o.term();
  } catch (err) {
    return `the leader's Lease could not be read: ${errorMessage(err)}`;
  }
  // An earlier term's leader may have lost its Lease without knowing; a later one than the Lease's cannot be Raven's.
  return vif.signed.epoch === term
    ? undefined
    : `it was signed in leader term ${vif.signed.epoch}, the Lease's is ${term}`;
}

/**
 * The plug plan from a VIF whose signature verified for this node: every value is Raven's, as Neutron had it when
 * Raven signed; only the integration bridge is the node's own (`ovs.bridge`). A subport's plan is its VLAN
 * sub-interface (`distrust` has checked that a `vlan` signature comes with the VIF's `nested`).
 */
export function planFromSignedVif(vif: Vif, kind: PlugKind, pod: PodIdentity, ovs: OvsDefaults): PlugPlan {
  const ips = vif.ips.map(({ address, prefixLength, gateway }) => ({ address, prefixLength, gateway }));
  if (kind === 'vlan' && vif.nested)
    return nestedPlan(vif.portId, pod.uid, vif.networkId, vif.mac, vif.mtu, ips, vif.nested);
  return {
    kind,
    portId: vif.portId,
    deviceId: pod.uid,
    networkId: vif.networkId,
    tap: kind === 'ovs' ? tapName(vif.portId, ovs.interfacePrefix) : tapName(vif.portId),
    bridge: kind === 'ovs' ? ovs.bridge : bridgeName(vif.networkId),
    mac: vif.mac.toLowerCase(),
    mtu: vif.mtu,
    ips,
  };
}
