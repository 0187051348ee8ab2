import type { CallerContext } from '../context.ts';
import { isObject, octaviaError } from '../http.ts';
import type { NeutronCall } from '../neutron/common.ts';
import type { Provisioner } from './provisioning.ts';
import type { LoadBalancerRecord, OctaviaBase, OctaviaStore } from './store.ts';

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
  onNewLoadBalancer(id: string): void;
}

export const validationFailure = (detail: string) => octaviaError(400, `Validation failure: ${detail}`);

export function notFound(resource: string, id: string) {
  return octaviaError(404, `${resource} ${id} not found.`);
}

/** An object the caller may see (keystone mode: own project unless admin), or Octavia's 404. */
export function findObject<R extends OctaviaBase>(call: OctaviaCall, map: Map<string, R>, id: string, resource: string): R {
  const r = map.get(id);
  if (!r || !visible(call, r)) throw notFound(resource, id);
  return r;
}

export function visible(call: OctaviaCall, r: { project_id: string }): boolean {
  return call.noauth || call.ctx.isAdmin || r.project_id === call.ctx.projectId;
}

/** A load balancer's own operations need it ACTIVE (or ERROR): `LBPendingStateError`. */
export function checkLbMutable(lb: LoadBalancerRecord): void {
  if (lb.provisioning_status !== 'ACTIVE' && lb.provisioning_status !== 'ERROR') {
    throw octaviaError(409, `Invalid state ${lb.provisioning_status} of loadbalancer resource ${lb.id}`);
  }
}

/** Children's operations need the LB and the affected listeners ACTIVE: `ImmutableObject`. */
export function checkChildMutable(call: OctaviaCall, lb: LoadBalancerRecord, listenerIds: string[] = []): void {
  const listenersBusy = listenerIds.some((id) => {
    const s = call.store.listeners.get(id)?.provisioning_status;
    return s !== undefined && s !== 'ACTIVE' && s !== 'ERROR';
  });
  if ((lb.provisioning_status !== 'ACTIVE' && lb.provisioning_status !== 'ERROR') || listenersBusy) {
    throw octaviaError(409, `Load Balancer ${lb.id} is immutable and cannot be updated.`);
  }
}

/**
 * Starts a change under a load balancer: the LB and the listeners it touches go PENDING_UPDATE until the worker
 * is done; `finish` then runs and everything involved goes back to ACTIVE.
 */
export function startChildChange(call: OctaviaCall, lb: LoadBalancerRecord, listenerIds: string[], finish: () => void): void {
  lb.provisioning_status = 'PENDING_UPDATE';
  for (const id of listenerIds) {
    const l = call.store.listeners.get(id);
    if (l && l.provisioning_status === 'ACTIVE') l.provisioning_status = 'PENDING_UPDATE';
  }
  call.provisioner.schedule(lb.id, () => {
    finish();
    if (call.store.loadbalancers.has(lb.id)) lb.provisioning_status = 'ACTIVE';
    for (const id of listenerIds) {
      const l = call.store.listeners.get(id);
      if (l?.provisioning_status === 'PENDING_UPDATE') l.provisioning_status = 'ACTIVE';
    }
  });
}

export type Check = (name: string, value: unknown) => unknown;

const describe = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const bad = (name: string, value: unknown, why: string) => octaviaError(400, `Invalid input for field/attribute ${name}. Value: '${describe(value)}'. ${why}`);

export const t = {
  str: (name: string, v: unknown) => (typeof v === 'string' ? v : (() => { throw bad(name, v, 'Value should be string'); })()),
  strOrNull: (name: string, v: unknown) => (v === null || typeof v === 'string' ? v : (() => { throw bad(name, v, 'Value should be string'); })()),
  bool: (name: string, v: unknown) => (typeof v === 'boolean' ? v : (() => { throw bad(name, v, 'Value should be boolean'); })()),
  int: (min: number, max: number): Check => (name, v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(name, v, 'unable to convert to int');
    if (v < min || v > max) throw bad(name, v, `Value should be greater or equal to ${min} and lower or equal to ${max}`);
    return v;
  },
  oneOf: (...values: string[]): Check => (name, v) => {
    if (typeof v !== 'string' || !values.includes(v)) throw bad(name, v, `Value should be one of: ${values.join(', ')}`);
    return v;
  },
  tags: (name: string, v: unknown) => {
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(name, v, 'Value should be a list of strings');
    return v as string[];
  },
  any: (_name: string, v: unknown) => v,
};

/** Checks `{"<key>": {...}}` against the allowed attributes (wsme's checks); returns the inner object. */
export function parseObject(body: unknown, key: string, allowed: Record<string, Check>, required: string[]): Record<string, unknown> {
  if (!isObject(body) || !isObject(body[key])) throw bad(key, body === undefined ? 'None' : body, 'Mandatory field missing.'.replace(/^/, ''));
  return checkFields(body[key], key, allowed, required);
}

export function checkFields(obj: Record<string, unknown>, key: string, allowed: Record<string, Check>, required: string[]): Record<string, unknown> {
  const unknown = Object.keys(obj).filter((k) => !(k in allowed));
  if (unknown.length > 0) throw octaviaError(400, `Unknown attribute${unknown.length > 1 ? 's' : ''} for argument ${key}: ${unknown.join(', ')}`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = v === null && k !== 'description' && k !== 'name' ? null : allowed[k]!(k, v);
  for (const r of required) if (out[r] === undefined || out[r] === null) throw bad(r, 'None', 'Mandatory field missing.');
  return out;
}
