import { parseIp, cidrContains } from '../../../../src/core/index.ts';
import { octaviaError, SimHttpError } from '../http.ts';
import { findVisible } from '../neutron/common.ts';
import { networkKind } from '../neutron/networks.ts';
import { createPort, portKind, removePort } from '../neutron/ports.ts';
import { subnetKind } from '../neutron/subnets.ts';
import { checkTags } from './children.ts';
import { checkLbMutable, findObject, policyForbidden, validationFailure, visible, type OctaviaCall } from './common.ts';
import { bodies } from './fields.ts';
import { buildGraph, commitGraph, type Graph } from './graph.ts';
import { listColumns, octaviaList, onlyFields } from './query.ts';
import {
  serializeLoadBalancer,
  serializeLoadBalancerTree,
  serializeStatusTree,
  sortTags,
  type LoadBalancerRecord,
  type OctaviaBase,
  type ProvisioningStatus,
} from './store.ts';
import { driverError, isProvider, ovnDriver } from './providers.ts';
import { parseBody } from './wsme.ts';

/** A Neutron failure while the driver makes the VIP port: a provider driver error (500) with Neutron's text. */
function fromNeutron<T>(call: OctaviaCall, provider: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof SimHttpError && err.status !== 404) {
      const body = err.body as { NeutronError?: { message?: string } };
      const message = body.NeutronError?.message ?? err.message;
      throw driverError(
        provider,
        `${message}\nNeutron server returns request_ids: ['req-${call.store.random.uuid()}']`,
      );
    }
    throw err;
  }
}

function missing(kind: string, id: string) {
  return octaviaError(400, `${kind} ${id} not found.`);
}

interface Vip {
  port_id: string;
  network_id: string;
  subnet_id: string;
  address: string;
  owned: boolean;
  additional: { subnet_id: string; ip_address: string }[];
}

type Additional = { subnet_id: string; ip_address?: string }[];

/** `additional_vips` (v2.26): a further address per subnet on the same VIP port, e.g. one per IP family. */
function planAdditional(call: OctaviaCall, value: unknown): Additional {
  if (!Array.isArray(value)) return [];
  return (value as Record<string, unknown>[]).map((v) => {
    const subnetId = v.subnet_id as string;
    try {
      findVisible(subnetKind, call.neutron, subnetId);
    } catch {
      throw missing('Subnet', subnetId);
    }
    return { subnet_id: subnetId, ...(typeof v.ip_address === 'string' ? { ip_address: v.ip_address } : {}) };
  });
}

/** Each additional VIP's address: the one asked for, else the port's address on that subnet. */
function placeAdditional(
  additional: Additional,
  fixedIps: readonly { subnet_id: string; ip_address: string }[],
): Vip['additional'] {
  return additional.map((a) => ({
    subnet_id: a.subnet_id,
    ip_address: a.ip_address ?? fixedIps.find((f) => f.subnet_id === a.subnet_id)?.ip_address ?? '',
  }));
}

