import type { CallerContext } from '../context.ts';
import { octaviaError, SimHttpError } from '../http.ts';
import type { NeutronCall } from '../neutron/common.ts';
import type { Provisioner } from './provisioning.ts';
import type { LoadBalancerRecord, OctaviaBase, OctaviaStore, PoolRecord } from './store.ts';

/** What an Octavia handler gets. */
export interface OctaviaCall {
  ctx: CallerContext;
  /** noauth: every caller sees every object. */
  noauth: boolean;
  store: OctaviaStore;
  provisioner: Provisioner;
  /** An admin view of the sim's Neutron, for VIP ports (Octavia's service user). */
  neutron: NeutronCall;
  query: URLSearchParams;
  body: unknown;
  /** `<endpoint>/v2`. */
  href: string;
  /** Real Octavia (noop worker) leaves the VIP port behind when the LB goes. */
  leaksVipPort: boolean;
  /** `[api_settings] default_provider_driver`: the provider of a load balancer created without one. */
  defaultProvider: string;
  onNewLoadBalancer(id: string): void;
}

export const validationFailure = (detail: string) => octaviaError(400, `Validation failure: ${detail}`);

export function notFound(resource: string, id: string) {
  return octaviaError(404, `${resource} ${id} not found.`);
}

/** oslo.policy's refusal (another project's object, or a project a member may not act for). */
export const policyForbidden = () => octaviaError(403, 'Policy does not allow this request to be performed.');

/**
 * An error pecan raises itself, before wsme: `{"code", "title", "description"}` instead of the wsme fault. A missing
 * parent in a sub-controller's route (`/pools/{id}/members`) is one, with the odd title "Bad Request" on a 404.
 */
export function pecanError(status: number, title: string, description: string | null): SimHttpError {
  return new SimHttpError(status, { code: status, title, description }, {}, `${status} ${title}: ${description ?? ''}`);
}

export const pecanNotFound = (): SimHttpError => pecanError(404, 'Not Found', '');
export const pecanNotAllowed = (): SimHttpError => pecanError(405, 'Method Not Allowed', '');

export function visible(call: OctaviaCall, r: { project_id: string }): boolean {
  return call.noauth || call.ctx.isAdmin || r.project_id === call.ctx.projectId;
}

/** The object, or Octavia's 404 when there is none; another project's object is a 403 (the policy check). */
export function findObject<R extends OctaviaBase>(
  call: OctaviaCall,
  map: Map<string, R>,
  id: string,
  resource: string,
): R {
  const r = map.get(id);
  if (!r) throw notFound(resource, id);
  if (!visible(call, r)) throw policyForbidden();
  return r;
}

/** A load balancer's own update needs it ACTIVE, its delete ACTIVE or ERROR: `LBPendingStateError` otherwise. */
export function checkLbMutable(lb: LoadBalancerRecord, forDelete = false): void {
  if (lb.provisioning_status !== 'ACTIVE' && !(forDelete && lb.provisioning_status === 'ERROR')) {
    throw octaviaError(409, `Invalid state ${lb.provisioning_status} of loadbalancer resource ${lb.id}`);
  }
}

/**
 * A change below a load balancer needs the load balancer ACTIVE (`ImmutableObject`); member and health monitor
 * changes first need their pool ACTIVE. Listener statuses are not checked (they are only set).
 */
export function checkChildMutable(lb: LoadBalancerRecord, pool?: PoolRecord): void {
  if (pool && pool.provisioning_status !== 'ACTIVE')
    throw octaviaError(409, `Pool ${pool.id} is immutable and cannot be updated.`);
  if (lb.provisioning_status !== 'ACTIVE')
    throw octaviaError(409, `Load Balancer ${lb.id} is immutable and cannot be updated.`);
}

export interface ChangeScope {
  lb: LoadBalancerRecord;
  /** Listeners the change affects: set PENDING_UPDATE (or `listenerStatus`) now, ACTIVE when the worker is done. */
  listenerIds: string[];
  listenerStatus?: 'PENDING_UPDATE' | 'PENDING_DELETE';
  /**
   * A member or health monitor change also locks its pool (`pool_id` in `test_and_set_lb_and_listeners_prov_status`).
   */
  pool?: PoolRecord;
  /**
   * The driver's report leaves the listeners out, so they stay PENDING_UPDATE (the OVN driver's health monitor
   * changes).
   */
  listenersUnreported?: boolean;
}

/**
 * Starts a change under a load balancer as the API does (`test_and_set_lb_and_listeners_prov_status`): the LB, the
 * affected listeners and the pool are set PENDING_UPDATE now; after the worker's delay `finish` runs and the worker
 * marks them ACTIVE again. Every status write touches `updated_at`.
 */
export function startChildChange(
  call: OctaviaCall,
  scope: ChangeScope,
  finish: () => void,
  neverFinishes = false,
): void {
  const s = call.store;
  const set = (o: OctaviaBase | undefined, status: OctaviaBase['provisioning_status']): void => {
    if (!o) return;
    o.provisioning_status = status;
    s.touch(o);
  };
  set(scope.lb, 'PENDING_UPDATE');
  for (const id of scope.listenerIds) set(s.listeners.get(id), scope.listenerStatus ?? 'PENDING_UPDATE');
  set(scope.pool, 'PENDING_UPDATE');
  if (neverFinishes) return;
  call.provisioner.schedule(scope.lb.id, () => {
    finish();
    if (s.loadbalancers.has(scope.lb.id)) set(scope.lb, 'ACTIVE');
    if (!scope.listenersUnreported) for (const id of scope.listenerIds) set(s.listeners.get(id), 'ACTIVE');
    if (scope.pool && s.pools.has(scope.pool.id)) set(scope.pool, 'ACTIVE');
  });
}
