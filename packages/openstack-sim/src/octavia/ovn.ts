import type { IpCidr } from '../../../../src/core/index.ts';
import type { OctaviaCall } from './common.ts';
import type { HealthMonitorRecord, LoadBalancerRecord, MemberRecord, OctaviaBase, PoolRecord } from './store.ts';

/**
 * The statuses the OVN driver reports back once it has made a change in OVN (`ovn_octavia_provider/helper.py`):
 * unlike the amphora's worker it sets operating statuses, and a health monitor only works where OVN can probe every
 * member (docs/openstack.md, "Octavia's OVN provider").
 */

/** The VIP subnet's range: where the driver places a member given without `subnet_id`. */
export function vipCidr(call: OctaviaCall, lb: LoadBalancerRecord): IpCidr | undefined {
  return call.neutron.store.subnets.get(lb.vip_subnet_id)?.parsed;
}

const upOrDown = (o: OctaviaBase): string => (o.admin_state_up ? 'ONLINE' : 'OFFLINE');

/**
 * OVN's health check needs, for each member, the member's own logical switch port (a Neutron port with its address
 * on the member subnet's network) and a `network:distributed` port (the metadata port) on that subnet as source.
 */
function probeable(call: OctaviaCall, lb: LoadBalancerRecord, m: MemberRecord): boolean {
  const n = call.neutron.store;
  const subnet = n.subnets.get(m.subnet_id ?? lb.vip_subnet_id);
  if (!subnet) return false;
  const ports = [...n.ports.values()].filter((p) => p.network_id === subnet.network_id);
  const own = ports.some((p) => p.fixed_ips.some((f) => f.ip_address === m.address));
  const source = ports.some(
    (p) => p.device_owner === 'network:distributed' && p.fixed_ips.some((f) => f.subnet_id === subnet.id),
  );
  return own && source;
}

function poolProbeable(call: OctaviaCall, lb: LoadBalancerRecord, pool: PoolRecord): boolean {
  return call.store.membersOf(pool.id).every((m) => probeable(call, lb, m));
}

function lbOf(call: OctaviaCall, pool: PoolRecord): LoadBalancerRecord {
  return call.store.loadbalancers.get(pool.loadbalancer_id)!;
}

/** A listener, pool, member or health monitor the driver has just made (provisioning is already ACTIVE). */
export function ovnCreated(call: OctaviaCall, kind: string, o: OctaviaBase): void {
  const s = call.store;
  if (kind === 'listener') o.operating_status = upOrDown(o);
  else if (kind === 'pool') o.operating_status = s.listenersOfPool(o.id).length > 0 ? 'ONLINE' : 'OFFLINE';
  else if (kind === 'member') {
    const m = o as MemberRecord;
    const pool = s.pools.get(m.pool_id);
    if (!pool) return;
    pool.operating_status = 'ONLINE';
    if (s.monitorOf(pool.id)) m.operating_status = poolProbeable(call, lbOf(call, pool), pool) ? 'ONLINE' : 'ERROR';
  } else if (kind === 'healthmonitor') {
    const hm = o as HealthMonitorRecord;
    const pool = s.pools.get(hm.pool_id);
    if (!pool) return;
    pool.operating_status = 'ONLINE';
    for (const m of s.membersOf(pool.id)) m.operating_status = 'ONLINE';
    if (poolProbeable(call, lbOf(call, pool), pool)) hm.operating_status = upOrDown(hm);
    else {
      hm.provisioning_status = 'ERROR';
      hm.operating_status = 'ERROR';
    }
  }
}

/** After members went away: a pool without members is OFFLINE again. */
export function ovnMembersChanged(call: OctaviaCall, poolId: string): void {
  const pool = call.store.pools.get(poolId);
  if (pool) pool.operating_status = call.store.membersOf(poolId).length > 0 ? 'ONLINE' : 'OFFLINE';
}
