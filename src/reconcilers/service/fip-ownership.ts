import { cidrContains, parseCidr, parseIp } from '../../core/index.ts';
import type { FloatingIp, NeutronClient } from '../../openstack/index.ts';
import {
  clusterTag,
  holdKindOf,
  ownerTags,
  serviceNameUid,
  TAG_KIND,
  TAG_UID,
  TAG_UNTIL,
  type HoldKind,
} from '../network/index.ts';

/**
 * Who may have which floating IP address, across tenants.
 *
 * An address a Service names (`loadBalancerIP`, `externalIPs`) that Raven released for another Service must not pass
 * to whoever asks first: a redeploy (delete, create again) would lose its address to a waiting tenant. So Raven does
 * not free the floating IPs it made; it holds them for the Service's name:
 * - **kept** (`keep-floatingip`): until a Service of that name takes it again, or `raven gc --teardown`;
 * - **held** (quarantine): for `floatingIps.quarantineSeconds` after its Service let it go; then the garbage collector
 *   frees it.
 * Both carry the cluster's tag, `raven.kind=kept|held` and `raven.uid=<hash of namespace/name>` (a Neutron tag is
 * short; the description names the Service for people), so the GC and `--teardown` find them. At most one of each
 * per Service name: keeping another one moves the older one to held, holding another one frees the older one — a
 * tenant cannot drain the external network by churning a Service.
 */

/** The floating IPs Raven keeps or holds for the Service `namespace/name`. */
export function listHeldFloatingIps(
  neutron: NeutronClient,
  clusterId: string,
  service: string,
  signal: AbortSignal,
): Promise<FloatingIp[]> {
  return neutron.floatingIps.list(
    { tags: [clusterTag(clusterId), `${TAG_UID}=${serviceNameUid(service)}`] },
    { signal },
  );
}

/**
 * Whether a floating IP is any Service's of this cluster (owned, kept or held, or made by Raven and not yet tagged):
 * never "someone else's" that a grant could hand to another Service.
 */
export function isRavens(fip: FloatingIp, clusterId: string, lbNamePrefix: string): boolean {
  return Boolean(fip.tags?.includes(clusterTag(clusterId)) || fip.description?.startsWith(lbNamePrefix));
}

export interface ReleaseInput {
  neutron: NeutronClient;
  clusterId: string;
  /** `namespace/name`. */
  service: string;
  /** `keep-floatingip` is on. */
  keep: boolean;
  /** `floatingIps.quarantineSeconds`; 0 deletes at once. */
  quarantineSeconds: number;
  now: number;
}

/** What a floating IP Raven lets go of becomes: kept, held for the quarantine, or deleted. */
export function releaseFate(input: Pick<ReleaseInput, 'keep' | 'quarantineSeconds'>): HoldKind | 'deleted' {
  return input.keep ? 'kept' : input.quarantineSeconds > 0 ? 'held' : 'deleted';
}

/**
 * What becomes of a floating IP Raven made for `service` once that Service no longer wants it ({@link releaseFate}),
 * with at most one kept and one held per Service name. Returns what it became.
 */
export async function releaseFloatingIp(
  input: ReleaseInput,
  fip: FloatingIp,
  signal: AbortSignal,
): Promise<HoldKind | 'deleted'> {
  const { neutron, clusterId, service } = input;
  const others = (await listHeldFloatingIps(neutron, clusterId, service, signal)).filter((f) => f.id !== fip.id);
  const hold = async (target: FloatingIp) => {
    for (const f of others) if (f.id !== target.id && holdKindOf(f.tags, clusterId) === 'held') await drop(f);
    const until = Math.ceil(input.now / 1000) + input.quarantineSeconds;
    await mark(neutron, target, clusterId, service, 'held', until, signal);
  };
  const drop = (f: FloatingIp) => neutron.floatingIps.delete(f.id, { signal });
  const fate = releaseFate(input);
  if (fate === 'kept') {
    for (const f of others) {
      if (holdKindOf(f.tags, clusterId) !== 'kept') continue;
      if (input.quarantineSeconds > 0) await hold(f);
      else await drop(f);
    }
    await mark(neutron, fip, clusterId, service, 'kept', undefined, signal);
  } else if (fate === 'held') await hold(fip);
  else await drop(fip);
  return fate;
}

async function mark(
  neutron: NeutronClient,
  fip: FloatingIp,
  clusterId: string,
  service: string,
  kind: HoldKind,
  untilSeconds: number | undefined,
  signal: AbortSignal,
): Promise<void> {
  const why =
    kind === 'kept'
      ? `kept for service ${service} (keep-floatingip)`
      : `held for service ${service} until ${new Date(untilSeconds! * 1000).toISOString()}`;
  await neutron.floatingIps.update(fip.id, { port_id: null, description: why }, { signal });
  const tags = [clusterTag(clusterId), `${TAG_KIND}=${kind}`, `${TAG_UID}=${serviceNameUid(service)}`];
  if (untilSeconds !== undefined) tags.push(`${TAG_UNTIL}=${untilSeconds}`);
  await neutron.tags.replace('floatingips', fip.id, tags, { signal });
}

/** Takes a kept or held floating IP back for the current Service (uid): its owner tags and description again. */
export async function reclaimFloatingIp(
  neutron: NeutronClient,
  fip: FloatingIp,
  o: { clusterId: string; uid: string; lbName: string; portId: string },
  signal: AbortSignal,
): Promise<void> {
  await neutron.floatingIps.update(fip.id, { port_id: o.portId, description: o.lbName }, { signal });
  await neutron.tags.replace('floatingips', fip.id, ownerTags(o.clusterId, 'service', o.uid), { signal });
}

/** `floatingIps.grants`: free addresses the operator gives a namespace (any address in one of its CIDRs). */
export interface NamespaceGrant {
  namespace: string;
  cidrs: readonly string[];
}

/** Whether `address` lies in a range granted to `namespace`. */
export function grantedToNamespace(grants: readonly NamespaceGrant[], namespace: string, address: string): boolean {
  const ip = parseIp(address);
  if (!ip) return false;
  return grants.some(
    (g) =>
      g.namespace === namespace &&
      g.cidrs.some((c) => {
        const cidr = parseCidr(c)?.cidr;
        return cidr !== undefined && cidrContains(cidr, ip);
      }),
  );
}

/** Whether `address` lies in an allocation pool of one of the floating network's subnets (or of `subnetId`). */
export async function inAllocationPools(
  neutron: NeutronClient,
  networkId: string,
  subnetId: string | undefined,
  address: string,
  signal: AbortSignal,
): Promise<boolean> {
  const ip = parseIp(address);
  if (!ip) return false;
  const subnets = await neutron.subnets.list({ network_id: networkId }, { signal });
  return subnets.some(
    (s) =>
      (!subnetId || s.id === subnetId) &&
      s.allocation_pools.some((p) => {
        const [start, end] = [parseIp(p.start), parseIp(p.end)];
        return start?.version === ip.version && end && start.value <= ip.value && ip.value <= end.value;
      }),
  );
}
