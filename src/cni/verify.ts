import { parseCidr, type DeepReadonly } from '../core/index.ts';
import { POD_DEVICE_OWNER, SUBPORT_DEVICE_OWNER, type Vif } from '../kube/api/index.ts';
import type { Network, Port, Subnet, Trunk } from '../openstack/index.ts';
import { CniError, CniErrorCode } from './spec/index.ts';

/** The pod being started, as the runtime and the API name it. */
export interface PodIdentity {
  namespace: string;
  name: string;
  uid: string;
}

/** What Neutron says about the port the VIF annotation names. */
export interface NeutronView {
  port: Pick<
    Port,
    | 'id'
    | 'network_id'
    | 'mac_address'
    | 'fixed_ips'
    | 'device_id'
    | 'device_owner'
    | 'binding:host_id'
    | 'binding:vif_type'
    | 'binding:vif_details'
  >;
  subnet: Pick<Subnet, 'id' | 'network_id' | 'cidr' | 'gateway_ip'>;
  /** The network's other subnets (dual-stack: the other family's), where the port's other addresses are. */
  others?: Pick<Subnet, 'id' | 'network_id' | 'cidr' | 'gateway_ip'>[];
  network: Pick<Network, 'id' | 'mtu'>;
}

export interface PlugIp {
  address: string;
  prefixLength: number;
  gateway: string | null;
}

/**
 * How the pod is plugged: its host end into a Linux bridge or an Open vSwitch bridge (by the port's
 * `binding:vif_type`), or, in a VM, a VLAN sub-interface of the VM's NIC (a trunk subport).
 */
export type PlugKind = 'bridge' | 'ovs' | 'vlan';

/** What Neutron says about the trunk a nested VIF names, and the trunk's parent port (the VM's own). */
export interface TrunkView {
  trunk: Pick<Trunk, 'id' | 'port_id' | 'sub_ports'>;
  parent: Pick<Port, 'id' | 'mac_address' | 'device_id'>;
}

/** How this node plugs OVS ports when Neutron's `vif_details` do not say (docs/cni.md, "Open vSwitch ports"). */
export interface OvsDefaults {
  /** The integration bridge, when `vif_details` names none. */
  bridge: string;
  /** The host end's name: this prefix + the start of the port id (15 characters at most). */
  interfacePrefix: string;
}

/** How to plug the pod: every value from Neutron (or this node's configuration), none from the annotation. */
export interface PlugPlan {
  kind: PlugKind;
  portId: string;
  /** The port's `device_id`: the pod's uid, checked. */
  deviceId: string;
  networkId: string;
  /**
   * The host end: `tap` + the port id's first 11 characters, the name the linuxbridge agent looks for; on OVS the
   * node's interface prefix + the same (OVS finds the port by its `iface-id`, not by name).
   */
  tap: string;
  /**
   * linuxbridge: the network's bridge, made by the agent: `brq` + the network id's first 11 characters. OVS: the
   * integration bridge (`vif_details.bridge_name`, else the node's configured one).
   */
  bridge: string;
  mac: string;
  mtu: number;
  ips: PlugIp[];
  /** A `vlan` plan's: the VLAN id, and the MAC of the VM's NIC (the trunk's parent port) the sub-interface goes on. */
  nested?: { vlan: number; parentMac: string };
}

export const tapName = (portId: string, prefix = 'tap'): string => `${prefix}${portId.slice(0, 11)}`.slice(0, 15);
export const bridgeName = (networkId: string): string => `brq${networkId.slice(0, 11)}`;
/** A VLAN sub-interface's name in the VM until it moves into the pod: one per VLAN id, at most 9 characters. */
export const vlanName = (vlan: number): string => `rvlan${vlan}`;

function refuse(pod: PodIdentity, message: string): never {
  throw new CniError(CniErrorCode.PORT_VERIFICATION_FAILED, `pod ${pod.namespace}/${pod.name}: ${message}`);
}

/**
 * What a bound port and a subport share in their checks (docs/vif-cni.md, "What a plugin must verify"): the VIF is this
 * pod's, the port's `device_id` is the pod's uid, and network, MAC, subnet, addresses, prefixes and gateways are the
 * port's. Returns the port's addresses on the network's subnets (dual-stack: both families), the annotation's subnet
 * first, each with its subnet's prefix and gateway: every one of them goes on the pod.
 */
