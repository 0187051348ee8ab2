/**
 * The pod annotation `raven.openstack.org/vif`: what a CNI plugin needs to plug the pod into its Neutron port. It is
 * a projection of the port (Neutron is the record); docs/vif-cni.md documents it as the contract between Raven and
 * `raven-cni`, which is why it lives here, below both. Versioned: a consumer must check `version` and ignore fields
 * it does not know.
 */
export const VIF_ANNOTATION = 'raven.openstack.org/vif';

/** `device_owner` of pod ports: a plugin refuses a port with another owner. */
export const POD_DEVICE_OWNER = 'compute:raven';

/**
 * `device_owner` the trunk driver gives a port it makes a subport (ML2/OVN and the OVS agent's driver alike): a nested
 * pod's port has it instead (docs/nested.md).
 */
export const SUBPORT_DEVICE_OWNER = 'trunk:subport';

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
   * Present when the pod's node is a VM and the port is a subport of the node's trunk (docs/vif-cni.md, "Nested
   * pods"): the plugin reaches it through a VLAN sub-interface of the VM's NIC whose MAC is `parentMac`.
   */
  nested?: VifNested;
  /**
   * Raven's signature (docs/pools.md, "Signed VIFs"), present when Raven holds a VIF key and the port is bound: the
   * port's host, how it is plugged, the leader epoch that signed it, and the HMAC over all of that and the fields
   * above (`active` aside: it is not rewritten when the port binds later).
   */
  signed?: VifSignature;
}

/** Where a subport is reached from inside its VM. */
export interface VifNested {
  /** The trunk the subport is on. */
  trunkId: string;
  /** The subport's VLAN id on that trunk (1–4094). */
  vlan: number;
  /** The MAC of the trunk's parent port: the VM's NIC the VLAN sub-interface is made on. */
  parentMac: string;
}

export interface VifSignature {
  /**
   * The only node that may plug the port on this signature alone: `binding:host_id` for a bound port, the pod's
   * Kubernetes node (the VM) for a subport.
   */
  node: string;
  /** How it is plugged: `binding:vif_type` for a bound port (a Linux bridge, or Open vSwitch); `vlan` for a subport. */
  plug: 'bridge' | 'ovs' | 'vlan';
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
  const { version, podUid, portId, networkId, subnetId, mac, ips, mtu, active, nested, signed } = vif;
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
    ...(nested ? { nested: { trunkId: nested.trunkId, vlan: nested.vlan, parentMac: nested.parentMac } } : {}),
    ...(signed ? { signed: { node: signed.node, plug: signed.plug, epoch: signed.epoch, hmac: signed.hmac } } : {}),
  });
}
