import { isObject, neutronError, type SimHttpError } from '../http.ts';
import {
  createOnly,
  isUuidLike,
  parseResourceBody,
  readOnly,
  rw,
  stdSpecs,
  toInt,
  updateAttributes,
  type AttrSpecs,
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
} from './common.ts';
import { nerr, pyRepr, pyStr } from './errors.ts';
import { portKind } from './ports.ts';
import type { Item } from './query.ts';
import type { NeutronStore, PortRecord, SubPortRecord, TrunkRecord } from './store.ts';
import { subPorts, trunkOfParent, trunkOfSubport } from './trunk-ports.ts';

/**
 * The `trunk` and `trunk-details` extensions as Zed's trunk service plugin (`neutron/services/trunk`: plugin.py,
 * rules.py) answers them, measured on real Neutron (test/contract/openstack/neutron-trunks.test.ts):
 *
 * - a parent port must not be a subport (409 TrunkPortInUse) nor another trunk's parent (409 ParentPortInUse); a
 *   bound one only where the trunk driver can trunk bound ports (OVN: vif types ovs/vhostuser; the inert driver
 *   driver: only on a host whose agent runs, so never here) — else 409 ParentPortInUse;
 * - a subport must not be the parent (ParentPortInUse), have a bigger MTU than the parent's network (409), lack or
 *   mistype its segmentation (400 InvalidInput; only `vlan`, 1–4094), be on a trunk already (TrunkPortInUse), be a
 *   parent (ParentPortInUse) or have a `device_id` (409 PortInUse); a VLAN id taken on the trunk is 409
 *   DuplicateSubPort, twice in one request 400. Every check passes before anything changes;
 * - `add_subports`/`remove_subports` answer the trunk bare (no `trunk` key); a body without `sub_ports` is a 500;
 *   removing a port that is not a subport is 404 SubPortNotFound; on a disabled trunk (admin_state_up false) both,
 *   and the delete, are 409 TrunkDisabled (after the subports' own checks, for an add);
 * - a trunk is deleted with its subports; a port that is a parent or a subport cannot be deleted (409
 *   PortInUseAsTrunkParent / PortInUseAsSubPort); a trunk whose parent the driver cannot untrunk (bound, inert driver)
 *   cannot be deleted (409 TrunkInUse);
 * - the plugin itself sets status DOWN on every change; the driver does the rest. OVN makes the trunk ACTIVE and each
 *   subport's port `device_owner: trunk:subport`, status = the parent's, vif type ovs, `binding:profile`
 *   `{parent_name, tag}` (removal undoes it: owner '', DOWN, unbound); the inert driver (the rig's, or OVS's without
 *   an agent) changes nothing (the trunk stays DOWN, the ports as they were). `device_id` is never set.
 */

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string', { maxLen: 255 }),
  admin_state_up: rw('boolean'),
  port_id: createOnly('string', {
    required: true,
    validate: (v) => (isUuidLike(v) ? undefined : `'${pyStr(v)}' is not a valid UUID`),
  }),
  status: readOnly('string'),
  sub_ports: createOnly('any', { validate: subportsProblem }),
};

const order = [
  'admin_state_up',
  'id',
  'project_id',
  'name',
  'port_id',
  'status',
  'sub_ports',
  'revision_number',
  'description',
  'created_at',
  'updated_at',
  'tenant_id',
  'tags',
];

const vlanType = 'vlan';

function serialize(t: TrunkRecord): Item {
  return ordered({ ...t, tenant_id: t.project_id, sub_ports: subPorts(t), tags: [...t.tags].sort() }, order);
}

export const trunkKind: Kind<TrunkRecord> = {
  singular: 'trunk',
  plural: 'trunks',
  path: 'trunks',
  quota: 'trunk',
  map: (store) => store.trunks,
  notFound: (id) => nerr.notFound('TrunkNotFound', 'Trunk', id),
  serialize,
  // status and sub_ports are not filters.
  attributes: order.filter((k) => k !== 'status' && k !== 'sub_ports'),
  filterTypes: { admin_state_up: 'boolean' },
};