/** Works out the VIP's network, subnet and port (`_validate_vip_request_object`), before anything is created. */
function planVip(
  call: OctaviaCall,
  attrs: Record<string, unknown>,
): { subnetId: string; portId?: string; address?: string } {
  const n = call.neutron;
  const address = attrs.vip_address as string | undefined;
  if (!attrs.vip_port_id && !attrs.vip_network_id && !attrs.vip_subnet_id) {
    throw validationFailure('VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.');
  }
  const get = <R>(fn: () => R, kind: string, id: string): R => {
    try {
      return fn();
    } catch {
      throw missing(kind, id);
    }
  };
  let subnetId = attrs.vip_subnet_id as string | undefined;
  if (attrs.vip_port_id) {
    const port = get(() => findVisible(portKind, n, attrs.vip_port_id as string), 'Port', attrs.vip_port_id as string);
    if (subnetId) get(() => findVisible(subnetKind, n, subnetId!), 'Subnet', subnetId);
    const fixed = address
      ? port.fixed_ips.find((f) => f.ip_address === address)
      : port.fixed_ips.length === 1
        ? port.fixed_ips[0]
        : undefined;
    if (!subnetId && address && !fixed)
      throw validationFailure('Specified VIP address not found on the specified VIP port.');
    if (!subnetId && !fixed)
      throw validationFailure(
        "VIP port's subnet could not be determined. Please specify either a VIP subnet or address.",
      );
    return {
      subnetId: subnetId ?? fixed!.subnet_id,
      portId: port.id,
      address: fixed?.ip_address ?? port.fixed_ips[0]?.ip_address ?? '',
    };
  }
  if (attrs.vip_network_id) {
    const network = get(
      () => findVisible(networkKind, n, attrs.vip_network_id as string),
      'Network',
      attrs.vip_network_id as string,
    );
    const subnets = [...n.store.subnets.values()].filter((s) => s.network_id === network.id);
    if (subnetId) {
      if (!subnets.some((s) => s.id === subnetId)) throw missing('Subnet', subnetId);
    } else if (address) {
      const ip = parseIp(address);
      subnetId = subnets.find((s) => ip && cidrContains(s.parsed, ip))?.id;
      if (!subnetId) throw validationFailure('Supplied network does not contain a subnet for VIP address specified.');
    } else {
      subnetId = (subnets.find((s) => s.ip_version === 4) ?? subnets[0])?.id;
      if (!subnetId) throw validationFailure('Supplied network does not contain a subnet.');
    }
  }
  get(() => findVisible(subnetKind, n, subnetId!), 'Subnet', subnetId!);
  return { subnetId: subnetId!, ...(address ? { address } : {}) };
}

/**
 * The driver's `create_vip_port`. Amphora: a port of Octavia's own (`octavia-lb-<id>`, down, `device_owner: Octavia`)
 * unless the caller gave one. OVN: always a port of its own, `ovn-lb-vip-<id>`, up, no device owner, one address —
 * also when the caller named a port, whose address is then taken already (Neutron's 409 becomes the driver's 500);
 * it implements no `additional_vips`.
 */
function allocateVip(
  call: OctaviaCall,
  provider: string,
  lbId: string,
  project: string,
  plan: ReturnType<typeof planVip>,
  additional: Additional,
): Vip {
  const n = call.neutron;
  const subnet = n.store.subnets.get(plan.subnetId)!;
  const network = n.store.networks.get(subnet.network_id)!;
  const ovn = provider === 'ovn';
  if (plan.portId && !ovn)
    return {
      port_id: plan.portId,
      network_id: network.id,
      subnet_id: subnet.id,
      address: plan.address ?? '',
      owned: false,
      additional: placeAdditional(additional, n.store.ports.get(plan.portId)?.fixed_ips ?? []),
    };
  if (!ovn && !network.port_security_enabled)
    throw octaviaError(500, "Provider 'amphora' reports error: Port security must be enabled on the VIP network.");
  const port = fromNeutron(call, ovn ? 'ovn' : 'amphora', () =>
    createPort(n, {
      network,
      project,
      ...(ovn
        ? { name: `ovn-lb-vip-${lbId}`, deviceOwner: '', deviceId: '', adminStateUp: true }
        : { name: `octavia-lb-${lbId}`, deviceOwner: 'Octavia', deviceId: `lb-${lbId}`, adminStateUp: false }),
      fixedIps: [
        { subnet_id: subnet.id, ...(plan.address ? { ip_address: plan.address } : {}) },
        ...(ovn ? [] : additional),
      ],
    }),
  );
  return {
    port_id: port.id,
    network_id: network.id,
    subnet_id: subnet.id,
    address: port.fixed_ips[0]!.ip_address,
    owned: !ovn,
    additional: ovn ? [] : placeAdditional(additional, port.fixed_ips),
  };
}

/**
 * The OVN driver's `loadbalancer_create` walks a fully populated tree: every listener, then each pool and its
 * members, refusing as for single creates — except that members are given the VIP network as subnet, so only their
 * monitor options are checked.
 */
function checkOvnGraph(graph: Graph): void {
  for (const l of graph.listeners) ovnDriver.listener(l.protocol, l.extra.allowed_cidrs);
  for (const p of graph.pools) {
    ovnDriver.protocol(p.protocol);
    ovnDriver.algorithm(p.lb_algorithm);
    for (const m of graph.members) if (m.pool_id === p.id) ovnDriver.monitorOptions(m);
  }
}

