import { children, memberPool, type Kind } from './children.ts';
import { octaviaError, type SimHttpError } from '../http.ts';
import { pecanError, pecanNotAllowed, pecanNotFound, type OctaviaCall } from './common.ts';
import { loadbalancers } from './loadbalancers.ts';
import { createL7Policy } from './l7policies.ts';
import { isProvider, notImplemented, ovnCapabilities, providers } from './providers.ts';

/** Routes the Octavia API below its endpoint (`/`, `/v2/lbaas/...`), with pecan's answers for unknown routes. */
export interface OctaviaResult {
  status: number;
  body?: unknown;
}

const versionDates: [string, string][] = [
  ['v2.0', '2016-12-11T00:00:00Z'],
  ['v2.1', '2018-04-20T00:00:00Z'],
  ['v2.2', '2018-07-31T00:00:00Z'],
  ['v2.3', '2018-12-18T00:00:00Z'],
  ['v2.4', '2018-12-19T00:00:00Z'],
  ['v2.5', '2019-01-21T00:00:00Z'],
  ['v2.6', '2019-01-25T00:00:00Z'],
  ['v2.7', '2018-01-25T12:00:00Z'],
  ['v2.8', '2019-02-12T00:00:00Z'],
  ['v2.9', '2019-03-04T00:00:00Z'],
  ['v2.10', '2019-03-05T00:00:00Z'],
  ['v2.11', '2019-06-24T00:00:00Z'],
  ['v2.12', '2019-09-11T00:00:00Z'],
  ['v2.13', '2019-09-13T00:00:00Z'],
  ['v2.14', '2019-11-10T00:00:00Z'],
  ['v2.15', '2020-03-10T00:00:00Z'],
  ['v2.16', '2020-03-15T00:00:00Z'],
  ['v2.17', '2020-04-29T00:00:00Z'],
  ['v2.18', '2020-04-29T01:00:00Z'],
  ['v2.19', '2020-05-12T00:00:00Z'],
  ['v2.20', '2020-08-02T00:00:00Z'],
  ['v2.21', '2020-09-03T00:00:00Z'],
  ['v2.22', '2020-09-04T00:00:00Z'],
  ['v2.23', '2020-09-07T00:00:00Z'],
  ['v2.24', '2020-10-15T00:00:00Z'],
  ['v2.25', '2021-10-02T00:00:00Z'],
  ['v2.26', '2022-08-29T00:00:00Z'],
];

/** Octavia Zed's version document (`octavia/api/root_controller.py`): v2.0–v2.25 SUPPORTED, v2.26 CURRENT. */
export function octaviaVersions(endpoint: string): unknown {
  return {
    versions: versionDates.map(([id, updated], i) => ({
      id,
      status: i === versionDates.length - 1 ? 'CURRENT' : 'SUPPORTED',
      updated,
      links: [{ href: `${endpoint}/v2`, rel: 'self' }],
    })),
  };
}

const collections: Record<string, Exclude<Kind, 'member'>> = {
  listeners: 'listener',
  pools: 'pool',
  healthmonitors: 'healthmonitor',
};

/** wsme's names for the POST body types: a POST on an item hands the id to the body argument, which fails. */
const rootTypes: Record<string, [string, string]> = {
  loadbalancers: ['load_balancer', 'LoadBalancerRootPOST'],
  listeners: ['listener_', 'ListenerRootPOST'],
  pools: ['pool_', 'PoolRootPOST'],
  healthmonitors: ['health_monitor_', 'HealthMonitorRootPOST'],
  members: ['member_', 'MemberRootPOST'],
};

function postOnItem(coll: string, id: string): SimHttpError {
  const [arg, type] = rootTypes[coll]!;
  return octaviaError(
    400,
    `Invalid input for field/attribute ${arg}. Value: '${id}'. unable to convert to ${type}. Error: Base.__init__() takes 1 positional argument but 2 were given`,
  );
}

/**
 * `GET /<coll>/<id>/<x>`: pecan passes `x` as `fields`, a string, and `_filter_fields` keeps the attributes that are
 * substrings of it.
 */
function asFields(result: OctaviaResult, x: string): OctaviaResult {
  const body = result.body as Record<string, Record<string, unknown>>;
  const [key, obj] = Object.entries(body)[0]!;
  return { status: 200, body: { [key]: Object.fromEntries(Object.entries(obj).filter(([k]) => x.includes(k))) } };
}

const missingId = () => octaviaError(400, 'Missing argument: "id"');

