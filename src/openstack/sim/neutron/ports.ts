import { neutronError } from '../http.ts';
import { createOnly, parseResourceBody, readOnly, rw, stdSpecs, type AttrSpecs } from './body.ts';
import { checkQuota, checkRevision, findOwned, findVisible, ordered, targetProject, type Kind, type NeutronCall, type Op } from './common.ts';
import { nerr } from './errors.ts';
import { allocatePortIps, releaseIp } from './ipam.ts';
import { networkKind } from './networks.ts';
import type { Item } from './query.ts';
import { ensureDefaultSecurityGroup, securityGroupKind } from './security-groups.ts';
import type { FixedIp, NetworkRecord, NeutronStore, PortRecord } from './store.ts';

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string'),
  network_id: createOnly('string', { required: true }),
  admin_state_up: rw('boolean'),
  mac_address: rw('string'),
  fixed_ips: rw('list'),
  device_id: rw('string'),
  device_owner: rw('string'),
  status: readOnly('string'),
  security_groups: rw('list'),
  port_security_enabled: rw('boolean'),
  allowed_address_pairs: rw('list'),
  extra_dhcp_opts: rw('list'),
  'binding:host_id': rw('string'),
  'binding:vnic_type': rw('string'),
  'binding:profile': rw('dict'),
  'binding:vif_type': readOnly('string'),
  'binding:vif_details': readOnly('dict'),
};

const createOrder = ['id', 'name', 'network_id', 'tenant_id', 'mac_address', 'admin_state_up', 'status', 'device_id', 'device_owner', 'fixed_ips', 'project_id', 'port_security_enabled', 'security_groups', 'binding:vnic_type', 'binding:profile', 'binding:host_id', 'binding:vif_type', 'binding:vif_details', 'allowed_address_pairs', 'extra_dhcp_opts', 'description', 'tags', 'created_at', 'updated_at', 'revision_number'];
const showOrder = ['id', 'name', 'network_id', 'tenant_id', 'mac_address', 'admin_state_up', 'status', 'device_id', 'device_owner', 'fixed_ips', 'allowed_address_pairs', 'extra_dhcp_opts', 'security_groups', 'description', 'binding:vnic_type', 'binding:profile', 'binding:host_id', 'binding:vif_type', 'binding:vif_details', 'port_security_enabled', 'tags', 'created_at', 'updated_at', 'revision_number', 'project_id'];

function serialize(p: PortRecord, call: NeutronCall, op: Op): Item {
  const item: Item = {
    id: p.id, name: p.name, network_id: p.network_id, tenant_id: p.project_id, project_id: p.project_id, mac_address: p.mac_address,
    admin_state_up: p.admin_state_up, status: p.status, device_id: p.device_id, device_owner: p.device_owner,
    fixed_ips: p.fixed_ips.map((f) => ({ ...f })), port_security_enabled: p.port_security_enabled, security_groups: [...p.security_groups],
    'binding:vnic_type': p.vnic_type, allowed_address_pairs: p.allowed_address_pairs, extra_dhcp_opts: p.extra_dhcp_opts,
    description: p.description, tags: [...p.tags].sort(), created_at: p.created_at, updated_at: p.updated_at, revision_number: p.revision_number,
  };
  // The binding details are admin-only (policy get_port:binding:*), except the vnic type.
  if (call.ctx.isAdmin) {
    Object.assign(item, { 'binding:profile': p.profile, 'binding:host_id': p.host_id, 'binding:vif_type': p.vif_type, 'binding:vif_details': p.vif_details });
  }
  return ordered(item, op === 'create' ? createOrder : showOrder);
}

/** `?fixed_ips=ip_address=X&fixed_ips=subnet_id=S`: some address of the port matches every kind given (any value of each). */
function fixedIpsFilter(item: Item, values: string[]): boolean {
  const wanted = new Map<string, string[]>();
  for (const v of values) {
    const eq = v.indexOf('=');
    const key = eq < 0 ? v : v.slice(0, eq);
    wanted.set(key, [...(wanted.get(key) ?? []), eq < 0 ? '' : v.slice(eq + 1)]);
  }
  return (item.fixed_ips as FixedIp[]).some((f) =>
    [...wanted].every(([key, vals]) =>
      key === 'ip_address_substr' ? vals.some((v) => f.ip_address.includes(v)) : vals.includes(String((f as unknown as Record<string, string>)[key])),
    ),
  );
}

export const portKind: Kind<PortRecord> = {
  singular: 'port', plural: 'ports', path: 'ports', quota: 'port',
  map: (store) => store.ports,
  notFound: (id) => nerr.portNotFound(id),
  serialize,
  attributes: createOrder.filter((k) => k !== 'fixed_ips'),
  special: { fixed_ips: fixedIpsFilter },
};

const macPattern = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

function newMac(store: NeutronStore, networkId: string): string {
  for (;;) {
    const mac = `fa:16:3e:${store.random.hex(6).replace(/(..)(?!$)/g, '$1:')}`;
    if (!store.macs.has(`${networkId}|${mac}`)) return mac;
  }
}

