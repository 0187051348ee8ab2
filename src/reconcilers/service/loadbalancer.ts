import { RetryableError, TerminalError } from '../../controller/index.ts';
import {
  isImmutable,
  isNotFound,
  OpenStackError,
  type HealthMonitor,
  type LoadBalancer,
  type Member,
  type OctaviaClient,
  type ListenerUpdate,
  type Pool,
} from '../../openstack/index.ts';
import { clusterTag, TAG_KIND, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';
import type { DesiredListener } from './desired.ts';
import { monitorFields, type LbChildren, type Step } from './plan.ts';

/** Octavia's timestamps have no zone (`2026-11-22T12:06:15`); they are UTC. */
export function octaviaTime(value: string | null | undefined): number {
  if (!value) return 0;
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
}

/**
 * Oldest first: after a crash left several, the first is kept. Octavia's timestamps are whole seconds, so twins often
 * tie: then the one further along (more listeners) wins, then the id, so every reconcile picks the same one.
 */
export function byAge(a: LoadBalancer, b: LoadBalancer): number {
  return (
    octaviaTime(a.created_at) - octaviaTime(b.created_at) ||
    (b.listeners?.length ?? 0) - (a.listeners?.length ?? 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Every load balancer of this Service name in this cluster, whatever its uid. */
export function listLoadBalancers(
  octavia: OctaviaClient,
  clusterId: string,
  lbName: string,
  signal: AbortSignal,
): Promise<LoadBalancer[]> {
  return octavia.loadBalancers.list({ name: lbName, tags: [clusterTag(clusterId), `${TAG_KIND}=service`] }, { signal });
}

/**
 * Octavia's quota answer (403 "Quota has been met") and Neutron's (409 `OverQuota`, relayed for the VIP) as one
 * retryable reason.
 */
export function quotaError(err: unknown, what: string): RetryableError | undefined {
  if (!(err instanceof OpenStackError)) return undefined;
  if (err.type === 'OverQuota' || /Quota has been met|quota exceeded/i.test(err.message)) {
    return new RetryableError('QuotaExceeded', `quota exceeded ${what}: ${err.message}`, {
      cause: err,
      maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS,
    });
  }
  return undefined;
}

/**
 * Creates the bare load balancer on the VIP port, born tagged; its listeners, pools and members follow as steps.
 * Not a fully-populated create: on Zed its children stay `PENDING_CREATE` for good (the worker marks only the load
 * balancer ACTIVE — the simulator reproduces it), so the pools could never take a member change.
 */
export async function createLoadBalancer(
  octavia: OctaviaClient,
  spec: {
    name: string;
    description: string;
    /** Undefined: the provider makes the VIP port, on the primary VIP's subnet and address. */
    vipPortId: string | undefined;
    /** Dual-stack: the primary VIP (its subnet and address on the port) and the other family's, as additional VIP. */
    vips: readonly { subnetId: string; address: string }[];
    tags: string[];
    flavorId?: string | undefined;
    availabilityZone?: string | undefined;
    /** Unset: the cloud's default provider. */
    provider?: string | undefined;
  },
  signal: AbortSignal,
): Promise<LoadBalancer> {
  try {
    return await octavia.loadBalancers.create(
      {
        name: spec.name,
        description: spec.description,
        ...(spec.vipPortId ? { vip_port_id: spec.vipPortId } : {}),
        // On a port with an address per family Octavia needs the primary one named ("VIP port's subnet could not be
        // determined" otherwise), and takes the other as an additional VIP (v2.26; measured on Zed). Without a port,
        // the provider makes one for the primary VIP.
        ...(spec.vips.length > 1 || !spec.vipPortId
          ? {
              vip_subnet_id: spec.vips[0]!.subnetId,
              vip_address: spec.vips[0]!.address,
              ...(spec.vips.length > 1
                ? { additional_vips: spec.vips.slice(1).map((v) => ({ subnet_id: v.subnetId, ip_address: v.address })) }
                : {}),
            }
          : {}),
        ...(spec.flavorId ? { flavor_id: spec.flavorId } : {}),
        ...(spec.availabilityZone ? { availability_zone: spec.availabilityZone } : {}),
        ...(spec.provider ? { provider: spec.provider } : {}),
        tags: spec.tags,
      },
      { signal },
    );
  } catch (err) {
    throw quotaError(err, `creating load balancer ${spec.name}`) ?? refused(err, spec.name) ?? err;
  }
}

/**
 * Octavia refusing what a Service asked for — an unknown flavor or zone (400), an option its provider lacks (501,
 * e.g. the amphora and SOURCE_IP_PORT) — is terminal until the Service changes: retrying cannot help.
 */
function refused(err: unknown, lbName: string): TerminalError | undefined {
  if (!(err instanceof OpenStackError) || (err.status !== 400 && err.status !== 501)) return undefined;
  return new TerminalError(`Octavia refused a change to load balancer ${lbName}: ${err.message}`, {
    reason: 'LoadBalancerOptionRefused',
    cause: err,
  });
}

/**
 * Belt and braces on top of the `loadbalancer_id` filter: a server that ignored it must not hand us another load
 * balancer's children.
 */
const onLb =
  (lbId: string) =>
  (o: { loadbalancers?: readonly { id: string }[] }): boolean =>
    o.loadbalancers === undefined || o.loadbalancers.some((r) => r.id === lbId);

/** The load balancer's listeners and pools, and the members of the pools that serve a wanted listener. */
export async function readChildren(
  octavia: OctaviaClient,
  lb: LoadBalancer,
  desired: readonly DesiredListener[],
  signal: AbortSignal,
): Promise<LbChildren> {
  const [listeners, pools] = await Promise.all([
    octavia.listeners.list({ loadbalancer_id: lb.id }, { signal }).then((all) => all.filter(onLb(lb.id))),
    octavia.pools.list({ loadbalancer_id: lb.id }, { signal }).then((all) => all.filter(onLb(lb.id))),
  ]);
  const wanted = new Set(desired.map((d) => `${d.protocol}:${d.port}`));
  const served = listeners.flatMap((l) =>
    wanted.has(`${l.protocol}:${l.protocol_port}`) && l.default_pool_id ? [l.default_pool_id] : [],
  );
  const members = new Map<string, Member[]>();
  const monitors = new Map<string, HealthMonitor>();
  await Promise.all(
    pools
      .filter((p) => served.includes(p.id))
      .map(async (p: Pool) => {
        const [list, monitor] = await Promise.all([
          octavia.members.list(p.id, {}, { signal }),
          p.healthmonitor_id ? octavia.healthMonitors.find(p.healthmonitor_id, { signal }) : undefined,
        ]);
        members.set(p.id, list);
        if (monitor) monitors.set(p.id, monitor);
      }),
  );
  return { listeners, pools, members, monitors };
}

/**
 * Applies one step. Resolves false when Octavia refused it because the load balancer is busy (409, `isImmutable`):
 * the caller looks again later. A child already gone counts as done.
 */
export async function applyStep(
  octavia: OctaviaClient,
  lb: LoadBalancer,
  step: Step,
  tags: string[],
  signal: AbortSignal,
): Promise<boolean> {
  try {
    switch (step.kind) {
      case 'deletePool':
        await octavia.pools.delete(step.pool.id, { signal });
        break;
      case 'deleteListener':
        await octavia.listeners.delete(step.listener.id, { signal });
        break;
      case 'deleteMonitor':
        await octavia.healthMonitors.delete(step.monitor.id, { signal });
        break;
      case 'createListener': {
        const { allowed_cidrs, insert_headers, ...limits } = step.desired.listener;
        await octavia.listeners.create(
          {
            loadbalancer_id: lb.id,
            name: step.desired.name,
            protocol: step.desired.listenerProtocol,
            protocol_port: step.desired.port,
            ...limits,
            ...(allowed_cidrs ? { allowed_cidrs } : {}),
            ...(Object.keys(insert_headers).length > 0 ? { insert_headers } : {}),
            tags,
          },
          { signal },
        );
        break;
      }
      case 'updateListener':
        await octavia.listeners.update(step.listener.id, step.changes as ListenerUpdate, { signal });
        break;
      case 'createPool':
        await octavia.pools.create(
          {
            listener_id: step.listener.id,
            name: step.desired.name,
            protocol: step.desired.poolProtocol,
            ...step.desired.pool,
            tags,
          },
          { signal },
        );
        break;
      case 'updatePool':
        await octavia.pools.update(step.pool.id, step.changes, { signal });
        break;
      case 'createMonitor':
        await octavia.healthMonitors.create(
          {
            pool_id: step.pool.id,
            name: step.desired.name,
            type: step.desired.monitor!.type,
            ...monitorFields(step.desired),
            tags,
          },
          { signal },
        );
        break;
      case 'updateMonitor':
        await octavia.healthMonitors.update(step.monitor.id, step.changes, { signal });
        break;
      case 'updateMembers':
        await octavia.members.batchUpdate(step.pool.id, step.members, { signal });
        break;
    }
    return true;
  } catch (err) {
    if (isImmutable(err)) return false;
    if (isNotFound(err) && step.kind.startsWith('delete')) return true;
    throw quotaError(err, `changing load balancer ${lb.name}`) ?? refused(err, lb.name) ?? err;
  }
}

/**
 * Starts (or waits out) a cascade delete. `gone`: nothing left; `going`: Octavia is deleting it or busy with
 * something else (look again later).
 */
export async function deleteLoadBalancer(
  octavia: OctaviaClient,
  lb: LoadBalancer,
  signal: AbortSignal,
): Promise<'gone' | 'going'> {
  if (lb.provisioning_status === 'DELETED') return 'gone';
  if (lb.provisioning_status.startsWith('PENDING_')) return 'going';
  try {
    return (await octavia.loadBalancers.delete(lb.id, { cascade: true, signal })) ? 'going' : 'gone';
  } catch (err) {
    if (isImmutable(err)) return 'going';
    throw err;
  }
}
