import { octaviaError, SimHttpError } from '../http.ts';
import { findVisible } from '../neutron/common.ts';
import { parseIp, cidrContains } from '../neutron/ip.ts';
import { networkKind } from '../neutron/networks.ts';
import { createPort, portKind, removePort } from '../neutron/ports.ts';
import { subnetKind } from '../neutron/subnets.ts';
import { checkLbMutable, findObject, parseObject, t, validationFailure, visible, type OctaviaCall } from './common.ts';
import { buildGraph, type Graph } from './graph.ts';
import { octaviaList } from './query.ts';
import { serializeListener, serializeLoadBalancer, serializeMember, serializeMonitor, serializePool, type LoadBalancerRecord } from './store.ts';

const createFields = {
  name: t.str, description: t.str, admin_state_up: t.bool, project_id: t.str, tenant_id: t.str, vip_address: t.str, vip_port_id: t.str,
  vip_subnet_id: t.str, vip_network_id: t.str, vip_qos_policy_id: t.strOrNull, provider: t.oneOf('amphora', 'octavia'), flavor_id: t.strOrNull,
  availability_zone: t.strOrNull, tags: t.tags, listeners: t.any, pools: t.any, additional_vips: t.any,
};
const updateFields = { name: t.str, description: t.str, admin_state_up: t.bool, vip_qos_policy_id: t.strOrNull, tags: t.tags };

/** Neutron's errors reach the Octavia caller with Neutron's status and message (AllocateVIPException's orig_code/msg). */
function fromNeutron<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof SimHttpError && err.status !== 404) {
      const body = err.body as { NeutronError?: { message?: string } };
      throw octaviaError(err.status, body.NeutronError?.message ?? err.message);
    }
    throw err;
  }
}

function missing(kind: string, id: string) {
  return octaviaError(400, `${kind} ${id} not found.`);
}

/** Works out the VIP's network, subnet and port (`_validate_vip_request_object`), creating the port when needed. */
function allocateVip(call: OctaviaCall, lbId: string, project: string, attrs: Record<string, unknown>) {
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
    const fixed = address ? port.fixed_ips.find((f) => f.ip_address === address) : port.fixed_ips.length === 1 ? port.fixed_ips[0] : undefined;
    if (!subnetId && address && !fixed) throw validationFailure('Specified VIP address not found on the specified VIP port.');
    if (!subnetId && !fixed) throw validationFailure("VIP port's subnet could not be determined. Please specify either a VIP subnet or address.");
    return { port_id: port.id, network_id: port.network_id, subnet_id: subnetId ?? fixed!.subnet_id, address: fixed?.ip_address ?? port.fixed_ips[0]?.ip_address ?? '', owned: false };
  }
  if (attrs.vip_network_id) {
    const network = get(() => findVisible(networkKind, n, attrs.vip_network_id as string), 'Network', attrs.vip_network_id as string);
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
  const subnet = get(() => findVisible(subnetKind, n, subnetId!), 'Subnet', subnetId!);
  const network = n.store.networks.get(subnet.network_id)!;
  const port = fromNeutron(() =>
    createPort(n, {
      network, project, name: `octavia-lb-${lbId}`, deviceOwner: 'Octavia', deviceId: `lb-${lbId}`, adminStateUp: false,
      fixedIps: [{ subnet_id: subnet.id, ...(address ? { ip_address: address } : {}) }],
    }),
  );
  return { port_id: port.id, network_id: network.id, subnet_id: subnet.id, address: port.fixed_ips[0]!.ip_address, owned: true };
}

function fullView(call: OctaviaCall, lb: LoadBalancerRecord, graph: Graph | undefined): Record<string, unknown> {
  const body = serializeLoadBalancer(call.store, lb);
  if (graph) {
    body.listeners = graph.listeners.map((l) => serializeListener(call.store, l));
    body.pools = graph.pools.map((p) => {
      const hm = call.store.monitorOf(p.id);
      return { ...serializePool(call.store, p), members: call.store.membersOf(p.id).map(serializeMember), healthmonitor: hm ? serializeMonitor(hm) : null };
    });
  }
  return body;
}

