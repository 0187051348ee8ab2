import type { FloatingIp, LoadBalancer, Port } from '../../openstack/index.ts';
import { ownerOf } from '../network/index.ts';
import { byAge } from './loadbalancer.ts';
import { holds, type Vip } from './vip-port.ts';

/** What exists in OpenStack under one Service name (`raven/<cluster>/<ns>/<name>`), whatever the owner's uid. */
export interface Actual {
  lbs: LoadBalancer[];
  ports: Port[];
  fips: FloatingIp[];
}

/** What the current Service keeps, and everything else under its name, which goes. */
export interface Split {
  lb: LoadBalancer | undefined;
  port: Port | undefined;
  fips: FloatingIp[];
  stale: Actual;
}

/**
 * The current Service's identity; undefined when it wants nothing (gone, terminating, or no longer needs a load
 * balancer).
 */
export interface Wanted {
  uid: string;
  subnetId: string;
  address: string;
  /** Dual-stack: the VIP of the other family (Octavia's `additional_vips`). */
  additional?: readonly Vip[] | undefined;
  /** The provider makes its own VIP port (`ProviderTraits.makesVipPort`): no port of Raven's is kept. */
  providerPort?: boolean | undefined;
}

/** Whether a load balancer has exactly these additional VIPs (Octavia cannot change them: it is re-created). */
function sameAdditional(lb: LoadBalancer, wanted: readonly Vip[]): boolean {
  const have = (lb.additional_vips ?? []).map((v) => `${v.subnet_id}|${v.ip_address}`).sort();
  const want = wanted.map((v) => `${v.subnetId}|${v.address}`).sort();
  return have.length === want.length && have.every((v, i) => v === want[i]);
}

/**
 * Sorts what exists into "ours" and "stale":
 * - load balancers tagged with the uid, oldest kept — a crash after a create whose answer was lost can leave two;
 *   every other one (another uid: an earlier Service of the same name) is stale;
 * - the VIP port tagged with the uid, or untagged (a crash between create and tag) unless a stale load balancer uses
 *   it, holding the clusterIP (each of them, dual-stack); a load balancer on any other port, or whose additional VIPs
 *   are not the wanted ones, is stale (its port was lost, or the Service changed families: it is rebuilt);
 * - floating IPs Raven made for the uid, or untagged ones not on a stale port.
 * When the provider makes the VIP port, every port of Raven's is stale, and the load balancer is kept while its own
 * VIP is the wanted one.
 */
export function splitActual(actual: Actual, wanted: Wanted | undefined): Split {
  const stale: Actual = { lbs: [], ports: [], fips: [] };
  if (!wanted) return { lb: undefined, port: undefined, fips: [], stale: actual };
  const mine = (tags: readonly string[] | undefined): boolean => ownerOf(tags)?.uid === wanted.uid;
  const lbs = actual.lbs.filter((lb) => mine(lb.tags)).sort(byAge);
  let lb = lbs[0];
  stale.lbs.push(...actual.lbs.filter((l) => l !== lb));
  // Another owner's load balancer on an untagged port makes the port theirs; our own twins (kept or not) do not.
  const usedByStale = new Set(actual.lbs.filter((l) => !mine(l.tags)).map((l) => l.vip_port_id));
  const candidates = actual.ports.filter(
    (p) =>
      !wanted.providerPort &&
      (mine(p.tags) || (!ownerOf(p.tags) && !usedByStale.has(p.id))) &&
      holds(p, wanted.subnetId, wanted.address) &&
      (wanted.additional ?? []).every((v) => holds(p, v.subnetId, v.address)),
  );
  const port = candidates.find((p) => p.id === lb?.vip_port_id) ?? candidates[0];
  stale.ports.push(...actual.ports.filter((p) => p !== port));
  const vipKept = wanted.providerPort
    ? lb?.vip_subnet_id === wanted.subnetId && lb.vip_address === wanted.address
    : lb?.vip_port_id === port?.id;
  if (lb && (!vipKept || !sameAdditional(lb, wanted.additional ?? []))) {
    stale.lbs.push(lb);
    lb = undefined;
  }
  const stalePorts = new Set(stale.ports.map((p) => p.id));
  const fips = actual.fips.filter(
    (f) => mine(f.tags) || (!ownerOf(f.tags) && !(f.port_id && stalePorts.has(f.port_id))),
  );
  stale.fips.push(...actual.fips.filter((f) => !fips.includes(f)));
  return { lb, port, fips, stale };
}