function setStatus(call: OctaviaCall, o: OctaviaBase, provisioning: ProvisioningStatus, operating?: string): void {
  o.provisioning_status = provisioning;
  if (operating) o.operating_status = operating;
  call.store.touch(o);
}

/**
 * The OVN driver's status reports for a fully populated tree: listeners ACTIVE and ONLINE (OFFLINE when disabled),
 * pools ACTIVE and ONLINE once they have a member or a listener, members ACTIVE. It is never told of a health monitor
 * in the tree, which stays PENDING_CREATE.
 */
function ovnGraphDone(call: OctaviaCall, lb: LoadBalancerRecord): void {
  const s = call.store;
  for (const l of s.listenersOf(lb.id)) setStatus(call, l, 'ACTIVE', l.admin_state_up ? 'ONLINE' : 'OFFLINE');
  for (const p of s.poolsOf(lb.id)) {
    const members = s.membersOf(p.id);
    const used = members.length > 0 || s.listenersOfPool(p.id).length > 0;
    setStatus(call, p, 'ACTIVE', used ? 'ONLINE' : 'OFFLINE');
    for (const m of members) setStatus(call, m, 'ACTIVE');
  }
}

export const loadbalancers = {
  list(call: OctaviaCall) {
    const records = [...call.store.loadbalancers.values()].filter((lb) => visible(call, lb));
    const body = octaviaList({
      call,
      records,
      columns: listColumns.loadbalancer,
      serialize: (lb) => serializeLoadBalancer(call.store, lb),
      plural: 'loadbalancers',
      href: `${call.href}/lbaas/loadbalancers`,
      all: call.store.loadbalancers,
    });
    return { status: 200, body };
  },

  get(call: OctaviaCall, id: string) {
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    return { status: 200, body: { loadbalancer: onlyFields(serializeLoadBalancer(call.store, lb), call.query) } };
  },

  create(call: OctaviaCall) {
    const attrs = parseBody(call.body, bodies.loadBalancerPost);
    const project =
      (attrs.project_id as string | undefined) ?? (attrs.tenant_id as string | undefined) ?? call.ctx.projectId;
    if (!project)
      throw validationFailure(
        'Missing project ID in request where one is required. An administrator should check the keystone settings in the Octavia configuration.',
      );
    if (!call.noauth && !call.ctx.isAdmin && project !== call.ctx.projectId) throw policyForbidden();
    const plan = planVip(call, attrs);
    const additional = planAdditional(call, attrs.additional_vips);
    // No flavor exists in this deployment (the real one has none either).
    if (attrs.flavor_id)
      throw octaviaError(400, `The selected flavor is not allowed in this deployment: ${attrs.flavor_id as string}`);
    if (attrs.availability_zone) throw validationFailure('Invalid availability zone.');
    // Absent: the configured default; an explicit null: `amphora` (`driver_factory.get_driver`).
    const provider =
      attrs.provider === undefined ? call.defaultProvider : ((attrs.provider as string | null) ?? 'amphora');
    if (!isProvider(provider)) throw octaviaError(400, `Provider '${provider}' is not enabled.`);
    const base = call.store.base(project, attrs);
    checkTags(base.id, attrs.tags);
    const vip = allocateVip(call, provider, base.id, project, plan, additional);
    const lb: LoadBalancerRecord = {
      ...base,
      vip_address: vip.address,
      vip_port_id: vip.port_id,
      vip_subnet_id: vip.subnet_id,
      vip_network_id: vip.network_id,
      additional_vips: vip.additional,
      octaviaOwnedPort: vip.owned,
      provider,
    };
    const listeners = (attrs.listeners as Record<string, unknown>[] | null | undefined) ?? [];
    const pools = (attrs.pools as Record<string, unknown>[] | null | undefined) ?? [];
    const graphed = listeners.length > 0 || pools.length > 0;
    if (graphed) {
      call.store.loadbalancers.set(lb.id, lb);
      try {
        const graph = buildGraph(call, lb, listeners, pools);
        if (provider === 'ovn') checkOvnGraph(graph);
        commitGraph(call, graph);
      } catch (err) {
        // The transaction rolls back; the VIP port the driver made in Neutron stays (unless the sim cleans up).
        call.store.loadbalancers.delete(lb.id);
        const made = vip.owned || provider === 'ovn';
        const port = made && !call.leaksVipPort ? call.neutron.store.ports.get(vip.port_id) : undefined;
        if (port) removePort(call.neutron.store, port);
        throw err;
      }
    }
    call.store.loadbalancers.set(lb.id, lb);
    call.onNewLoadBalancer(lb.id);
    const body = { loadbalancer: serializeLoadBalancerTree(call.store, lb) };
    // The worker marks the load balancer (only it) ACTIVE; the noop provider never answers. The OVN driver also
    // reports ONLINE, and a fully populated tree's children as it makes them.
    if (provider === 'amphora') {
      call.provisioner.schedule(lb.id, () => {
        lb.provisioning_status = 'ACTIVE';
        call.store.touch(lb);
      });
    } else if (provider === 'ovn') {
      call.provisioner.schedule(lb.id, () => {
        setStatus(call, lb, 'ACTIVE', lb.admin_state_up ? 'ONLINE' : 'OFFLINE');
        if (graphed) ovnGraphDone(call, lb);
      });
    }
    return { status: 201, body };
  },

  update(call: OctaviaCall, id: string) {
    const attrs = parseBody(call.body, bodies.loadBalancerPut);
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    checkLbMutable(lb);
    checkTags(lb.id, attrs.tags);
    if (attrs.name !== undefined) lb.name = attrs.name as string | null;
    if (attrs.description !== undefined) lb.description = attrs.description as string | null;
    if (attrs.admin_state_up !== undefined) lb.admin_state_up = (attrs.admin_state_up as boolean | null) ?? true;
    if (attrs.tags !== undefined) lb.tags = sortTags((attrs.tags as string[] | null) ?? []);
    lb.provisioning_status = 'PENDING_UPDATE';
    call.store.touch(lb);
    const body = { loadbalancer: serializeLoadBalancer(call.store, lb) };
    call.provisioner.schedule(lb.id, () => {
      lb.provisioning_status = 'ACTIVE';
      // The OVN driver reports the operating status when the update carried admin_state_up.
      if (lb.provider === 'ovn' && attrs.admin_state_up !== undefined)
        lb.operating_status = lb.admin_state_up ? 'ONLINE' : 'OFFLINE';
      call.store.touch(lb);
    });
    return { status: 200, body };
  },

  delete(call: OctaviaCall, id: string) {
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    const cascade = ['1', 't', 'true', 'on', 'y', 'yes'].includes((call.query.get('cascade') ?? '').toLowerCase());
    const { store } = call;
    const listeners = store.listenersOf(id);
    const pools = store.poolsOf(id);
    if ((listeners.length > 0 || pools.length > 0) && !cascade)
      throw validationFailure(`Cannot delete Load Balancer ${id} - it has children`);
    checkLbMutable(lb, true);
    lb.provisioning_status = 'PENDING_DELETE';
    store.touch(lb);
    call.provisioner.schedule(id, () => {
      for (const p of pools) {
        const hm = store.monitorOf(p.id);
        if (hm) store.healthmonitors.delete(hm.id);
        for (const m of store.membersOf(p.id)) store.members.delete(m.id);
        store.pools.delete(p.id);
      }
      for (const l of listeners) store.listeners.delete(l.id);
      store.loadbalancers.delete(id);
      // The OVN driver deletes the VIP port it made itself.
      const port = call.neutron.store.ports.get(lb.vip_port_id);
      if (port && (lb.provider === 'ovn' || (lb.octaviaOwnedPort && !call.leaksVipPort)))
        removePort(call.neutron.store, port);
    });
    return { status: 204 };
  },

  /** `GET /loadbalancers/{id}/status` (or `/statuses`): the status tree. */
  status(call: OctaviaCall, id: string) {
    return {
      status: 200,
      body: serializeStatusTree(call.store, findObject(call, call.store.loadbalancers, id, 'Load Balancer')),
    };
  },

  stats(call: OctaviaCall, id: string) {
    findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    return {
      status: 200,
      body: { stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } },
    };
  },
};