const inUse = (type: string, message: string): SimHttpError => neutronError(409, type, message);
const parentPortInUse = (portId: string) =>
  inUse('ParentPortInUse', `Port ${portId} is currently in use and is not eligible for use as a parent port.`);

/**
 * neutron-lib's `validate_subports`, the API's check of a `sub_ports` list: the reason, or undefined. (It stops at the
 * first `inherit` subport: what follows it goes unchecked here.)
 */
function subportsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return `Invalid data format for subports: '${pyStr(value)}' is not a list`;
  const ids = new Set<string>();
  const segmentations = new Map<unknown, unknown[]>();
  for (const s of value as unknown[]) {
    if (!isObject(s)) return `Invalid data format for subport: '${pyStr(s)}' is not a dict`;
    if (!('port_id' in s)) return 'A valid port UUID must be specified';
    if (!isUuidLike(s.port_id)) return `Invalid UUID for subport: '${pyStr(s.port_id)}'`;
    if (ids.has(s.port_id)) return `Non unique UUID for subport: '${s.port_id}'`;
    ids.add(s.port_id);
    const type = s.segmentation_type;
    if (type === 'inherit') return undefined;
    const id = s.segmentation_id;
    if ((!type || id === undefined || id === null) && Object.keys(s).length > 1)
      return `Invalid subport details '${pyRepr(s)}': missing segmentation information. Must specify both segmentation_id and segmentation_type`;
    if (segmentations.get(type)?.includes(id)) return `Segmentation ID '${pyStr(id)}' for '${s.port_id}' is not unique`;
    if (id !== undefined && id !== null) segmentations.set(type, [...(segmentations.get(type) ?? []), id]);
  }
  return undefined;
}

/** `TrunkPortValidator.can_be_trunked_or_untrunked`: an unbound port always; a bound one as the driver says. */
function canBeTrunked(call: NeutronCall, port: PortRecord): boolean {
  if (port.host_id === '') return true;
  return call.trunkDriver === 'ovn' && (port.vif_type === 'ovs' || port.vif_type === 'vhostuser');
}

/** `TrunkPortValidator.validate`: the port may become a parent (or, `parent` false, a subport). */
function validateTrunkPort(call: NeutronCall, portId: string, parent: boolean): PortRecord {
  if (trunkOfSubport(call.store, portId)) throw inUse('TrunkPortInUse', `Port ${portId} is in use by another trunk.`);
  if (trunkOfParent(call.store, portId)) throw parentPortInUse(portId);
  const port = findVisible(portKind, call, portId);
  if (parent && !canBeTrunked(call, port)) throw parentPortInUse(portId);
  if (!parent && port.device_id !== '')
    throw inUse(
      'PortInUse',
      `Unable to complete operation on port ${port.id} for network ${port.network_id}. Port already has an attached device ${port.device_id}.`,
    );
  return port;
}

function mtuOf(store: NeutronStore, portId: string): number | undefined {
  const port = store.ports.get(portId);
  return port && store.networks.get(port.network_id)?.mtu;
}