export function handleOctavia(call: OctaviaCall, method: string, segments: string[], endpoint: string): OctaviaResult {
  const [version, lbaas, coll, id, sub, subId, ...more] = segments;
  // The root controller answers the version document to any method.
  if (version === undefined) return { status: 200, body: octaviaVersions(endpoint) };
  if (version !== 'v2' && version !== 'v2.0') throw pecanError(404, 'Not Found', null);
  // The v2 controller's own index answers the JSON string "v2" (also for /v2/lbaas).
  if (lbaas === undefined || (lbaas === 'lbaas' && coll === undefined)) {
    if (method !== 'GET') throw pecanNotAllowed();
    return { status: 200, body: 'v2' };
  }
  if (lbaas !== 'lbaas' || more.length > 1 || (more.length === 1 && !(coll === 'pools' && sub === 'members')))
    throw pecanNotFound();
  if (coll === 'providers' && id === undefined) {
    if (method !== 'GET') throw pecanNotAllowed();
    return { status: 200, body: { providers } };
  }
  if (coll === 'providers' && sub !== undefined && subId === undefined && Object.hasOwn(ovnCapabilities, sub)) {
    if (method !== 'GET') throw pecanNotAllowed();
    // Only the OVN driver's answer is modelled (it has neither flavors nor zones).
    if (!isProvider(id!)) throw octaviaError(400, `Provider '${id!}' is not enabled.`);
    if (id === 'ovn') throw notImplemented('ovn', ovnCapabilities[sub]!);
    throw pecanNotFound();
  }
  if (coll === 'l7policies' && id === undefined && method === 'POST') return createL7Policy(call);
  if (coll === 'loadbalancers') {
    if (id === undefined) {
      if (method === 'GET') return loadbalancers.list(call);
      if (method === 'POST') return loadbalancers.create(call);
      if (method === 'PUT' || method === 'DELETE') throw missingId();
      throw pecanNotAllowed();
    }
    if (method === 'POST' && sub === undefined) throw postOnItem(coll, id);
    if (sub === 'status' || sub === 'statuses') {
      if (method !== 'GET' || subId !== undefined) throw pecanNotFound();
      return loadbalancers.status(call, id);
    }
    if (sub === 'stats') {
      if (method !== 'GET' || subId !== undefined) throw pecanNotFound();
      return loadbalancers.stats(call, id);
    }
    if (sub !== undefined) {
      if (method === 'GET' && subId === undefined) return asFields(loadbalancers.get(call, id), sub);
      throw pecanNotFound();
    }
    if (method === 'GET') return loadbalancers.get(call, id);
    if (method === 'PUT') return loadbalancers.update(call, id);
    if (method === 'DELETE') return loadbalancers.delete(call, id);
    throw pecanNotAllowed();
  }
  const kind = collections[coll ?? ''];
  if (!kind) throw pecanNotFound();
  if (id === undefined) {
    if (method === 'GET') return children.list(call, kind);
    if (method === 'POST') return children.create(call, kind);
    if (method === 'PUT' || method === 'DELETE') throw missingId();
    throw pecanNotAllowed();
  }
  if (method === 'POST' && sub === undefined) throw postOnItem(coll!, id);
  if (kind === 'pool' && sub === 'members') {
    if (subId === undefined) {
      if (method === 'GET') {
        memberPool(call, id);
        return children.list(call, 'member', id);
      }
      if (method === 'POST') return children.create(call, 'member', id);
      if (method === 'PUT') return children.batch(call, id);
      if (method === 'DELETE') throw missingId();
      throw pecanNotAllowed();
    }
    if (method === 'POST') {
      memberPool(call, id);
      throw postOnItem('members', subId);
    }
    if (method === 'GET') {
      memberPool(call, id);
      const member = children.get(call, 'member', subId, id);
      return more.length === 0 ? member : asFields(member, more[0]!);
    }
    if (method === 'PUT') return children.update(call, 'member', subId, id);
    if (method === 'DELETE') return children.delete(call, 'member', subId, id);
    throw pecanNotAllowed();
  }
  if (kind === 'listener' && sub === 'stats' && subId === undefined && method === 'GET') {
    children.get(call, kind, id);
    return {
      status: 200,
      body: { stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } },
    };
  }
  if (sub !== undefined) {
    if (method === 'GET' && subId === undefined) return asFields(children.get(call, kind, id), sub);
    throw pecanNotFound();
  }
  if (method === 'GET') return children.get(call, kind, id);
  if (method === 'PUT') return children.update(call, kind, id);
  if (method === 'DELETE') return children.delete(call, kind, id);
  throw pecanNotAllowed();
}
