import { parseCidr, parseIp } from '../../../../src/core/index.ts';
import { isObject, neutronError } from '../http.ts';
import {
  createOnly,
  isUuidLike,
  parseResourceBody,
  readOnly,
  rw,
  stdSpecs,
  uniqueStringsProblem,
  type AttrSpecs,
  updateAttributes,
} from './body.ts';
import {
  checkQuota,
  checkRevision,
  findOwned,
  findVisible,
  ordered,
  targetProject,
  type Kind,
  type NeutronCall,
  type Op,
} from './common.ts';
import { nerr, pyRepr, pyStr } from './errors.ts';
import { allocatePortIps, releaseIp } from './ipam.ts';
import { networkKind } from './networks.ts';
import type { Item } from './query.ts';
import { ensureDefaultSecurityGroup, securityGroupKind } from './security-groups.ts';
import type { FixedIp, NetworkRecord, NeutronStore, PortRecord } from './store.ts';
import { checkPortDeletion, followParent, trunkDetails } from './trunk-ports.ts';

/** neutron-lib's `VNIC_TYPES` (Zed). */
const vnicTypes = [
  'normal',
  'direct',
  'macvtap',
  'baremetal',
  'direct-physical',
  'virtio-forwarder',
  'smart-nic',
  'vdpa',
  'accelerator-direct',
  'accelerator-direct-physical',
  'remote-managed',
];

const macPattern = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** An allowed address pair as given: `ip_address` and, optionally, `mac_address` (the port's MAC when absent). */
interface AddressPair {
  ip_address: string;
  mac_address?: string;
}

/**
 * `_validate_allowed_address_pairs` (neutron-lib), in its order; most of its errors are bare HTTPBadRequests, only a
 * non-dict item is an "Invalid input for" one (returned as the reason). null was converted to [] before.
 */
function addressPairsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) throw nerr.badRequest('Allowed address pairs must be a list.');
  const maxPairs = 10;
  if (value.length > maxPairs)
    throw neutronError(
      400,
      'AllowedAddressPairExhausted',
      `The number of allowed address pair exceeds the maximum ${maxPairs}.`,
    );
  const seen = new Set<string>();
  for (const pair of value as unknown[]) {
    if (!isObject(pair)) return `'${pyStr(pair)}' is not a dictionary`;
    if (
      'mac_address' in pair &&
      !(typeof pair.mac_address === 'string' && macPattern.test(pair.mac_address.toLowerCase()))
    ) {
      throw nerr.badRequest(`'${pyStr(pair.mac_address)}' is not a valid MAC address`);
    }
    if (!('ip_address' in pair))
      throw neutronError(400, 'AllowedAddressPairsMissingIP', 'AllowedAddressPair must contain ip_address');
    const key = `${pyStr(pair.mac_address)}|${pyStr(pair.ip_address)}`;
    if (seen.has(key))
      throw neutronError(
        400,
        'DuplicateAddressPairInRequest',
        `Request contains duplicate address pair: mac_address ${pyStr(pair.mac_address)} ip_address ${pyStr(pair.ip_address)}.`,
      );
    seen.add(key);
    const extra = Object.keys(pair).filter((k) => k !== 'mac_address' && k !== 'ip_address');
    if (extra.length > 0) throw nerr.badRequest(`Unrecognized attribute(s) '${extra.join(', ')}'`);
    const ip = pair.ip_address;
    if (typeof ip !== 'string') throw nerr.badRequest(`'${pyStr(ip)}' is not a valid IP address`);
    // A CIDR may have host bits (netaddr keeps them); a plain address must be one.
    if (ip.includes('/') ? !parseCidr(ip) : !parseIp(ip))
      throw nerr.badRequest(
        ip.includes('/') ? `'${ip}' is not a valid IP subnet` : `'${ip}' is not a valid IP address`,
      );
  }
  return undefined;
}

/** The stored pairs: each with a MAC (the port's when not given), in the table's key order (MAC, then address). */
function addressPairs(given: AddressPair[], portMac: string): { mac_address: string; ip_address: string }[] {
  return given
    .map((p) => ({ mac_address: (p.mac_address ?? portMac).toLowerCase(), ip_address: p.ip_address }))
    .sort((a, b) =>
      a.mac_address === b.mac_address ? (a.ip_address < b.ip_address ? -1 : 1) : a.mac_address < b.mac_address ? -1 : 1,
    );
}

