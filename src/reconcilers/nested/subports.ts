import { RetryableError } from '../../controller/index.ts';
import { OpenStackError, type NeutronClient, type SubPort } from '../../openstack/index.ts';
import { WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';
import { pickVlan } from './vlan.ts';

/** How many VLAN ids one attach tries before it gives the key back to the queue (each loser re-reads the trunk). */
const ATTACH_TRIES = 5;

/**
 * Which port is on which trunk with which VLAN id: a cache of the trunks' `sub_ports`, which in Neutron ARE the record
 * (a VLAN id is stored nowhere else, so a crash cannot leave one id on two subports). Written from Neutron's answers
 * only: a trunk list (the node reconciler, guarded by {@link mark} like the pod port record) and every add's or
 * remove's answer (the whole trunk, merged: answers may come back out of order). The VLAN ids picked for adds in
 * flight are held here too, so that one Raven does not race itself; Neutron's 409 `DuplicateSubPort` decides between
 * anyone else.
 */
export class TrunkSubports {
  readonly #byTrunk = new Map<string, Map<string, number>>();
  readonly #trunkOfPort = new Map<string, string>();
  readonly #inFlight = new Map<string, Set<number>>();
  /** Adds and removes answered so far: a list older than one of them must not replace what it wrote. */
  #writes = 0;

  vlanOf(trunkId: string, portId: string): number | undefined {
    return this.#byTrunk.get(trunkId)?.get(portId);
  }

  /** The trunk a port is a subport of, as last read. */
  trunkOf(portId: string): string | undefined {
    return this.#trunkOfPort.get(portId);
  }

  /** Take before listing trunks; hand to {@link observed} with each one's `sub_ports`. */
  mark(): number {
    return this.#writes;
  }

  /**
   * A trunk's `sub_ports` as a list read them, unless an add or remove answered since `mark` (then the cache may be
   * behind until the next list; an attach that meets a taken id re-reads the trunk).
   */
  observed(trunkId: string, subPorts: readonly SubPort[], mark: number): void {
    if (this.#writes === mark) this.#replace(trunkId, subPorts);
  }

  /** Reads one trunk's subports from Neutron into the cache (a port whose VLAN id is not known yet). */
  async read(neutron: NeutronClient, trunkId: string, signal: AbortSignal): Promise<void> {
    const mark = this.#writes;
    const subPorts = await neutron.trunks.getSubports(trunkId, { signal, priority: 'critical' });
    // An add or remove answered meanwhile may be newer than this read: then it is merged, not replacing.
    if (mark === this.#writes) this.#replace(trunkId, subPorts);
    else this.#merge(trunkId, subPorts);
    this.#writes++;
  }

  /** A trunk that is gone (its node gone): nothing is on it any more. */
  forget(trunkId: string): void {
    this.#replace(trunkId, []);
    this.#byTrunk.delete(trunkId);
  }

  /**
   * Adds the port to the trunk on the lowest free VLAN id, or finds it there already (an earlier answer lost); its VLAN
   * id. A taken id (another Raven, an operator) re-reads the trunk and picks again.
   */
  async attach(neutron: NeutronClient, trunkId: string, portId: string, signal: AbortSignal): Promise<number> {
    for (let attempt = 0; attempt < ATTACH_TRIES; attempt++) {
      const known = this.vlanOf(trunkId, portId);
      if (known !== undefined) return known;
      const inFlight = this.#inFlight.get(trunkId) ?? new Set<number>();
      this.#inFlight.set(trunkId, inFlight);
      const vlan = pickVlan(this.#byTrunk.get(trunkId)?.values() ?? [], inFlight);
      if (vlan === undefined)
        throw new RetryableError('NestedTrunkFull', `trunk ${trunkId} has a subport on every VLAN id`, {
          maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS,
        });
      inFlight.add(vlan);
      try {
        const subPort = { port_id: portId, segmentation_type: 'vlan', segmentation_id: vlan };
        const trunk = await neutron.trunks.addSubports(trunkId, [subPort], { signal, priority: 'critical' });
        this.#written(trunkId, trunk.sub_ports);
        return vlan;
      } catch (err) {
        const code = err instanceof OpenStackError ? err.code : undefined;
        if (code !== 'OPENSTACK_TRUNK_VLAN_TAKEN' && code !== 'OPENSTACK_TRUNK_PORT_IN_USE') throw err;
        // Someone took the id, or the port is a subport already (this add's earlier answer was lost): read the trunk.
        await this.read(neutron, trunkId, signal);
        if (code === 'OPENSTACK_TRUNK_PORT_IN_USE' && this.vlanOf(trunkId, portId) === undefined)
          throw new RetryableError('NestedSubportElsewhere', `port ${portId} is a subport of another trunk`, {
            cause: err,
          });
      } finally {
        inFlight.delete(vlan);
      }
    }
    throw new RetryableError('NestedVlanContended', `no VLAN id on trunk ${trunkId} stayed free for port ${portId}`);
  }

  /**
   * Adds the ports to the trunk in one request (a pool's refill), each on its own free VLAN id; their VLAN ids. Neutron
   * takes or refuses the whole list, so a taken id (409 `DuplicateSubPort`) or a port already added (an earlier answer
   * lost: 409 `PortInUse`) re-reads the trunk and picks again for the ports still off it. Any other refusal throws: the
   * caller adds the ports one by one to find which one Neutron refuses.
   */
  async attachAll(
    neutron: NeutronClient,
    trunkId: string,
    portIds: readonly string[],
    signal: AbortSignal,
  ): Promise<Map<string, number>> {
    for (let attempt = 0; attempt < ATTACH_TRIES; attempt++) {
      const off = portIds.filter((id) => this.vlanOf(trunkId, id) === undefined);
      if (off.length === 0) return new Map(portIds.map((id) => [id, this.vlanOf(trunkId, id)!]));
      const inFlight = this.#inFlight.get(trunkId) ?? new Set<number>();
      this.#inFlight.set(trunkId, inFlight);
      const picked: number[] = [];
      try {
        for (const _ of off) {
          const vlan = pickVlan(this.#byTrunk.get(trunkId)?.values() ?? [], inFlight);
          if (vlan === undefined)
            throw new RetryableError(
              'NestedTrunkFull',
              `trunk ${trunkId} has no free VLAN id for ${off.length} ports`,
              {
                maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS,
              },
            );
          inFlight.add(vlan);
          picked.push(vlan);
        }
        const subPorts = off.map((id, i) => ({ port_id: id, segmentation_type: 'vlan', segmentation_id: picked[i]! }));
        const trunk = await neutron.trunks.addSubports(trunkId, subPorts, { signal, priority: 'critical' });
        this.#written(trunkId, trunk.sub_ports);
      } catch (err) {
        const code = err instanceof OpenStackError ? err.code : undefined;
        if (code !== 'OPENSTACK_TRUNK_VLAN_TAKEN' && code !== 'OPENSTACK_TRUNK_PORT_IN_USE') throw err;
        await this.read(neutron, trunkId, signal);
        // A port in use that is not on this trunk (another trunk's subport): which one, only one-by-one adds can tell.
        if (code === 'OPENSTACK_TRUNK_PORT_IN_USE' && off.every((id) => this.vlanOf(trunkId, id) === undefined))
          throw err;
      } finally {
        for (const vlan of picked) inFlight.delete(vlan);
      }
    }
    throw new RetryableError(
      'NestedVlanContended',
      `no VLAN ids on trunk ${trunkId} stayed free for ${portIds.length} ports`,
    );
  }

  /** Removes the port from its trunk (a port that is a subport cannot be deleted: 409 `PortInUseAsSubPort`). */
  async detach(neutron: NeutronClient, portId: string, signal: AbortSignal): Promise<void> {
    const trunkId = this.trunkOf(portId);
    if (!trunkId) return;
    try {
      this.#written(trunkId, (await neutron.trunks.removeSubports(trunkId, [portId], { signal })).sub_ports, portId);
    } catch (err) {
      const code = err instanceof OpenStackError ? err.code : undefined;
      if (code !== 'OPENSTACK_TRUNK_SUBPORT_NOT_FOUND' && code !== 'OPENSTACK_NOT_FOUND') throw err;
      this.#byTrunk.get(trunkId)?.delete(portId);
      this.#trunkOfPort.delete(portId);
    }
  }

  /**
   * An add's or remove's answer: the whole trunk as it was when Neutron made that change. Answers may come back in
   * another order than Neutron made the changes (many adds at once: a pool's refill), so one is merged — what it shows
   * is set, and `removed` taken away — rather than replacing what a later change's answer wrote. A port it shows on a
   * VLAN id the cache gave another port replaces that one (the id is on the trunk once).
   */
  #written(trunkId: string, subPorts: readonly SubPort[], removed?: string): void {
    this.#writes++;
    this.#merge(trunkId, subPorts, removed);
  }

  #merge(trunkId: string, subPorts: readonly SubPort[], removed?: string): void {
    const vlans = this.#byTrunk.get(trunkId) ?? new Map<string, number>();
    this.#byTrunk.set(trunkId, vlans);
    const drop = (portId: string) => {
      vlans.delete(portId);
      if (this.#trunkOfPort.get(portId) === trunkId) this.#trunkOfPort.delete(portId);
    };
    if (removed !== undefined) drop(removed);
    const byVlan = new Map([...vlans].map(([portId, vlan]) => [vlan, portId] as const));
    for (const s of subPorts) {
      const other = byVlan.get(s.segmentation_id);
      if (other !== undefined && other !== s.port_id) drop(other);
      vlans.set(s.port_id, s.segmentation_id);
      this.#trunkOfPort.set(s.port_id, trunkId);
    }
  }

  #replace(trunkId: string, subPorts: readonly SubPort[]): void {
    for (const portId of this.#byTrunk.get(trunkId)?.keys() ?? [])
      if (this.#trunkOfPort.get(portId) === trunkId) this.#trunkOfPort.delete(portId);
    const vlans = new Map(subPorts.map((s) => [s.port_id, s.segmentation_id] as const));
    this.#byTrunk.set(trunkId, vlans);
    for (const portId of vlans.keys()) this.#trunkOfPort.set(portId, trunkId);
  }
}
