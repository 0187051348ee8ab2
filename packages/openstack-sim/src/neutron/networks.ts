import { neutronError } from '../http.ts';
import { parseResourceBody, readOnly, rw, createOnly, stdSpecs, type AttrSpecs, updateAttributes } from './body.ts';
import {
  checkQuota,
  checkRevision,
  findOwned,
  ordered,
  targetProject,
  type Kind,
  type NeutronCall,
  type Op,
} from './common.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';
import { ensureDefaultSecurityGroup } from './security-groups.ts';
import type { NetworkRecord, NeutronStore } from './store.ts';

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string', { maxLen: 255 }),
  admin_state_up: rw('boolean'),
  mtu: rw('int'),
  status: readOnly('string'),
  subnets: readOnly('list'),
  shared: rw('boolean'),
  'router:external': rw('boolean'),
  'provider:network_type': rw('string'),
  'provider:physical_network': rw('string', { nullable: true }),
  'provider:segmentation_id': rw('int', { nullable: true }),
  port_security_enabled: rw('boolean'),
  is_default: rw('boolean'),
  availability_zone_hints: createOnly('list'),
  availability_zones: readOnly('list'),
  ipv4_address_scope: readOnly('string'),
  ipv6_address_scope: readOnly('string'),
};

// Attribute order of real Neutron's create response, and of show/list/update (which also drops is_default).
const createOrder = [
  'id',
  'name',
  'tenant_id',
  'admin_state_up',
  'mtu',
  'status',
  'subnets',
  'shared',
  'project_id',
  'port_security_enabled',
  'router:external',
  'provider:network_type',
  'provider:physical_network',
  'provider:segmentation_id',
  'is_default',
  'availability_zone_hints',
  'availability_zones',
  'ipv4_address_scope',
  'ipv6_address_scope',
  'description',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
];
const showOrder = [
  'id',
  'name',
  'tenant_id',
  'admin_state_up',
  'mtu',
  'status',
  'subnets',
  'shared',
  'availability_zone_hints',
  'availability_zones',
  'ipv4_address_scope',
  'ipv6_address_scope',
  'router:external',
  'description',
  'port_security_enabled',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
  'provider:network_type',
  'provider:physical_network',
  'provider:segmentation_id',
];

function serialize(n: NetworkRecord, call: NeutronCall, op: Op): Item {
  const item: Item = {
    id: n.id,
    name: n.name,
    tenant_id: n.project_id,
    project_id: n.project_id,
    admin_state_up: n.admin_state_up,
    mtu: n.mtu,
    status: n.status,
    subnets: [...call.store.subnets.values()].filter((s) => s.network_id === n.id).map((s) => s.id),
    shared: n.shared,
    port_security_enabled: n.port_security_enabled,
    'router:external': n.external,
    is_default: false,
    availability_zone_hints: n.availability_zone_hints,
    availability_zones: [],
    ipv4_address_scope: null,
    ipv6_address_scope: null,
    description: n.description,
    tags: [...n.tags].sort(),
    created_at: n.created_at,
    updated_at: n.updated_at,
    revision_number: n.revision_number,
  };
  // The provider attributes are admin-only (policy get_network:provider:*).
  if (call.ctx.isAdmin) {
    Object.assign(item, {
      'provider:network_type': n.network_type,
      'provider:physical_network': n.physical_network,
      'provider:segmentation_id': n.segmentation_id,
    });
  }
  return ordered(item, op === 'create' ? createOrder : showOrder);
}

export const networkKind: Kind<NetworkRecord> = {
  singular: 'network',
  plural: 'networks',
  path: 'networks',
  quota: 'network',
  map: (store) => store.networks,
  notFound: (id) => nerr.networkNotFound(id),
  serialize,
  sharedWith: (n) => n.shared || n.external,
  attributes: [...new Set([...createOrder, ...showOrder])],
  filterTypes: {
    admin_state_up: 'boolean',
    shared: 'boolean',
    'router:external': 'boolean',
    port_security_enabled: 'boolean',
    mtu: 'int',
    'provider:segmentation_id': 'int',
  },
};