export const loadbalancers = {
  list(call: OctaviaCall) {
    const items = [...call.store.loadbalancers.values()].filter((lb) => visible(call, lb)).map((lb) => serializeLoadBalancer(call.store, lb));
    return { status: 200, body: octaviaList(items, 'loadbalancers', `${call.href}/lbaas/loadbalancers`, call.query) };
  },

  get(call: OctaviaCall, id: string) {
    return { status: 200, body: { loadbalancer: serializeLoadBalancer(call.store, findObject(call, call.store.loadbalancers, id, 'Load Balancer')) } };
  },

  create(call: OctaviaCall) {
    const attrs = parseObject(call.body, 'loadbalancer', createFields, []);
    const project = (attrs.project_id as string | undefined) ?? (attrs.tenant_id as string | undefined) ?? call.ctx.projectId;
    if (!project) throw validationFailure('Missing project ID in request where one is required.');
    if (!call.noauth && !call.ctx.isAdmin && project !== call.ctx.projectId) throw octaviaError(403, 'Policy does not allow this request to be performed.');
    const base = call.store.base(project, attrs);
    // The graph is checked before the VIP port exists: a bad request must leave nothing in Neutron.
    const plan = buildGraph(call, base.id, project, attrs.listeners, attrs.pools);
    const vip = allocateVip(call, base.id, project, attrs);
    const lb: LoadBalancerRecord = { ...base, vip_address: vip.address, vip_port_id: vip.port_id, vip_subnet_id: vip.subnet_id, vip_network_id: vip.network_id, octaviaOwnedPort: vip.owned };
    call.store.loadbalancers.set(lb.id, lb);
    const graph = plan?.commit();
    call.onNewLoadBalancer(lb.id);
    const body = { loadbalancer: fullView(call, lb, graph) };
    call.provisioner.schedule(lb.id, () => {
      lb.provisioning_status = 'ACTIVE';
      for (const o of [...(graph?.listeners ?? []), ...(graph?.pools ?? []), ...(graph?.members ?? []), ...(graph?.monitors ?? [])]) o.provisioning_status = 'ACTIVE';
    });
    return { status: 201, body };
  },

  update(call: OctaviaCall, id: string) {
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    const attrs = parseObject(call.body, 'loadbalancer', updateFields, []);
    checkLbMutable(lb);
    if (attrs.name !== undefined) lb.name = attrs.name as string;
    if (attrs.description !== undefined) lb.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) lb.admin_state_up = attrs.admin_state_up as boolean;
    if (attrs.tags !== undefined) lb.tags = [...(attrs.tags as string[])];
    lb.provisioning_status = 'PENDING_UPDATE';
    call.store.touch(lb);
    const body = { loadbalancer: serializeLoadBalancer(call.store, lb) };
    call.provisioner.schedule(lb.id, () => (lb.provisioning_status = 'ACTIVE'));
    return { status: 200, body };
  },

  delete(call: OctaviaCall, id: string) {
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    const cascade = (call.query.get('cascade') ?? '').toLowerCase() === 'true';
    const { store } = call;
    const listeners = store.listenersOf(id);
    const pools = store.poolsOf(id);
    if ((listeners.length > 0 || pools.length > 0) && !cascade) throw validationFailure(`Cannot delete Load Balancer ${id} - it has children`);
    checkLbMutable(lb);
    const members = pools.flatMap((p) => store.membersOf(p.id));
    const monitors = pools.flatMap((p) => store.monitorOf(p.id) ?? []);
    for (const o of [lb, ...listeners, ...pools, ...members, ...monitors]) o.provisioning_status = 'PENDING_DELETE';
    call.provisioner.schedule(id, () => {
      for (const m of monitors) store.healthmonitors.delete(m.id);
      for (const m of members) store.members.delete(m.id);
      for (const p of pools) store.pools.delete(p.id);
      for (const l of listeners) store.listeners.delete(l.id);
      store.loadbalancers.delete(id);
      const port = call.neutron.store.ports.get(lb.vip_port_id);
      if (port && lb.octaviaOwnedPort && !call.leaksVipPort) removePort(call.neutron.store, port);
    });
    return { status: 204 };
  },

  /** `GET /loadbalancers/{id}/status`: the status tree. */
  status(call: OctaviaCall, id: string) {
    const lb = findObject(call, call.store.loadbalancers, id, 'Load Balancer');
    const s = call.store;
    const st = (o: { id: string; name: string; operating_status: string; provisioning_status: string }) => ({ id: o.id, name: o.name, operating_status: o.operating_status, provisioning_status: o.provisioning_status });
    const pool = (pid: string) => {
      const p = s.pools.get(pid)!;
      const hm = s.monitorOf(pid);
      return { ...st(p), members: s.membersOf(pid).map((m) => ({ ...st(m), address: m.address, protocol_port: m.protocol_port })), ...(hm ? { health_monitor: { ...st(hm), type: hm.type } } : {}) };
    };
    const listeners = s.listenersOf(id).map((l) => ({ ...st(l), pools: l.default_pool_id ? [pool(l.default_pool_id)] : [] }));
    return { status: 200, body: { statuses: { loadbalancer: { ...st(lb), listeners } } } };
  },
};