/** neutron-lib's `validate_fixed_ips`. */
function fixedIpsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return `Invalid data format for fixed IP: '${pyStr(value)}'`;
  const seen: unknown[] = [];
  for (const f of value as unknown[]) {
    if (!isObject(f)) return `Invalid data format for fixed IP: '${pyStr(f)}'`;
    if ('ip_address' in f) {
      if (seen.includes(f.ip_address)) return `Duplicate IP address '${pyStr(f.ip_address)}'`;
      if (typeof f.ip_address !== 'string' || !parseIp(f.ip_address))
        return `'${pyStr(f.ip_address)}' is not a valid IP address`;
      seen.push(f.ip_address);
    }
    if ('subnet_id' in f && !(typeof f.subnet_id === 'string' && isUuidLike(f.subnet_id)))
      return `'${pyStr(f.subnet_id)}' is not a valid UUID`;
  }
  return undefined;
}

/** `type:list_of_any_key_specs_or_none` with the extra-DHCP-option key specs, simplified: name, value, ip_version. */
function extraDhcpOptsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return `'${pyStr(value)}' is not a list`;
  for (const opt of value as unknown[]) {
    const ok =
      isObject(opt) &&
      typeof opt.opt_name === 'string' &&
      opt.opt_name !== '' &&
      'opt_value' in opt &&
      (opt.opt_value === null || typeof opt.opt_value === 'string') &&
      Object.keys(opt).every((k) => k === 'opt_name' || k === 'opt_value' || k === 'ip_version') &&
      (opt.ip_version === undefined || opt.ip_version === 4 || opt.ip_version === 6);
    // A converter-style error in real Neutron: InvalidInput, not the usual HTTPBadRequest.
    if (!ok) throw nerr.invalidInput(`No valid key specs matched for: ${pyRepr(opt)}`);
  }
  return undefined;
}

/** Extra DHCP options as stored: each with its `ip_version` (4 when not given). */
function dhcpOptions(given: unknown): unknown[] {
  return (
    (given as { opt_name: string; opt_value: string | null; ip_version?: number }[] | null | undefined) ?? []
  ).map((o) => ({ opt_name: o.opt_name, opt_value: o.opt_value, ip_version: o.ip_version ?? 4 }));
}

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string', { maxLen: 255 }),
  network_id: createOnly('string', { required: true }),
  admin_state_up: rw('boolean'),
  mac_address: rw('string', {
    validate: (v) =>
      macPattern.test((v as string).toLowerCase()) ? undefined : `'${v as string}' is not a valid MAC address`,
  }),
  fixed_ips: rw('any', { validate: fixedIpsProblem }),
  device_id: rw('string', { maxLen: 255 }),
  device_owner: rw('string', { maxLen: 255 }),
  status: readOnly('string'),
  security_groups: rw('list'),
  port_security_enabled: rw('boolean'),
  allowed_address_pairs: rw('any', { nullable: true, validate: addressPairsProblem }),
  extra_dhcp_opts: rw('any', { nullable: true, validate: extraDhcpOptsProblem }),
  // Without the `tag-ports-during-bulk-creation` ML2 extension driver (not loaded on Zed's default config), the
  // tagging extension still lets `tags` into a port POST and validates them, but nothing stores them.
  tags: createOnly('any', { validate: (v) => uniqueStringsProblem(v, 255) }),
  'binding:host_id': rw('string'),
  'binding:vnic_type': rw('string', { values: vnicTypes }),
  'binding:profile': rw('dict'),
  'binding:vif_type': readOnly('string'),
  'binding:vif_details': readOnly('dict'),
};