function verifyAddressing(vif: DeepReadonly<Vif>, pod: PodIdentity, view: DeepReadonly<NeutronView>): PlugIp[] {
  const { port, subnet } = view;
  if (vif.podUid !== pod.uid)
    throw new CniError(
      CniErrorCode.TRY_AGAIN_LATER,
      `pod ${pod.namespace}/${pod.name}: the VIF annotation was written for pod uid ${vif.podUid}, this pod is ${pod.uid}`,
    );
  if (port.device_id !== pod.uid)
    refuse(pod, `port ${port.id} belongs to device "${port.device_id}", not to this pod (uid ${pod.uid})`);
  if (port.network_id !== vif.networkId)
    refuse(pod, `port ${port.id} is on network ${port.network_id}, the annotation says ${vif.networkId}`);
  if (port.mac_address.toLowerCase() !== vif.mac.toLowerCase())
    refuse(pod, `port ${port.id} has MAC ${port.mac_address}, the annotation says ${vif.mac}`);
  if (subnet.id !== vif.subnetId || subnet.network_id !== port.network_id)
    refuse(pod, `subnet ${subnet.id} is not the annotation's subnet ${vif.subnetId} on the port's network`);
  if (parseCidr(subnet.cidr) === undefined) refuse(pod, `subnet ${subnet.id} has no valid CIDR ("${subnet.cidr}")`);
  if (!port.fixed_ips.some((ip) => ip.subnet_id === subnet.id))
    refuse(pod, `port ${port.id} has no address on subnet ${subnet.id}`);
  const subnets = [
    subnet,
    ...(view.others ?? []).filter((s) => s.network_id === port.network_id && s.id !== subnet.id),
  ];
  const ips = subnets.flatMap((s) => {
    const prefixLength = parseCidr(s.cidr)?.cidr.prefixLength;
    if (prefixLength === undefined) return [];
    return port.fixed_ips
      .filter((ip) => ip.subnet_id === s.id)
      .map((ip) => ({ address: ip.ip_address, prefixLength, gateway: s.gateway_ip, subnet: s }));
  });
  for (const ip of vif.ips) {
    const mine = ips.find((p) => p.address === ip.address);
    if (!mine)
      refuse(
        pod,
        `the annotation's address ${ip.address} is not one of port ${port.id}'s (${ips.map((p) => p.address).join(', ')})`,
      );
    if (ip.prefixLength !== mine.prefixLength)
      refuse(pod, `the annotation's prefix /${ip.prefixLength} is not subnet ${mine.subnet.cidr}'s`);
    if ((ip.gateway ?? null) !== (mine.gateway ?? null))
      refuse(pod, `the annotation's gateway ${ip.gateway} is not subnet ${mine.subnet.id}'s (${mine.gateway})`);
  }
  return ips.map(({ address, prefixLength, gateway }) => ({ address, prefixLength, gateway }));
}

/**
 * Checks the VIF annotation against Neutron (docs/vif-cni.md, "What a plugin must verify") and returns the plug plan,
 * or throws a CniError naming the check that failed. The annotation is never trusted alone: a namespace user can
 * write any annotation, and only the port's `device_id` ties it to this pod.
 */
export function verifyPort(
  vif: DeepReadonly<Vif>,
  pod: PodIdentity,
  nodeName: string,
  view: DeepReadonly<NeutronView>,
  ovs: OvsDefaults = { bridge: 'br-int', interfacePrefix: 'tap' },
): PlugPlan {
  const { port, network } = view;
  if (vif.nested)
    throw new CniError(
      CniErrorCode.UNSUPPORTED_VIF_TYPE,
      `pod ${pod.namespace}/${pod.name}: port ${port.id} is a trunk subport (a nested VIF): this node plugs bound ` +
        `ports; a Nova VM's raven-cni runs with "mode": "nested"`,
    );
  const ips = verifyAddressing(vif, pod, view);
  if (port.device_owner !== POD_DEVICE_OWNER)
    refuse(pod, `port ${port.id} has device_owner "${port.device_owner}", not "${POD_DEVICE_OWNER}"`);
  if (port['binding:host_id'] !== nodeName)
    refuse(pod, `port ${port.id} is bound to host "${port['binding:host_id']}", this node is "${nodeName}"`);
  const vifType = port['binding:vif_type'];
  if (vifType === 'unbound' || vifType === 'binding_failed')
    throw new CniError(
      CniErrorCode.TRY_AGAIN_LATER,
      `pod ${pod.namespace}/${pod.name}: port ${port.id} is ${vifType} on host "${nodeName}": ` +
        `is this node's Neutron agent (the linuxbridge agent, or ovn-controller) alive, with host = "${nodeName}"?`,
    );
  const details = port['binding:vif_details'] ?? {};
  if (vifType === 'ovs' && details.ovs_hybrid_plug === true)
    throw new CniError(
      CniErrorCode.UNSUPPORTED_VIF_TYPE,
      `pod ${pod.namespace}/${pod.name}: port ${port.id} wants an OVS hybrid plug (iptables on a Linux bridge between ` +
        `the pod and OVS); raven-cni plugs OVS ports directly: use ML2/OVN or the openvswitch firewall driver`,
    );
  if (vifType !== 'bridge' && vifType !== 'ovs')
    throw new CniError(
      CniErrorCode.UNSUPPORTED_VIF_TYPE,
      `pod ${pod.namespace}/${pod.name}: port ${port.id} has binding:vif_type "${vifType}"; ` +
        `raven-cni plugs "bridge" (linuxbridge) and "ovs" (ML2/OVN, ML2/OVS) ports`,
    );
  const bridgeFromNeutron = typeof details.bridge_name === 'string' && details.bridge_name ? details.bridge_name : '';
  return {
    kind: vifType,
    portId: port.id,
    deviceId: port.device_id,
    networkId: port.network_id,
    tap: vifType === 'ovs' ? tapName(port.id, ovs.interfacePrefix) : tapName(port.id),
    bridge: vifType === 'ovs' ? bridgeFromNeutron || ovs.bridge : bridgeName(port.network_id),
    mac: port.mac_address.toLowerCase(),
    mtu: network.mtu,
    ips,
  };
}

