/**
 * The pod annotation `raven.openstack.org/vif`: what a CNI plugin needs to plug the pod into its Neutron port. It is
 * a projection of the port (Neutron is the record); docs/vif-cni.md documents it as the contract between Raven and
 * `raven-cni`, which is why it lives here, below both. Versioned: a consumer must check `version` and ignore fields
 * it does not know.
 */
export const VIF_ANNOTATION = 'raven.openstack.org/vif';

/** `device_owner` of pod ports: a plugin refuses a port with another owner. */
export const POD_DEVICE_OWNER = 'compute:raven';

export interface VifIp {
  address: string;
  prefixLength: number;
  gateway: string | null;
}

export interface Vif {
  version: 1;
  /** The pod's uid: a stale annotation (a pod re-created with the same name) is recognisable. */
  podUid: string;
  portId: string;
  networkId: string;
  subnetId: string;
  mac: string;
  ips: VifIp[];
  mtu: number;
  /** True once Neutron reports the port ACTIVE (bound); a CNI plugin may wait for it. */
  active: boolean;
  /**
   * Raven's signature (docs/pools.md, "Signed VIFs"), present when Raven holds a VIF key and the port is bound: the
   * port's host, how it is plugged, the leader epoch that signed it, and the HMAC over all of that and the fields
   * above (`active` aside: it is not rewritten when the port binds later).
   */
  signed?: VifSignature;
}

export interface VifSignature {
  /** `binding:host_id`: the only node that may plug the port on this signature alone. */
  node: string;
  /** `binding:vif_type` as the plug it asks for: a Linux bridge, or Open vSwitch. */
  plug: 'bridge' | 'ovs';
  /** The leader's Lease `leaseTransitions` when it signed (0 without leader election). */
  epoch: number;
  /** HMAC-SHA256, base64url. */
  hmac: string;
}

/** The annotation parsed, or undefined when absent, malformed or of another version. */
export function parseVif(value: string | undefined): Vif | undefined {
  if (!value) return undefined;
  try {
    const vif = JSON.parse(value) as Partial<Vif>;
    return vif.version === 1 &&
      typeof vif.portId === 'string' &&
      typeof vif.podUid === 'string' &&
      Array.isArray(vif.ips)
      ? (vif as Vif)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Serialised with a fixed key order, so equal VIFs are equal strings (no write when nothing changed). */
export function formatVif(vif: Vif): string {
  const { version, podUid, portId, networkId, subnetId, mac, ips, mtu, active, signed } = vif;
  return JSON.stringify({
    version,
    podUid,
    portId,
    networkId,
    subnetId,
    mac,
    ips: ips.map(({ address, prefixLength, gateway }) => ({ address, prefixLength, gateway })),
    mtu,
    active,
    ...(signed ? { signed: { node: signed.node, plug: signed.plug, epoch: signed.epoch, hmac: signed.hmac } } : {}),
  });
}
