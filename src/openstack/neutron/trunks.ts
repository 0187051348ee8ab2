import { seg, type CallOptions, type StandardFilters } from './query.ts';
import { badResponse, ResourceApi, type NeutronTransport, type StandardAttributes } from './resource.ts';

/** One subport of a trunk: a port and the VLAN it is reached on through the parent. */
export interface SubPort {
  port_id: string;
  /** `vlan` (the only type Zed's trunk drivers take). */
  segmentation_type: string;
  /** The VLAN id, 1–4094, unique on its trunk. */
  segmentation_id: number;
}

/**
 * A Neutron trunk (the `trunk` service plugin): a parent port and its subports. `status` is the driver's: `DOWN`
 * after every change until the driver wires it (ML2/OVN: `ACTIVE` at once, with or without a bound parent; the OVS
 * agent's driver: `BUILD`, then `ACTIVE`, `DEGRADED` or `ERROR` once its agent has done it). Never a readiness signal
 * for a pod (docs/openstack.md, "Trunks").
 */
export interface Trunk extends StandardAttributes {
  admin_state_up: boolean;
  status: 'DOWN' | 'ACTIVE' | 'BUILD' | 'DEGRADED' | 'ERROR' | (string & {});
  /** The parent port. */
  port_id: string;
  sub_ports: SubPort[];
}

/** A trunk to create: the parent must be no trunk's port (parent or subport), and unbound unless the driver is OVN. */
export interface TrunkCreate {
  port_id: string;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  sub_ports?: SubPort[];
  /** Admin only: create it in another project. */
  project_id?: string;
}

/** What a trunk update may change (the parent and subports have their own calls). */
export interface TrunkUpdate {
  name?: string;
  description?: string;
  /** false: subports can be neither added nor removed, nor the trunk deleted (409 `TrunkDisabled`). */
  admin_state_up?: boolean;
}

/** Filters a trunk list takes (`status` and `sub_ports` are not filters: 400). */
export interface TrunkFilters extends StandardFilters {
  port_id?: string | readonly string[];
  admin_state_up?: boolean;
}

/**
 * `/v2.0/trunks`. Adding and removing subports are PUTs that are not idempotent (the same subport again is 409
 * `TrunkPortInUse`, a removed one 404 `SubPortNotFound`), so the transport never retries them; a caller that lost
 * the answer reads the trunk back. Trunk rules reject with their own stable codes (`OPENSTACK_TRUNK_VLAN_TAKEN` for
 * a VLAN id already on the trunk, `OPENSTACK_TRUNK_PORT_IN_USE`, `OPENSTACK_TRUNK_PARENT_IN_USE`,
 * `OPENSTACK_TRUNK_DISABLED`, `OPENSTACK_TRUNK_IN_USE` …); bad segmentation is 400 `InvalidInput`.
 *
 * @example
 * const trunk = await neutron.trunks.create({ port_id: vmPort.id, name: `raven/${cluster}/${node}` }, { signal });
 * await neutron.trunks.addSubports(trunk.id, [{ port_id: pod.id, segmentation_type: 'vlan', segmentation_id: 101 }]);
 */
export class TrunksApi extends ResourceApi<Trunk, TrunkCreate, TrunkUpdate, TrunkFilters> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'trunk', plural: 'trunks', path: 'trunks' });
  }

  /**
   * Adds subports; all or none (each is checked before any is added). Resolves with the trunk as it now is (Neutron
   * answers it without the `trunk` key).
   */
  addSubports(trunkId: string, subPorts: readonly SubPort[], options: CallOptions = {}): Promise<Trunk> {
    return this.#change('add_subports', trunkId, subPorts, options);
  }

  /** Removes subports by port id; all or none: one that is not on the trunk is 404 `SubPortNotFound`. */
  removeSubports(trunkId: string, portIds: readonly string[], options: CallOptions = {}): Promise<Trunk> {
    return this.#change(
      'remove_subports',
      trunkId,
      portIds.map((port_id) => ({ port_id })),
      options,
    );
  }

  /** The trunk's subports (404 `TrunkNotFound` when there is no such trunk). */
  async getSubports(trunkId: string, options: CallOptions = {}): Promise<SubPort[]> {
    const path = `/trunks/${seg(trunkId)}/get_subports`;
    const res = await this.transport.send<{ sub_ports?: unknown } | undefined>('GET', path, options);
    const list = res.body?.sub_ports;
    if (!Array.isArray(list)) throw badResponse(res, 'GET', path, 'no "sub_ports" list in the answer');
    return list as SubPort[];
  }

  async #change(action: string, trunkId: string, subPorts: readonly object[], options: CallOptions): Promise<Trunk> {
    const path = `/trunks/${seg(trunkId)}/${action}`;
    const res = await this.transport.send<Trunk | undefined>('PUT', path, {
      body: { sub_ports: subPorts },
      idempotent: false,
      ...options,
    });
    if (!res.body || typeof res.body !== 'object' || !Array.isArray(res.body.sub_ports))
      throw badResponse(res, 'PUT', path, 'no trunk in the answer');
    return res.body;
  }
}