/**
 * A nested VIF checked against Neutron: the checks every port gets (the VIF is this pod's, `device_id` is its uid,
 * addressing), then that the port is on trunk `nested.trunkId` at VLAN `nested.vlan`, and that the trunk's parent has
 * MAC `nested.parentMac` and is this VM's own port (`device_id` = `serverId`). So a forged annotation can name neither
 * another pod's subport (its `device_id`), nor another VLAN or trunk (the trunk's record), nor another VM's NIC.
 */
export function verifyNested(
  vif: DeepReadonly<Vif>,
  pod: PodIdentity,
  serverId: string,
  view: DeepReadonly<NeutronView & TrunkView>,
): PlugPlan {
  const { port, network, trunk, parent } = view;
  const nested = vif.nested;
  if (!nested)
    throw new CniError(
      CniErrorCode.UNSUPPORTED_VIF_TYPE,
      `pod ${pod.namespace}/${pod.name}: port ${port.id} is not a trunk subport, and this node plugs only subports ` +
        `("mode": "nested")`,
    );
  const ips = verifyAddressing(vif, pod, view);
  // The trunk driver sets trunk:subport; a controller that claims the port may write Raven's own owner after it.
  if (port.device_owner !== SUBPORT_DEVICE_OWNER && port.device_owner !== POD_DEVICE_OWNER)
    refuse(pod, `port ${port.id} has device_owner "${port.device_owner}", not "${SUBPORT_DEVICE_OWNER}"`);
  const sub = trunk.sub_ports.find((s) => s.port_id === port.id);
  if (!sub) refuse(pod, `port ${port.id} is not a subport of trunk ${trunk.id}`);
  if (sub.segmentation_type !== 'vlan' || sub.segmentation_id !== nested.vlan)
    refuse(
      pod,
      `port ${port.id} is on trunk ${trunk.id} at ${sub.segmentation_type} ${sub.segmentation_id}, ` +
        `the annotation says VLAN ${nested.vlan}`,
    );
  if (parent.mac_address.toLowerCase() !== nested.parentMac.toLowerCase())
    refuse(
      pod,
      `trunk ${trunk.id}'s parent port has MAC ${parent.mac_address}, the annotation says ${nested.parentMac}`,
    );
  if (parent.device_id !== serverId)
    refuse(
      pod,
      `trunk ${trunk.id}'s parent port ${parent.id} belongs to device "${parent.device_id}", not to this VM ` +
        `(server ${serverId})`,
    );
  return nestedPlan(port.id, pod.uid, port.network_id, port.mac_address, network.mtu, ips, nested);
}

/** The plan for a subport: the sub-interface's name in the VM by its VLAN, no bridge. */
export function nestedPlan(
  portId: string,
  podUid: string,
  networkId: string,
  mac: string,
  mtu: number,
  ips: PlugIp[],
  nested: DeepReadonly<NonNullable<Vif['nested']>>,
): PlugPlan {
  return {
    kind: 'vlan',
    portId,
    deviceId: podUid,
    networkId,
    tap: vlanName(nested.vlan),
    bridge: '',
    mac: mac.toLowerCase(),
    mtu,
    ips,
    nested: { vlan: nested.vlan, parentMac: nested.parentMac.toLowerCase() },
  };
}
