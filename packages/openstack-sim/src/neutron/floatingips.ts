import { parseIp } from '../../../../src/core/index.ts';
import { neutronError } from '../http.ts';
import { createOnly, parseResourceBody, readOnly, rw, stdSpecs, type AttrSpecs, updateAttributes } from './body.ts';
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
import { nerr } from './errors.ts';
import { networkKind } from './networks.ts';
import { createPort, portKind, removePort } from './ports.ts';
import type { Item } from './query.ts';
import { routerFor } from './routers.ts';
import type { FloatingIpRecord } from './store.ts';

const specs: AttrSpecs = {
  ...stdSpecs,
  floating_network_id: createOnly('string', { required: true }),
  floating_ip_address: createOnly('string'),
  subnet_id: createOnly('string', { nullable: true }),
  port_id: rw('string', { nullable: true }),
  fixed_ip_address: rw('string', { nullable: true }),
  router_id: readOnly('string'),
  status: readOnly('string'),
  port_details: readOnly('dict'),
};

const createOrder = [
  'id',
  'tenant_id',
  'floating_ip_address',
  'floating_network_id',
  'router_id',
  'port_id',
  'fixed_ip_address',
  'status',
  'project_id',
  'description',
  'port_details',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
];
const showOrder = [
  'id',
  'tenant_id',
  'floating_ip_address',
  'floating_network_id',
  'router_id',
  'port_id',
  'fixed_ip_address',
  'status',
  'description',
  'port_details',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

function serialize(f: FloatingIpRecord, call: NeutronCall, op: Op): Item {
  const port = f.port_id ? call.store.ports.get(f.port_id) : undefined;
  const details = port
    ? {
        name: port.name,
        network_id: port.network_id,
        mac_address: port.mac_address,
        admin_state_up: port.admin_state_up,
        status: port.status,
        device_id: port.device_id,
        device_owner: port.device_owner,
      }
    : null;
  return ordered(
    { ...f, tenant_id: f.project_id, port_details: details, tags: [...f.tags].sort() },
    op === 'create' ? createOrder : showOrder,
  );
}

export const floatingIpKind: Kind<FloatingIpRecord> = {
  singular: 'floatingip',
  plural: 'floatingips',
  path: 'floatingips',
  quota: 'floatingip',
  map: (store) => store.floatingips,
  notFound: (id) => neutronError(404, 'FloatingIPNotFound', `Floating IP ${id} could not be found`),
  serialize,
  attributes: createOrder,
  missingMarker: 'empty',
};

/** Works out where a floating IP would point (fixed address, router) for a port; throws Neutron's errors. */
function association(
  call: NeutronCall,
  fip: Pick<FloatingIpRecord, 'id' | 'floating_network_id' | 'floating_ip_address'>,
  portId: string,
  fixedIp: string | null | undefined,
) {
  const port = findVisible(portKind, call, portId);
  const v4 = port.fixed_ips.filter((f) => parseIp(f.ip_address)?.version === 4);
  let chosen = v4[0];
  if (fixedIp) {
    chosen = port.fixed_ips.find((f) => f.ip_address === fixedIp);
    if (!chosen) throw nerr.badResourceRequest('floatingip', `Port ${portId} does not have fixed ip ${fixedIp}`);
  } else if (v4.length > 1) {
    throw nerr.badResourceRequest(
      'floatingip',
      `Port ${portId} has multiple fixed IPv4 addresses. Must provide a specific IPv4 address when assigning a floating IP`,
    );
  }
  if (!chosen)
    throw nerr.badResourceRequest(
      'floatingip',
      `Cannot add floating IP to port ${portId} that has no fixed IPv4 addresses`,
    );
  const router = routerFor(call, fip.floating_network_id, chosen.subnet_id);
  if (!router) {
    throw neutronError(
      404,
      'ExternalGatewayForFloatingIPNotFound',
      `External network ${fip.floating_network_id} is not reachable from subnet ${chosen.subnet_id}.  Therefore, cannot associate Port ${portId} with a Floating IP.`,
    );
  }
  for (const other of call.store.floatingips.values()) {
    if (
      other.id !== fip.id &&
      other.port_id === portId &&
      other.fixed_ip_address === chosen.ip_address &&
      other.floating_network_id === fip.floating_network_id
    ) {
      throw neutronError(
        409,
        'FloatingIPPortAlreadyAssociated',
        `Cannot associate floating IP ${fip.floating_ip_address} (${fip.id}) with port ${portId} using fixed IP ${chosen.ip_address}, as that fixed IP already has a floating IP on external network ${fip.floating_network_id}.`,
      );
    }
  }
  return { port_id: port.id, fixed_ip_address: chosen.ip_address, router_id: router.id };
}

export const floatingips = {
  create(call: NeutronCall): { status: number; body: Item } {
    const attrs = parseResourceBody(call.body, 'floatingip', 'floatingips', specs, 'POST', false).items[0]!;
    const network = findVisible(networkKind, call, attrs.floating_network_id as string);
    if (!network.external)
      throw nerr.badResourceRequest('floatingip', `Network ${network.id} is not a valid external network`);
    const project = targetProject(call, attrs);
    checkQuota(call.store, project, 'floatingip');
    const v4 = [...call.store.subnets.values()].filter((s) => s.network_id === network.id && s.ip_version === 4);
    const subnetId = (attrs.subnet_id as string | undefined) ?? v4[0]?.id;
    if (!subnetId)
      throw nerr.badResourceRequest('floatingip', `Network ${network.id} does not contain any IPv4 subnet`);
    const address = attrs.floating_ip_address as string | undefined;
    const std = call.store.std(project, (attrs.description as string | undefined) ?? '', 0);
    // Check the association before anything is allocated: a failed create leaves nothing behind.
    const assoc = attrs.port_id
      ? association(
          call,
          { id: std.id, floating_network_id: network.id, floating_ip_address: address ?? '' },
          attrs.port_id as string,
          attrs.fixed_ip_address as string | undefined,
        )
      : undefined;
    const port = createPort(call, {
      network,
      project: '',
      deviceOwner: 'network:floatingip',
      deviceId: std.id,
      fixedIps:
        address === undefined
          ? [{ subnet_id: subnetId }]
          : [{ ip_address: address, ...(attrs.subnet_id ? { subnet_id: attrs.subnet_id } : {}) }],
    });
    const fip: FloatingIpRecord = {
      ...std,
      floating_ip_address: port.fixed_ips[0]!.ip_address,
      floating_network_id: network.id,
      floating_port_id: port.id,
      router_id: assoc?.router_id ?? null,
      port_id: assoc?.port_id ?? null,
      fixed_ip_address: assoc?.fixed_ip_address ?? null,
      status: 'DOWN',
    };
    call.store.floatingips.set(fip.id, fip);
    return { status: 201, body: { floatingip: serialize(fip, call, 'create') } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'floatingip', 'floatingips', specs, 'PUT');
    const fip = findOwned(floatingIpKind, call, id, 'update');
    const attrs = updateAttributes(items, 'floatingip');
    checkRevision(call, fip);
    if ('port_id' in attrs) {
      const assoc = attrs.port_id
        ? association(call, fip, attrs.port_id as string, attrs.fixed_ip_address as string | undefined)
        : { port_id: null, fixed_ip_address: null, router_id: null };
      Object.assign(fip, assoc);
    }
    if (attrs.description !== undefined) fip.description = attrs.description as string;
    call.store.touch(fip);
    return { status: 200, body: { floatingip: serialize(fip, call, 'show') } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const fip = findOwned(floatingIpKind, call, id, 'delete');
    checkRevision(call, fip);
    const port = call.store.ports.get(fip.floating_port_id);
    if (port) removePort(call.store, port);
    call.store.floatingips.delete(id);
    return { status: 204 };
  },
};
