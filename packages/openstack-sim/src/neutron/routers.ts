import { isObject, neutronError } from '../http.ts';
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
} from './common.ts';
import { parseIp } from '../../../../src/core/index.ts';
import { nerr } from './errors.ts';
import { releaseIp, takeIp } from './ipam.ts';
import type { Item } from './query.ts';
import { networkKind } from './networks.ts';
import { createPort, portKind, removePort } from './ports.ts';
import type { PortRecord, RouterRecord } from './store.ts';
import { subnetKind } from './subnets.ts';

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string'),
  admin_state_up: rw('boolean'),
  status: readOnly('string'),
  external_gateway_info: rw('dict', { nullable: true }),
  routes: rw('list'),
  distributed: rw('boolean'),
  ha: rw('boolean'),
  availability_zone_hints: createOnly('list'),
  availability_zones: readOnly('list'),
  flavor_id: createOnly('string', { nullable: true }),
};

const order = [
  'id',
  'name',
  'tenant_id',
  'admin_state_up',
  'status',
  'external_gateway_info',
  'description',
  'availability_zones',
  'distributed',
  'ha',
  'availability_zone_hints',
  'routes',
  'flavor_id',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

function serialize(r: RouterRecord, call: NeutronCall): Item {
  const gwPort = r.gateway && call.store.ports.get(r.gateway.port_id);
  const item: Item = {
    ...r,
    tenant_id: r.project_id,
    tags: [...r.tags].sort(),
    availability_zones: [],
    availability_zone_hints: [],
    flavor_id: null,
    external_gateway_info: r.gateway
      ? {
          network_id: r.gateway.network_id,
          external_fixed_ips: gwPort?.fixed_ips.map((f) => ({ ...f })) ?? [],
          enable_snat: r.gateway.enable_snat,
        }
      : null,
  };
  // distributed/ha are admin-only attributes.
  if (call.ctx.isAdmin) Object.assign(item, { distributed: false, ha: false });
  return ordered(item, order);
}

export const routerKind: Kind<RouterRecord> = {
  singular: 'router',
  plural: 'routers',
  path: 'routers',
  quota: 'router',
  map: (store) => store.routers,
  notFound: (id) => nerr.routerNotFound(id),
  serialize,
  attributes: order,
  filterTypes: { admin_state_up: 'boolean', distributed: 'boolean', ha: 'boolean' },
};

/** The router's interface ports. */
function interfaces(call: NeutronCall, r: RouterRecord): PortRecord[] {
  return [...call.store.ports.values()].filter(
    (p) => p.device_id === r.id && p.device_owner === 'network:router_interface',
  );
}

function fipsVia(call: NeutronCall, routerId: string) {
  return [...call.store.floatingips.values()].filter((f) => f.router_id === routerId);
}

/**
 * Sets, changes or clears the router's gateway. Returns how many revisions of the router that is on real Neutron
 * (measured): none to none 1, none to a network 2, a change on the same network (SNAT, fixed IPs) 1, cleared 3.
 */
function setGateway(call: NeutronCall, r: RouterRecord, info: Record<string, unknown> | null): number {
  const wanted = info && info.network_id !== undefined ? (info.network_id as string) : undefined;
  const current = r.gateway;
  let revisions = 0;
  if (current && (wanted === undefined || wanted !== current.network_id || info?.external_fixed_ips !== undefined)) {
    const fips = fipsVia(call, r.id);
    if (fips.length > 0 && wanted !== current.network_id) {
      throw neutronError(
        409,
        'RouterExternalGatewayInUseByFloatingIp',
        `Gateway cannot be updated for router ${r.id}, since a gateway to external network ${current.network_id} is required by one or more floating IPs.`,
      );
    }
    const port = call.store.ports.get(current.port_id);
    if (port) removePort(call.store, port);
    r.gateway = undefined;
    // New fixed IPs on the same network are a change (1), not a removal (3).
    revisions = wanted === current.network_id ? -1 : 3;
  }
  if (wanted === undefined) return revisions || 1;
  if (r.gateway) {
    if (info?.enable_snat !== undefined) r.gateway.enable_snat = Boolean(info.enable_snat);
    return 1;
  }
  const network = findVisible(networkKind, call, wanted);
  if (!network.external) throw nerr.badResourceRequest('router', `Network ${wanted} is not an external network`);
  const port = createPort(call, {
    network,
    project: '',
    deviceOwner: 'network:router_gateway',
    deviceId: r.id,
    fixedIps: info?.external_fixed_ips,
  });
  // Real Neutron resets SNAT to its default (on) when the gateway is redone without it.
  r.gateway = {
    network_id: network.id,
    port_id: port.id,
    enable_snat: info?.enable_snat === undefined ? true : Boolean(info.enable_snat),
  };
  return revisions === -1 ? 1 : revisions + 2;
}

function interfaceBody(call: NeutronCall): { subnet_id?: string; port_id?: string } {
  if (!isObject(call.body)) throw nerr.badRequest('Body contains invalid data');
  const { subnet_id, port_id } = call.body as { subnet_id?: string; port_id?: string };
  if (subnet_id !== undefined && port_id !== undefined)
    throw nerr.badResourceRequest('router', 'Cannot specify both subnet-id and port-id');
  if (subnet_id === undefined && port_id === undefined)
    throw nerr.badResourceRequest('router', 'Either subnet_id or port_id must be specified');
  return { ...(subnet_id !== undefined ? { subnet_id } : {}), ...(port_id !== undefined ? { port_id } : {}) };
}

function interfaceInfo(r: RouterRecord, port: PortRecord, subnetId: string): Item {
  const subnetIds = port.fixed_ips.map((f) => f.subnet_id);
  return {
    id: r.id,
    tenant_id: r.project_id,
    port_id: port.id,
    network_id: port.network_id,
    subnet_id: subnetId,
    subnet_ids: subnetIds,
  };
}

export const routers = {
  create(call: NeutronCall): { status: number; body: Item } {
    const attrs = parseResourceBody(call.body, 'router', 'routers', specs, 'POST', false).items[0]!;
    const project = targetProject(call, attrs);
    checkQuota(call.store, project, 'router');
    const r: RouterRecord = {
      ...call.store.std(project, (attrs.description as string | undefined) ?? '', 1),
      name: (attrs.name as string | undefined) ?? '',
      admin_state_up: (attrs.admin_state_up as boolean | undefined) ?? true,
      status: 'ACTIVE',
      gateway: undefined,
      routes: [],
    };
    if (attrs.external_gateway_info)
      r.revision_number += setGateway(call, r, attrs.external_gateway_info as Record<string, unknown>);
    call.store.routers.set(r.id, r);
    return { status: 201, body: { router: serialize(r, call) } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'router', 'routers', specs, 'PUT');
    const r = findOwned(routerKind, call, id, 'update');
    const attrs = updateAttributes(items, 'router');
    checkRevision(call, r);
    // The gateway is its own step (its own revisions); the other attributes are one more, except routes that do not
    // change (extraroute then updates nothing).
    const gateway =
      'external_gateway_info' in attrs
        ? setGateway(call, r, attrs.external_gateway_info as Record<string, unknown> | null)
        : 0;
    const routesChanged = attrs.routes !== undefined && JSON.stringify(attrs.routes) !== JSON.stringify(r.routes);
    const others =
      Object.keys(attrs).some((k) => k !== 'external_gateway_info' && k !== 'routes') || routesChanged ? 1 : 0;
    if (attrs.name !== undefined) r.name = attrs.name as string;
    if (attrs.description !== undefined) r.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) r.admin_state_up = attrs.admin_state_up as boolean;
    if (attrs.routes !== undefined) r.routes = attrs.routes as unknown[];
    if (gateway + others > 0) call.store.touch(r, gateway + others);
    return { status: 200, body: { router: serialize(r, call) } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const r = findOwned(routerKind, call, id, 'delete');
    checkRevision(call, r);
    if (interfaces(call, r).length > 0) throw neutronError(409, 'RouterInUse', `Router ${id} still has ports`);
    if (r.gateway) setGateway(call, r, null);
    call.store.routers.delete(id);
    return { status: 204 };
  },

  addInterface(call: NeutronCall, id: string): { status: number; body: Item } {
    const r = findOwned(routerKind, call, id, 'update');
    const { subnet_id, port_id } = interfaceBody(call);
    let port: PortRecord;
    let subnetId: string;
    if (subnet_id !== undefined) {
      const subnet = findVisible(subnetKind, call, subnet_id);
      if (!subnet.gateway_ip)
        throw nerr.badResourceRequest('router', 'Subnet for router interface must have a gateway IP');
      if (interfaces(call, r).some((p) => p.fixed_ips.some((f) => f.subnet_id === subnet.id))) {
        throw nerr.badResourceRequest('router', `Router already has a port on subnet ${subnet.id}`);
      }
      const network = call.store.networks.get(subnet.network_id)!;
      // IPv6 subnets of one network share the router's port there (measured on Zed): the gateway joins its fixed IPs.
      const v6Port =
        subnet.ip_version === 6
          ? interfaces(call, r).find(
              (p) =>
                p.network_id === network.id &&
                p.fixed_ips.every((f) => call.store.subnets.get(f.subnet_id)?.ip_version === 6),
            )
          : undefined;
      if (v6Port) {
        if (subnet.allocated.has(parseIp(subnet.gateway_ip)!.value))
          throw nerr.ipAllocated(subnet.gateway_ip, subnet.id);
        takeIp(subnet, subnet.gateway_ip, v6Port.id);
        v6Port.fixed_ips = [...v6Port.fixed_ips, { subnet_id: subnet.id, ip_address: subnet.gateway_ip }];
        call.store.touch(v6Port);
        call.store.touch(r);
        return { status: 200, body: { ...interfaceInfo(r, v6Port, subnet.id), subnet_ids: [subnet.id] } };
      }
      port = createPort(call, {
        network,
        project: r.project_id,
        deviceOwner: 'network:router_interface',
        deviceId: r.id,
        fixedIps: [{ subnet_id: subnet.id, ip_address: subnet.gateway_ip }],
      });
      // Created, then updated with its device (a second revision).
      call.store.touch(port);
      subnetId = subnet.id;
    } else {
      port = findVisible(portKind, call, port_id!);
      if (port.device_id !== '' || port.device_owner !== '') {
        throw neutronError(
          409,
          'PortInUse',
          `Unable to complete operation on port ${port.id} for network ${port.network_id}. Port already has an attached device ${port.device_id}.`,
        );
      }
      if (port.fixed_ips.length === 0)
        throw nerr.badResourceRequest('router', 'Router port must have at least one fixed IP');
      Object.assign(port, { device_id: r.id, device_owner: 'network:router_interface' });
      call.store.touch(port, 2);
      subnetId = port.fixed_ips[0]!.subnet_id;
    }
    call.store.touch(r);
    return { status: 200, body: interfaceInfo(r, port, subnetId) };
  },

  removeInterface(call: NeutronCall, id: string): { status: number; body: Item } {
    const r = findOwned(routerKind, call, id, 'update');
    const { subnet_id, port_id } = interfaceBody(call);
    const own = interfaces(call, r);
    const port =
      subnet_id !== undefined
        ? own.find((p) => p.fixed_ips.some((f) => f.subnet_id === subnet_id))
        : own.find((p) => p.id === port_id);
    if (!port && subnet_id !== undefined)
      throw neutronError(
        404,
        'RouterInterfaceNotFoundForSubnet',
        `Router ${id} has no interface on subnet ${subnet_id}`,
      );
    if (!port)
      throw neutronError(404, 'RouterInterfaceNotFound', `Router ${id} does not have an interface with id ${port_id}`);
    const subnets = subnet_id !== undefined ? [subnet_id] : port.fixed_ips.map((f) => f.subnet_id);
    for (const fip of fipsVia(call, r.id)) {
      const target = fip.port_id ? call.store.ports.get(fip.port_id) : undefined;
      const used = target?.fixed_ips.find(
        (f) => f.ip_address === fip.fixed_ip_address && subnets.includes(f.subnet_id),
      );
      if (used) {
        throw neutronError(
          409,
          'RouterInterfaceInUseByFloatingIP',
          `Router interface for subnet ${used.subnet_id} on router ${id} cannot be deleted, as it is required by one or more floating IPs.`,
        );
      }
    }
    const info = interfaceInfo(r, port, subnet_id ?? port.fixed_ips[0]?.subnet_id ?? '');
    const others = subnet_id !== undefined ? port.fixed_ips.filter((f) => f.subnet_id !== subnet_id) : [];
    if (others.length > 0) {
      // One subnet of a shared (IPv6) router port: only its address goes.
      for (const f of port.fixed_ips)
        if (f.subnet_id === subnet_id) releaseIp(call.store.subnets.get(f.subnet_id)!, f.ip_address);
      port.fixed_ips = others;
      call.store.touch(port);
    } else removePort(call.store, port);
    call.store.touch(r);
    return { status: 200, body: info };
  },
};

/** The router that connects a subnet to an external network (what a floating IP needs), if any. */
export function routerFor(call: NeutronCall, externalNetworkId: string, subnetId: string): RouterRecord | undefined {
  for (const r of call.store.routers.values()) {
    if (
      r.gateway?.network_id === externalNetworkId &&
      interfaces(call, r).some((p) => p.fixed_ips.some((f) => f.subnet_id === subnetId))
    )
      return r;
  }
  return undefined;
}