const vniRange = { min: 1, max: 20000 };

function allocateVni(store: NeutronStore, requested: number | null | undefined): number {
  if (requested !== undefined && requested !== null) {
    if (store.vnis.has(requested))
      throw neutronError(409, 'TunnelIdInUse', `Unable to create the network. The tunnel ID ${requested} is in use.`);
    return requested;
  }
  const span = vniRange.max - vniRange.min + 1;
  if (store.vnis.size >= span)
    throw neutronError(
      503,
      'NoNetworkAvailable',
      'Unable to create the network. No tenant network is available for allocation.',
    );
  let vni = vniRange.min + store.random.int(span);
  while (store.vnis.has(vni)) vni = vni === vniRange.max ? vniRange.min : vni + 1;
  return vni;
}

/** Admin-only attributes a member may not set on create (legacy Zed policy). */
const adminOnlyOnCreate = [
  'shared',
  'router:external',
  'provider:network_type',
  'provider:physical_network',
  'provider:segmentation_id',
  'is_default',
];

function createOne(call: NeutronCall, attrs: Record<string, unknown>): NetworkRecord {
  const { store } = call;
  const forbidden = adminOnlyOnCreate.filter((a) => a in attrs);
  if (!call.ctx.isAdmin && forbidden.length > 0) {
    throw nerr.policy(`(rule:create_network and ${forbidden.map((a) => `rule:create_network:${a}`).join(' and ')})`);
  }
  const project = targetProject(call, attrs);
  checkQuota(store, project, 'network');
  const type = (attrs['provider:network_type'] as string | undefined) ?? 'vxlan';
  const physnet = (attrs['provider:physical_network'] as string | null | undefined) ?? null;
  let segmentation: number | null = null;
  if (type === 'flat') {
    if (!physnet) throw nerr.invalidInput('physical_network required for flat provider network');
    if (store.flatNetworks.has(physnet))
      throw neutronError(
        409,
        'FlatNetworkInUse',
        `Unable to create the flat network. Physical network ${physnet} is in use.`,
      );
  } else if (type === 'vxlan') {
    segmentation = allocateVni(store, attrs['provider:segmentation_id'] as number | null | undefined);
  } else if (type === 'vlan') {
    if (!physnet) throw nerr.invalidInput('physical_network required for VLAN provider network');
    segmentation = (attrs['provider:segmentation_id'] as number | undefined) ?? 1 + store.random.int(4094);
  } else if (type !== 'local') {
    throw nerr.invalidInput(`network_type value '${type}' not supported`);
  }
  const network: NetworkRecord = {
    ...store.std(project, (attrs.description as string | undefined) ?? '', 1),
    name: (attrs.name as string | undefined) ?? '',
    admin_state_up: (attrs.admin_state_up as boolean | undefined) ?? true,
    mtu: (attrs.mtu as number | undefined) ?? (type === 'vxlan' ? 1450 : 1500),
    status: 'ACTIVE',
    shared: (attrs.shared as boolean | undefined) ?? false,
    external: (attrs['router:external'] as boolean | undefined) ?? false,
    network_type: type,
    physical_network: type === 'vxlan' || type === 'local' ? null : physnet,
    segmentation_id: segmentation,
    port_security_enabled: (attrs.port_security_enabled as boolean | undefined) ?? true,
    availability_zone_hints: (attrs.availability_zone_hints as unknown[] | undefined) ?? [],
  };
  store.networks.set(network.id, network);
  if (type === 'flat' && physnet) store.flatNetworks.set(physnet, network.id);
  if (type === 'vxlan' && segmentation !== null) store.vnis.add(segmentation);
  ensureDefaultSecurityGroup(store, project);
  return network;
}