/** `SubPortsValidator.validate` with trunk validation: the subports as they will be stored. */
function validateSubports(call: NeutronCall, parentId: string, given: Record<string, unknown>[]): SubPortRecord[] {
  const parentMtu = mtuOf(call.store, parentId);
  return given.map((raw) => {
    let s = raw;
    const portId = s.port_id as string;
    if (s.segmentation_type === 'inherit') {
      // The segmentation of the subport's network (a missing port keeps the request as it is).
      const port = call.store.ports.get(portId);
      const network = port && call.store.networks.get(port.network_id);
      if (network)
        s = { port_id: portId, segmentation_id: network.segmentation_id, segmentation_type: network.network_type };
    }
    if (portId === parentId) throw parentPortInUse(portId);
    const mtu = mtuOf(call.store, portId);
    if (parentMtu !== undefined && mtu !== undefined && mtu > parentMtu)
      // Neutron names the parent port where the message says trunk.
      throw neutronError(
        409,
        'SubPortMtuGreaterThanTrunkPortMtu',
        `MTU ${mtu} of subport ${portId} cannot be greater than MTU ${parentMtu} of trunk ${parentId}.`,
      );
    if (!('segmentation_type' in s) || !('segmentation_id' in s))
      throw nerr.invalidInput(
        `Invalid subport details '${pyRepr(s)}': missing segmentation information. Must specify both segmentation_id and segmentation_type`,
      );
    let segmentationId: number;
    try {
      segmentationId = toInt(s.segmentation_id);
    } catch {
      throw nerr.invalidInput(
        `Invalid subport details: segmentation_id '${pyStr(s.segmentation_id)}' is not an integer`,
      );
    }
    const type = s.segmentation_type;
    if (type !== vlanType) throw nerr.invalidInput(`Unknown segmentation_type '${pyStr(type)}'`);
    if (segmentationId < 1 || segmentationId > 4094)
      throw nerr.invalidInput(`Segmentation ID '${segmentationId}' is not in range`);
    validateTrunkPort(call, portId, false);
    return { port_id: portId, segmentation_type: type, segmentation_id: segmentationId };
  });
}

/** `trunk_can_be_managed`. */
function checkEnabled(t: TrunkRecord): void {
  if (!t.admin_state_up) throw inUse('TrunkDisabled', `Trunk ${t.id} is currently disabled.`);
}

/** The OVN driver wires a subport: the parent and VLAN in its binding profile, the parent's status. */
function wire(call: NeutronCall, t: TrunkRecord, subs: SubPortRecord[]): void {
  const parentStatus = call.store.ports.get(t.port_id)?.status ?? 'DOWN';
  for (const s of subs) {
    const port = call.store.ports.get(s.port_id);
    if (!port) continue;
    Object.assign(port, {
      device_owner: 'trunk:subport',
      status: parentStatus,
      vif_type: 'ovs',
      profile: { ...port.profile, parent_name: t.port_id, tag: s.segmentation_id },
    });
    call.store.touch(port);
  }
}

/** The OVN driver unwires a subport: owner cleared, unbound, DOWN. */
function unwire(call: NeutronCall, subs: SubPortRecord[]): void {
  for (const s of subs) {
    const port = call.store.ports.get(s.port_id);
    if (!port) continue;
    const { parent_name: _parent, tag: _tag, ...profile } = port.profile;
    Object.assign(port, { device_owner: '', status: 'DOWN', vif_type: 'unbound', vif_details: {}, profile });
    call.store.touch(port);
  }
}

/** After the plugin's change (status DOWN, one revision): OVN's driver makes the trunk ACTIVE (one more). */
function settle(call: NeutronCall, t: TrunkRecord): void {
  t.status = 'DOWN';
  call.store.touch(t);
  if (call.trunkDriver === 'ovn') {
    t.status = 'ACTIVE';
    call.store.touch(t);
  }
}

/** `{"sub_ports": [...]}` of an add/remove: a body without the key is a KeyError in the plugin (500). */
function subportsBody(call: NeutronCall): Record<string, unknown>[] {
  if (!isObject(call.body) || !('sub_ports' in call.body))
    throw neutronError(
      500,
      'HTTPInternalServerError',
      'Request Failed: internal server error while processing your request.',
    );
  const problem = subportsProblem(call.body.sub_ports);
  if (problem) throw nerr.invalidInput(problem);
  return call.body.sub_ports as Record<string, unknown>[];
}