const createOrder = [
  'id',
  'name',
  'network_id',
  'tenant_id',
  'mac_address',
  'admin_state_up',
  'status',
  'device_id',
  'device_owner',
  'fixed_ips',
  'project_id',
  'port_security_enabled',
  'security_groups',
  'binding:vnic_type',
  'binding:profile',
  'binding:host_id',
  'binding:vif_type',
  'binding:vif_details',
  'allowed_address_pairs',
  'extra_dhcp_opts',
  'description',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
];
// A bulk create answers in yet another order.
const bulkOrder = [
  'id',
  'name',
  'network_id',
  'tenant_id',
  'mac_address',
  'admin_state_up',
  'status',
  'device_id',
  'device_owner',
  'fixed_ips',
  'project_id',
  'binding:host_id',
  'binding:vnic_type',
  'binding:profile',
  'port_security_enabled',
  'security_groups',
  'binding:vif_type',
  'binding:vif_details',
  'allowed_address_pairs',
  'extra_dhcp_opts',
  'description',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
];
const showOrder = [
  'id',
  'name',
  'network_id',
  'tenant_id',
  'mac_address',
  'admin_state_up',
  'status',
  'device_id',
  'device_owner',
  'fixed_ips',
  'allowed_address_pairs',
  'extra_dhcp_opts',
  'security_groups',
  'description',
  'binding:vnic_type',
  'binding:profile',
  'binding:host_id',
  'binding:vif_type',
  'binding:vif_details',
  'port_security_enabled',
  'trunk_details',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

function serialize(p: PortRecord, call: NeutronCall, op: Op, bulk = false): Item {
  const item: Item = {
    id: p.id,
    name: p.name,
    network_id: p.network_id,
    tenant_id: p.project_id,
    project_id: p.project_id,
    mac_address: p.mac_address,
    admin_state_up: p.admin_state_up,
    status: p.status,
    device_id: p.device_id,
    device_owner: p.device_owner,
    fixed_ips: p.fixed_ips.map((f) => ({ ...f })),
    port_security_enabled: p.port_security_enabled,
    security_groups: [...p.security_groups],
    'binding:vnic_type': p.vnic_type,
    allowed_address_pairs: p.allowed_address_pairs.map((a) => ({ ...(a as object) })),
    extra_dhcp_opts: p.extra_dhcp_opts,
    description: p.description,
    tags: [...p.tags].sort(),
    created_at: p.created_at,
    updated_at: p.updated_at,
    revision_number: p.revision_number,
  };
  // The binding details are admin-only (policy get_port:binding:*), except the vnic type.
  if (call.ctx.isAdmin) {
    Object.assign(item, {
      'binding:profile': p.profile,
      'binding:host_id': p.host_id,
      'binding:vif_type': p.vif_type,
      'binding:vif_details': p.vif_details,
    });
  }
  const trunk = trunkDetails(call.store, p.id, op !== 'list');
  if (trunk) item.trunk_details = trunk;
  return ordered(item, op === 'create' ? (bulk ? bulkOrder : createOrder) : showOrder);
}

/**
 * `?fixed_ips=ip_address=X&fixed_ips=subnet_id=S`: some address of the port matches every kind given (any value of
 * each).
 */
function fixedIpsFilter(item: Item, values: string[]): boolean {
  const wanted = new Map<string, string[]>();
  for (const v of values) {
    const eq = v.indexOf('=');
    const key = eq < 0 ? v : v.slice(0, eq);
    wanted.set(key, [...(wanted.get(key) ?? []), eq < 0 ? '' : v.slice(eq + 1)]);
  }
  return (item.fixed_ips as FixedIp[]).some((f) =>
    [...wanted].every(([key, vals]) =>
      key === 'ip_address_substr'
        ? vals.some((v) => f.ip_address.includes(v))
        : vals.includes(String((f as unknown as Record<string, string>)[key])),
    ),
  );
}

export const portKind: Kind<PortRecord> = {
  singular: 'port',
  plural: 'ports',
  path: 'ports',
  quota: 'port',
  map: (store) => store.ports,
  notFound: (id) => nerr.portNotFound(id),
  serialize,
  attributes: createOrder.filter((k) => k !== 'fixed_ips'),
  special: { fixed_ips: fixedIpsFilter },
  filterTypes: { admin_state_up: 'boolean', port_security_enabled: 'boolean' },
};

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
    throw neutronError(
      409,
      'MacAddressInUse',
      `Unable to complete operation for network ${networkId}. The mac address ${mac} is in use.`,
    );
  }
  return mac;
}