function takeMac(store: NeutronStore, networkId: string, requested: string | undefined): string {
  if (requested === undefined) return newMac(store, networkId);
  const mac = requested.toLowerCase();
  if (!macPattern.test(mac)) throw nerr.invalidAttr('mac_address', `'${requested}' is not a valid MAC address`);
  if (store.macs.has(`${networkId}|${mac}`)) {
    throw neutronError(409, 'MacAddressInUse', `Unable to complete operation for network ${networkId}. The mac address ${mac} is in use.`);
  }
  return mac;
}

/** Emulates binding: no host → unbound; a host the driver knows binds; any other host fails to bind. */
function bind(call: NeutronCall, p: PortRecord): void {
  const known = call.bindingHosts[p.host_id];
  if (p.host_id === '') Object.assign(p, { vif_type: 'unbound', vif_details: {}, status: 'DOWN' });
  else if (known) Object.assign(p, { vif_type: known.vifType, vif_details: { ...known.details }, status: known.active ? 'ACTIVE' : 'DOWN' });
  else Object.assign(p, { vif_type: 'binding_failed', vif_details: {}, status: 'DOWN' });
}

export interface InternalPort {
  network: NetworkRecord;
  project: string;
  name?: string;
  deviceOwner: string;
  deviceId: string;
  fixedIps?: unknown;
  adminStateUp?: boolean;
  securityGroups?: string[];
  portSecurity?: boolean;
  macAddress?: string;
  hostId?: string;
  description?: string;
}

/** Creates a port with no policy checks: the API's path, and Neutron's own (router, floating IP) and Octavia's ports. */
export function createPort(call: NeutronCall, spec: InternalPort): PortRecord {
  const { store } = call;
  const std = store.std(spec.project, spec.description ?? '', 1);
  const mac = takeMac(store, spec.network.id, spec.macAddress);
  const fixed = allocatePortIps(store, spec.network, spec.fixedIps, std.id, spec.deviceOwner);
  const portSecurity = spec.portSecurity ?? spec.network.port_security_enabled;
  const port: PortRecord = {
    ...std, name: spec.name ?? '', network_id: spec.network.id, mac_address: mac, admin_state_up: spec.adminStateUp ?? true, status: 'DOWN',
    device_id: spec.deviceId, device_owner: spec.deviceOwner, fixed_ips: fixed, port_security_enabled: portSecurity,
    security_groups: spec.securityGroups ?? (portSecurity && !spec.deviceOwner.startsWith('network:') ? [ensureDefaultSecurityGroup(store, spec.project).id] : []),
    vnic_type: 'normal', profile: {}, host_id: spec.hostId ?? '', vif_type: 'unbound', vif_details: {}, allowed_address_pairs: [], extra_dhcp_opts: [],
  };
  bind(call, port);
  store.macs.add(`${spec.network.id}|${mac}`);
  store.ports.set(port.id, port);
  return port;
}

/** Removes a port and gives back its addresses and MAC; floating IPs on it are disassociated. */
export function removePort(store: NeutronStore, p: PortRecord): void {
  store.ports.delete(p.id);
  store.macs.delete(`${p.network_id}|${p.mac_address}`);
  for (const f of p.fixed_ips) {
    const subnet = store.subnets.get(f.subnet_id);
    if (subnet) releaseIp(subnet, f.ip_address);
  }
  for (const fip of store.floatingips.values()) {
    if (fip.port_id === p.id) {
      Object.assign(fip, { port_id: null, fixed_ip_address: null, router_id: null });
      store.touch(fip);
    }
  }
}

function checkSecurityGroups(call: NeutronCall, ids: unknown[], portSecurity: boolean): string[] {
  if (ids.length > 0 && !portSecurity) {
    throw neutronError(400, 'PortSecurityAndIPRequiredForSecurityGroups', 'Port security must be enabled and port must have an IP address in order to use security groups.');
  }
  return ids.map((id) => findVisible(securityGroupKind, call, String(id as string)).id);
}