export const trunks = {
  create(call: NeutronCall): { status: number; body: Item } {
    const attrs = parseResourceBody(call.body, 'trunk', 'trunks', specs, 'POST', false).items[0]!;
    const project = targetProject(call, attrs);
    checkQuota(call.store, project, 'trunk');
    const parentId = attrs.port_id as string;
    validateTrunkPort(call, parentId, true);
    const subs = validateSubports(call, parentId, (attrs.sub_ports as Record<string, unknown>[] | undefined) ?? []);
    const t: TrunkRecord = {
      ...call.store.std(project, (attrs.description as string | undefined) ?? '', 0),
      name: (attrs.name as string | undefined) ?? '',
      admin_state_up: (attrs.admin_state_up as boolean | undefined) ?? true,
      status: 'DOWN',
      port_id: parentId,
      sub_ports: subs,
    };
    call.store.trunks.set(t.id, t);
    if (call.trunkDriver === 'ovn') {
      wire(call, t, subs);
      t.status = 'ACTIVE';
      call.store.touch(t);
    }
    return { status: 201, body: { trunk: serialize(t) } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'trunk', 'trunks', specs, 'PUT');
    const t = findOwned(trunkKind, call, id, 'update');
    const attrs = updateAttributes(items, 'trunk');
    checkRevision(call, t);
    if (attrs.name !== undefined) t.name = attrs.name as string;
    if (attrs.description !== undefined) t.description = attrs.description as string;
    if (attrs.admin_state_up !== undefined) t.admin_state_up = attrs.admin_state_up as boolean;
    call.store.touch(t);
    return { status: 200, body: { trunk: serialize(t) } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const t = findOwned(trunkKind, call, id, 'delete');
    checkRevision(call, t);
    checkEnabled(t);
    const parent = call.store.ports.get(t.port_id);
    if (parent && !canBeTrunked(call, parent)) throw inUse('TrunkInUse', `Trunk ${id} is currently in use.`);
    call.store.trunks.delete(id);
    if (call.trunkDriver === 'ovn') unwire(call, t.sub_ports);
    return { status: 204 };
  },

  addSubports(call: NeutronCall, id: string): { status: number; body: Item } {
    const t = findOwned(trunkKind, call, id, 'update');
    const subs = validateSubports(call, t.port_id, subportsBody(call));
    checkEnabled(t);
    if (t.status === 'ERROR')
      throw inUse(
        'TrunkInErrorState',
        `Trunk ${id} is in error state. Attempt to resolve the error condition before proceeding.`,
      );
    for (const s of subs) {
      if (
        t.sub_ports.some((o) => o.segmentation_type === s.segmentation_type && o.segmentation_id === s.segmentation_id)
      )
        throw inUse(
          'DuplicateSubPort',
          `segmentation_type ${s.segmentation_type} and segmentation_id ${s.segmentation_id} already in use on trunk ${id}.`,
        );
    }
    t.sub_ports.push(...subs);
    settle(call, t);
    if (call.trunkDriver === 'ovn') wire(call, t, subs);
    return { status: 200, body: serialize(t) };
  },

  removeSubports(call: NeutronCall, id: string): { status: number; body: Item } {
    const t = findOwned(trunkKind, call, id, 'update');
    checkEnabled(t);
    const gone = subportsBody(call).map((s) => {
      const sub = t.sub_ports.find((o) => o.port_id === s.port_id);
      if (!sub)
        throw neutronError(404, 'SubPortNotFound', `SubPort ${pyStr(s.port_id)} on trunk ${id} could not be found.`);
      return sub;
    });
    t.sub_ports = t.sub_ports.filter((s) => !gone.includes(s));
    settle(call, t);
    if (call.trunkDriver === 'ovn') unwire(call, gone);
    return { status: 200, body: serialize(t) };
  },

  getSubports(call: NeutronCall, id: string): { status: number; body: Item } {
    return { status: 200, body: { sub_ports: subPorts(findVisible(trunkKind, call, id)) } };
  },
};