/** Emulates binding: no host → unbound; a host the driver knows binds; any other host fails to bind. */
function bind(call: NeutronCall, p: PortRecord): void {
  const known = call.bindingHosts[p.host_id];
  if (p.host_id === '') Object.assign(p, { vif_type: 'unbound', vif_details: {}, status: 'DOWN' });
  else if (known)
    Object.assign(p, {
      vif_type: known.vifType,
      vif_details: { ...known.details },
      status: known.active ? 'ACTIVE' : 'DOWN',
    });
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

/**
 * Creates a port with no policy checks: the API's path, and Neutron's own (router, floating IP) and Octavia's ports.
 */
export function createPort(call: NeutronCall, spec: InternalPort): PortRecord {
  const { store } = call;
  const std = store.std(spec.project, spec.description ?? '', 1);
  const mac = takeMac(store, spec.network.id, spec.macAddress);
  const fixed = allocatePortIps(store, spec.network, spec.fixedIps, std.id, spec.deviceOwner, mac);
  const portSecurity = spec.portSecurity ?? spec.network.port_security_enabled;
  const port: PortRecord = {
    ...std,
    name: spec.name ?? '',
    network_id: spec.network.id,
    mac_address: mac,
    admin_state_up: spec.adminStateUp ?? true,
    status: 'DOWN',
    device_id: spec.deviceId,
    device_owner: spec.deviceOwner,
    fixed_ips: fixed,
    port_security_enabled: portSecurity,
    security_groups:
      spec.securityGroups ??
      (portSecurity && !spec.deviceOwner.startsWith('network:')
        ? [ensureDefaultSecurityGroup(store, spec.project).id]
        : []),
    vnic_type: 'normal',
    profile: {},
    host_id: spec.hostId ?? '',
    vif_type: 'unbound',
    vif_details: {},
    allowed_address_pairs: [],
    extra_dhcp_opts: [],
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
    throw neutronError(
      400,
      'PortSecurityAndIPRequiredForSecurityGroups',
      'Port security must be enabled and port must have an IP address in order to use security groups.',
    );
  }
  return ids.map((id) => findVisible(securityGroupKind, call, String(id as string)).id);
}

const addressPairsNeedPortSecurity = () =>
  neutronError(
    409,
    'AddressPairAndPortSecurityRequired',
    'Port Security must be enabled in order to have allowed address pairs on a port.',
  );

/**
 * Bumps a port's revision and works out what the answer shows, as ML2 on Zed does: its update commits the port, its
 * standard attributes and its binding in separate steps, and the answer is built part-way through. Measured on real
 * Neutron (the caller reads the rest with a GET right after):
 *
 * - port attributes (name, device_*, admin_state_up, MAC, security groups, address pairs, DHCP options, port security,
 *   a real change of fixed IPs), alone or with a description: +1, answered;
 * - a description alone: +2, the answer shows +1;
 * - only binding attributes (host unchanged or cleared, profile or vnic type on an unbound port) or fixed IPs that do
 *   not change: +1, the answer shows none of it;
 * - a (re)bind, i.e. a new host, a new profile or vnic type on a bound port, or any update of a port whose binding
 *   failed (ML2 retries it each time): one more, after the answer (the answer lags one behind).
 */
function bumpRevision(
  store: NeutronStore,
  p: PortRecord,
  portAttrs: boolean,
  description: boolean,
  rebind: boolean,
): number {
  const before = p.revision_number;
  const after = before + 1 + (description && !portAttrs ? 1 : 0) + (rebind ? 1 : 0);
  store.touch(p, after - before);
  return rebind ? after - 1 : before + (portAttrs || description ? 1 : 0);
}

function createOne(call: NeutronCall, attrs: Record<string, unknown>): { port: PortRecord; answered: number } {
  const network = findVisible(networkKind, call, attrs.network_id as string);
  const project = targetProject(call, attrs);
  checkQuota(call.store, project, 'port');
  if (!call.ctx.isAdmin && attrs['binding:host_id'] !== undefined)
    throw nerr.policy('rule:create_port:binding:host_id');
  const portSecurity = (attrs.port_security_enabled as boolean | undefined) ?? network.port_security_enabled;
  const groups =
    attrs.security_groups === undefined
      ? undefined
      : checkSecurityGroups(call, attrs.security_groups as unknown[], portSecurity);
  const pairs = (attrs.allowed_address_pairs as AddressPair[] | null | undefined) ?? [];
  if (pairs.length > 0 && !portSecurity) throw addressPairsNeedPortSecurity();
  const port = createPort(call, {
    network,
    project,
    name: (attrs.name as string | undefined) ?? '',
    deviceOwner: (attrs.device_owner as string | undefined) ?? '',
    deviceId: (attrs.device_id as string | undefined) ?? '',
    fixedIps: attrs.fixed_ips,
    adminStateUp: attrs.admin_state_up as boolean | undefined,
    portSecurity,
    macAddress: attrs.mac_address as string | undefined,
    hostId: attrs['binding:host_id'] as string | undefined,
    description: attrs.description as string | undefined,
    ...(groups ? { securityGroups: groups } : {}),
  });
  if (attrs['binding:vnic_type'] !== undefined) port.vnic_type = attrs['binding:vnic_type'] as string;
  if (attrs['binding:profile'] !== undefined) port.profile = attrs['binding:profile'] as Record<string, unknown>;
  port.allowed_address_pairs = addressPairs(pairs, port.mac_address);
  port.extra_dhcp_opts = dhcpOptions(attrs.extra_dhcp_opts);
  const answered = port.revision_number;
  // Binding to a host (successfully or not) commits once more after the answer is built.
  if (port.host_id !== '') call.store.touch(port);
  return { port, answered };
}

const l3Owners = new Set([
  'network:router_interface',
  'network:router_gateway',
  'network:floatingip',
  'network:router_interface_distributed',
]);

/** Attributes stored on the port row (or its own tables) rather than its binding or standard attributes. */
const portRowAttributes = [
  'name',
  'admin_state_up',
  'mac_address',
  'device_id',
  'device_owner',
  'security_groups',
  'port_security_enabled',
  'allowed_address_pairs',
  'extra_dhcp_opts',
];

const sameIps = (a: FixedIp[], b: FixedIp[]) =>
  a.length === b.length && a.every((f) => b.some((g) => g.subnet_id === f.subnet_id && g.ip_address === f.ip_address));

export const ports = {
  /** Single or bulk; a bulk is atomic (real ML2 runs it in one transaction). */
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'port', 'ports', specs, 'POST');
    const created: { port: PortRecord; answered: number }[] = [];
    try {
      for (const attrs of items) created.push(createOne(call, attrs));
    } catch (err) {
      for (const { port } of created) removePort(call.store, port);
      throw err;
    }
    // A port bound on create is answered from the binding step: in the show order.
    const out = created.map(({ port, answered }) => ({
      ...serialize(port, call, port.host_id === '' ? 'create' : 'show', bulk),
      revision_number: answered,
    }));
    return { status: 201, body: bulk ? { ports: out } : { port: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'port', 'ports', specs, 'PUT');
    const p = findOwned(portKind, call, id, 'update');
    const attrs = updateAttributes(items, 'port');
    checkRevision(call, p);
    const { store } = call;
    for (const adminOnly of ['mac_address', 'binding:host_id', 'binding:profile']) {
      if (!call.ctx.isAdmin && adminOnly in attrs) throw nerr.policy(`rule:update_port:${adminOnly}`);
    }
    const bound = p.vif_type !== 'unbound' && p.vif_type !== 'binding_failed';
    const failed = p.vif_type === 'binding_failed';
    // Check everything before changing anything: a failed update changes nothing.
    const newMac = attrs.mac_address === undefined ? undefined : (attrs.mac_address as string).toLowerCase();
    if (newMac !== undefined && newMac !== p.mac_address && bound) {
      throw neutronError(
        409,
        'PortBound',
        `Unable to complete operation on port ${p.id}, port is already bound, port type: ${p.vif_type}, old_mac ${p.mac_address}, new_mac ${newMac}.`,
      );
    }
    const portSecurity = (attrs.port_security_enabled as boolean | undefined) ?? p.port_security_enabled;
    const pairs =
      attrs.allowed_address_pairs === undefined
        ? undefined
        : addressPairs((attrs.allowed_address_pairs as AddressPair[] | null) ?? [], newMac ?? p.mac_address);
    if (!portSecurity && (pairs ?? p.allowed_address_pairs).length > 0) throw addressPairsNeedPortSecurity();
    const groups =
      attrs.security_groups === undefined
        ? undefined
        : checkSecurityGroups(call, attrs.security_groups as unknown[], portSecurity);
    if (!groups && !portSecurity && p.security_groups.length > 0) {
      throw neutronError(
        409,
        'PortSecurityPortHasSecurityGroup',
        'Port has security group associated. Cannot disable port security or IP address until security group is removed.',
      );
    }
    if (newMac !== undefined && newMac !== p.mac_address) takeMac(store, p.network_id, newMac);
    let ipsChanged = false;
    if (attrs.fixed_ips !== undefined) {
      const network = store.networks.get(p.network_id)!;
      const old = p.fixed_ips;
      for (const f of old) releaseIp(store.subnets.get(f.subnet_id)!, f.ip_address);
      // A `{subnet_id}` entry keeps the address the port already has on that subnet (IPAM only allocates what is new).
      const given = attrs.fixed_ips as { subnet_id?: string; ip_address?: string }[];
      const kept = new Set<string>(given.flatMap((f) => (f.ip_address === undefined ? [] : [f.ip_address])));
      const requested = given.map((f) => {
        if (f.ip_address !== undefined || f.subnet_id === undefined) return f;
        const mine = old.find((o) => o.subnet_id === f.subnet_id && !kept.has(o.ip_address));
        if (!mine) return f;
        kept.add(mine.ip_address);
        return { ...f, ip_address: mine.ip_address };
      });
      try {
        p.fixed_ips = allocatePortIps(
          store,
          network,
          requested,
          p.id,
          (attrs.device_owner as string | undefined) ?? p.device_owner,
          newMac ?? p.mac_address,
        );
      } catch (err) {
        // Put the old addresses back: the update changes nothing when it fails.
        allocatePortIps(store, network, old, p.id, p.device_owner, p.mac_address);
        throw err;
      }
      ipsChanged = !sameIps(old, p.fixed_ips);
    }
    if (newMac !== undefined && newMac !== p.mac_address) {
      store.macs.delete(`${p.network_id}|${p.mac_address}`);
      store.macs.add(`${p.network_id}|${newMac}`);
      p.mac_address = newMac;
    }
    if (groups) p.security_groups = groups;
    p.port_security_enabled = portSecurity;
    if (pairs) p.allowed_address_pairs = pairs;
    if (attrs.name !== undefined) p.name = attrs.name as string;
    if (attrs.description !== undefined) p.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) p.admin_state_up = attrs.admin_state_up as boolean;
    if (attrs.device_id !== undefined) p.device_id = attrs.device_id as string;
    if (attrs.device_owner !== undefined) p.device_owner = attrs.device_owner as string;
    if (attrs.extra_dhcp_opts !== undefined) p.extra_dhcp_opts = dhcpOptions(attrs.extra_dhcp_opts);
    const oldHost = p.host_id;
    const bindingChanged =
      (attrs['binding:vnic_type'] !== undefined && attrs['binding:vnic_type'] !== p.vnic_type) ||
      (attrs['binding:profile'] !== undefined &&
        JSON.stringify(attrs['binding:profile']) !== JSON.stringify(p.profile));
    if (attrs['binding:vnic_type'] !== undefined) p.vnic_type = attrs['binding:vnic_type'] as string;
    if (attrs['binding:profile'] !== undefined) p.profile = attrs['binding:profile'] as Record<string, unknown>;
    if (attrs['binding:host_id'] !== undefined) p.host_id = attrs['binding:host_id'] as string;
    const rebind = p.host_id !== '' && (p.host_id !== oldHost || failed || (bound && bindingChanged));
    if (rebind || p.host_id !== oldHost) {
      bind(call, p);
      if (call.trunkDriver === 'ovn') followParent(call.store, p);
    }
    const portAttrs = portRowAttributes.some((a) => a in attrs) || ipsChanged;
    const answered = bumpRevision(store, p, portAttrs, 'description' in attrs, rebind);
    return { status: 200, body: { port: { ...serialize(p, call, 'show'), revision_number: answered } } };
  },
  delete(call: NeutronCall, id: string): { status: number } {
    const p = findOwned(portKind, call, id, 'delete');
    checkRevision(call, p);
    if (l3Owners.has(p.device_owner)) {
      throw neutronError(
        409,
        'L3PortInUse',
        `Port ${id} has owner ${p.device_owner} and therefore cannot be deleted directly via the port API.`,
      );
    }
    checkPortDeletion(call.store, p.id);
    removePort(call.store, p);
    return { status: 204 };
  },
};