function createOne(call: NeutronCall, attrs: Record<string, unknown>): PortRecord {
  const network = findVisible(networkKind, call, attrs.network_id as string);
  const project = targetProject(call, attrs);
  checkQuota(call.store, project, 'port');
  if (!call.ctx.isAdmin && attrs['binding:host_id'] !== undefined) throw nerr.policy('rule:create_port:binding:host_id');
  const portSecurity = (attrs.port_security_enabled as boolean | undefined) ?? network.port_security_enabled;
  const groups = attrs.security_groups === undefined ? undefined : checkSecurityGroups(call, attrs.security_groups as unknown[], portSecurity);
  const port = createPort(call, {
    network, project, name: (attrs.name as string | undefined) ?? '', deviceOwner: (attrs.device_owner as string | undefined) ?? '',
    deviceId: (attrs.device_id as string | undefined) ?? '', fixedIps: attrs.fixed_ips, adminStateUp: attrs.admin_state_up as boolean | undefined,
    portSecurity, macAddress: attrs.mac_address as string | undefined, hostId: attrs['binding:host_id'] as string | undefined,
    description: attrs.description as string | undefined, ...(groups ? { securityGroups: groups } : {}),
  });
  if (attrs['binding:vnic_type'] !== undefined) port.vnic_type = attrs['binding:vnic_type'] as string;
  if (attrs['binding:profile'] !== undefined) port.profile = attrs['binding:profile'] as Record<string, unknown>;
  if (attrs.allowed_address_pairs !== undefined) port.allowed_address_pairs = attrs.allowed_address_pairs as unknown[];
  if (attrs.extra_dhcp_opts !== undefined) port.extra_dhcp_opts = attrs.extra_dhcp_opts as unknown[];
  return port;
}

const l3Owners = new Set(['network:router_interface', 'network:router_gateway', 'network:floatingip', 'network:router_interface_distributed']);

export const ports = {
  /** Single or bulk; a bulk is atomic (real ML2 runs it in one transaction). */
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'port', 'ports', specs, 'POST');
    const created: PortRecord[] = [];
    try {
      for (const attrs of items) created.push(createOne(call, attrs));
    } catch (err) {
      for (const p of created) removePort(call.store, p);
      throw err;
    }
    const out = created.map((p) => serialize(p, call, 'create'));
    return { status: 201, body: bulk ? { ports: out } : { port: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const p = findOwned(portKind, call, id, 'update');
    const attrs = parseResourceBody(call.body, 'port', 'ports', specs, 'PUT').items[0]!;
    checkRevision(call, p);
    const { store } = call;
    for (const adminOnly of ['mac_address', 'binding:host_id', 'binding:profile']) {
      if (!call.ctx.isAdmin && adminOnly in attrs) throw nerr.policy(`rule:update_port:${adminOnly}`);
    }
    let bump = 1;
    if (attrs.mac_address !== undefined && attrs.mac_address !== p.mac_address) {
      const mac = takeMac(store, p.network_id, attrs.mac_address as string);
      store.macs.delete(`${p.network_id}|${p.mac_address}`);
      store.macs.add(`${p.network_id}|${mac}`);
      p.mac_address = mac;
    }
    if (attrs.fixed_ips !== undefined) {
      const network = store.networks.get(p.network_id)!;
      const old = p.fixed_ips;
      for (const f of old) releaseIp(store.subnets.get(f.subnet_id)!, f.ip_address);
      try {
        p.fixed_ips = allocatePortIps(store, network, attrs.fixed_ips, p.id, (attrs.device_owner as string | undefined) ?? p.device_owner);
      } catch (err) {
        // Put the old addresses back: the update changes nothing when it fails.
        allocatePortIps(store, network, old, p.id, p.device_owner);
        throw err;
      }
    }
    const portSecurity = (attrs.port_security_enabled as boolean | undefined) ?? p.port_security_enabled;
    if (attrs.security_groups !== undefined) {
      p.security_groups = checkSecurityGroups(call, attrs.security_groups as unknown[], portSecurity);
      bump++;
    } else if (!portSecurity && p.security_groups.length > 0) {
      throw neutronError(409, 'PortSecurityPortHasSecurityGroup', 'Port has security group associated. Cannot disable port security or ip address until security group is removed');
    }
    p.port_security_enabled = portSecurity;
    if (attrs.name !== undefined) p.name = attrs.name as string;
    if (attrs.description !== undefined) p.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) p.admin_state_up = attrs.admin_state_up as boolean;
    if (attrs.device_id !== undefined) p.device_id = attrs.device_id as string;
    if (attrs.device_owner !== undefined) p.device_owner = attrs.device_owner as string;
    if (attrs.allowed_address_pairs !== undefined) p.allowed_address_pairs = attrs.allowed_address_pairs as unknown[];
    if (attrs.extra_dhcp_opts !== undefined) p.extra_dhcp_opts = attrs.extra_dhcp_opts as unknown[];
    if (attrs['binding:vnic_type'] !== undefined) p.vnic_type = attrs['binding:vnic_type'] as string;
    if (attrs['binding:profile'] !== undefined) p.profile = attrs['binding:profile'] as Record<string, unknown>;
    if (attrs['binding:host_id'] !== undefined) {
      p.host_id = attrs['binding:host_id'] as string;
      bind(call, p);
    }
    store.touch(p, bump);
    return { status: 200, body: { port: serialize(p, call, 'show') } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const p = findOwned(portKind, call, id, 'delete');
    checkRevision(call, p);
    if (l3Owners.has(p.device_owner)) {
      throw neutronError(409, 'L3PortInUse', `Port ${id} has owner ${p.device_owner} and therefore cannot be deleted directly via the port API.`);
    }
    removePort(call.store, p);
    return { status: 204 };
  },
};