/** Deletes a network's bookkeeping (the caller has checked it is unused). */
function forget(store: NeutronStore, n: NetworkRecord): void {
  store.networks.delete(n.id);
  if (n.network_type === 'flat' && n.physical_network && store.flatNetworks.get(n.physical_network) === n.id)
    store.flatNetworks.delete(n.physical_network);
  if (n.network_type === 'vxlan' && n.segmentation_id !== null) store.vnis.delete(n.segmentation_id);
}

export const networks = {
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'network', 'networks', specs, 'POST');
    const created: NetworkRecord[] = [];
    try {
      for (const attrs of items) created.push(createOne(call, attrs));
    } catch (err) {
      for (const n of created) forget(call.store, n);
      throw err;
    }
    const out = created.map((n) => serialize(n, call, 'create'));
    return { status: 201, body: bulk ? { networks: out } : { network: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'network', 'networks', specs, 'PUT');
    const n = findOwned(networkKind, call, id, 'update');
    const attrs = updateAttributes(items, 'network');
    checkRevision(call, n);
    if (!call.ctx.isAdmin && ('shared' in attrs || 'router:external' in attrs))
      throw nerr.policy('rule:update_network:shared');
    const provider = ['provider:network_type', 'provider:physical_network', 'provider:segmentation_id'].filter(
      (a) => a in attrs,
    );
    if (!call.ctx.isAdmin && provider.length > 0) throw nerr.policy(`rule:update_network:${provider[0]!}`);
    // ML2 takes the provider attributes in a PUT only when they do not change (and the segment only on VLAN).
    if (attrs['provider:physical_network'] === null)
      throw nerr.invalidAttr('provider:physical_network', "'None' is not a valid string");
    if ('provider:segmentation_id' in attrs && n.network_type !== 'vlan')
      throw nerr.invalidInput('Only VLAN type networks can be updated.');
    if (
      ('provider:network_type' in attrs && attrs['provider:network_type'] !== n.network_type) ||
      ('provider:physical_network' in attrs && attrs['provider:physical_network'] !== n.physical_network)
    ) {
      throw nerr.invalidInput(
        'Plugin does not support updating the following provider network attributes: provider:physical_network, provider:network_type',
      );
    }
    if (attrs['provider:segmentation_id'] !== undefined && attrs['provider:segmentation_id'] !== null)
      n.segmentation_id = attrs['provider:segmentation_id'] as number;
    if (attrs.name !== undefined) n.name = attrs.name as string;
    if (attrs.description !== undefined) n.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) n.admin_state_up = attrs.admin_state_up as boolean;
    if (attrs.mtu !== undefined) n.mtu = attrs.mtu as number;
    if (attrs.shared !== undefined) n.shared = attrs.shared as boolean;
    if (attrs['router:external'] !== undefined) n.external = attrs['router:external'] as boolean;
    if (attrs.port_security_enabled !== undefined) n.port_security_enabled = attrs.port_security_enabled as boolean;
    // Unchanged provider attributes alone change nothing, not even the revision.
    if (Object.keys(attrs).some((a) => a !== 'provider:network_type' && a !== 'provider:physical_network'))
      call.store.touch(n);
    return { status: 200, body: { network: serialize(n, call, 'show') } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const n = findOwned(networkKind, call, id, 'delete');
    checkRevision(call, n);
    const inUse = [...call.store.ports.values()]
      .filter((p) => p.network_id === id)
      .map((p) => p.id)
      .sort();
    if (inUse.length > 0) {
      throw neutronError(
        409,
        'NetworkInUse',
        `Unable to complete operation on network ${id}. There are one or more ports still in use on the network, id for these ports is: ${inUse.join(',')}.`,
      );
    }
    for (const s of [...call.store.subnets.values()]) if (s.network_id === id) call.store.subnets.delete(s.id);
    forget(call.store, n);
    return { status: 204 };
  },
};
