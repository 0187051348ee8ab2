import { octaviaError } from '../http.ts';
import { children } from './children.ts';
import { findObject, type OctaviaCall } from './common.ts';
import { loadbalancers } from './loadbalancers.ts';

/** Routes the Octavia API below its endpoint (`/`, `/v2/lbaas/...`). */
export interface OctaviaResult {
  status: number;
  body?: unknown;
}

const versionDates: [string, string][] = [
  ['v2.0', '2016-12-11T00:00:00Z'], ['v2.1', '2018-04-20T00:00:00Z'], ['v2.2', '2018-07-31T00:00:00Z'], ['v2.3', '2018-12-18T00:00:00Z'],
  ['v2.4', '2018-12-19T00:00:00Z'], ['v2.5', '2019-01-21T00:00:00Z'], ['v2.6', '2019-01-25T00:00:00Z'], ['v2.7', '2018-01-25T12:00:00Z'],
  ['v2.8', '2019-02-12T00:00:00Z'], ['v2.9', '2019-03-04T00:00:00Z'], ['v2.10', '2019-03-05T00:00:00Z'], ['v2.11', '2019-06-24T00:00:00Z'],
  ['v2.12', '2019-09-11T00:00:00Z'], ['v2.13', '2019-09-13T00:00:00Z'], ['v2.14', '2019-11-10T00:00:00Z'], ['v2.15', '2020-03-10T00:00:00Z'],
  ['v2.16', '2020-03-15T00:00:00Z'], ['v2.17', '2020-04-29T00:00:00Z'], ['v2.18', '2020-04-29T01:00:00Z'], ['v2.19', '2020-05-12T00:00:00Z'],
  ['v2.20', '2020-08-02T00:00:00Z'], ['v2.21', '2020-09-03T00:00:00Z'], ['v2.22', '2020-09-04T00:00:00Z'], ['v2.23', '2020-09-07T00:00:00Z'],
  ['v2.24', '2020-10-15T00:00:00Z'], ['v2.25', '2021-10-02T00:00:00Z'], ['v2.26', '2022-08-29T00:00:00Z'],
];

/** Octavia Zed's version document (`octavia/api/root_controller.py`): v2.0–v2.25 SUPPORTED, v2.26 CURRENT. */
export function octaviaVersions(endpoint: string): unknown {
  return {
    versions: versionDates.map(([id, updated], i) => ({
      id, status: i === versionDates.length - 1 ? 'CURRENT' : 'SUPPORTED', updated, links: [{ href: `${endpoint}/v2`, rel: 'self' }],
    })),
  };
}

const notFoundPath = () => octaviaError(404, 'The resource could not be found.');
const notAllowed = () => octaviaError(405, 'The method is not allowed for this resource.');

type ChildKind = 'listener' | 'pool' | 'healthmonitor';
const collections: Record<string, ChildKind> = { listeners: 'listener', pools: 'pool', healthmonitors: 'healthmonitor' };

export function handleOctavia(call: OctaviaCall, method: string, segments: string[], endpoint: string): OctaviaResult {
  const [version, lbaas, coll, id, sub, subId, ...more] = segments;
  if (version === undefined) {
    if (method !== 'GET') throw notAllowed();
    return { status: 200, body: octaviaVersions(endpoint) };
  }
  if ((version !== 'v2' && version !== 'v2.0') || more.length > 0) throw notFoundPath();
  if (lbaas === undefined) return { status: 200, body: octaviaVersions(endpoint) };
  if (lbaas !== 'lbaas' || coll === undefined) throw notFoundPath();
  if (coll === 'providers' && id === undefined && method === 'GET') {
    return { status: 200, body: { providers: [{ name: 'amphora', description: 'The Octavia Amphora driver.' }, { name: 'octavia', description: 'Deprecated alias of the Octavia Amphora driver.' }] } };
  }
  if (coll === 'loadbalancers') {
    if (id === undefined) {
      if (method === 'GET') return loadbalancers.list(call);
      if (method === 'POST') return loadbalancers.create(call);
      throw notAllowed();
    }
    if (sub === 'status' && method === 'GET') return loadbalancers.status(call, id);
    if (sub === 'stats' && method === 'GET') {
      findObject(call, call.store.loadbalancers, id, 'Load Balancer');
      return { status: 200, body: { stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } } };
    }
    if (sub !== undefined) throw notFoundPath();
    if (method === 'GET') return loadbalancers.get(call, id);
    if (method === 'PUT') return loadbalancers.update(call, id);
    if (method === 'DELETE') return loadbalancers.delete(call, id);
    throw notAllowed();
  }
  const kind = collections[coll];
  if (!kind) throw notFoundPath();
  if (id === undefined) {
    if (method === 'GET') return children.list(call, kind, coll, [...(kind === 'listener' ? call.store.listeners : kind === 'pool' ? call.store.pools : call.store.healthmonitors).values()], `${call.href}/lbaas/${coll}`);
    if (method === 'POST') return children.create(call, kind);
    throw notAllowed();
  }
  if (kind === 'pool' && sub === 'members') {
    const pool = findObject(call, call.store.pools, id, 'Pool');
    if (subId === undefined) {
      if (method === 'GET') return children.list(call, 'member', 'members', call.store.membersOf(pool.id), `${call.href}/lbaas/pools/${id}/members`);
      if (method === 'POST') return children.create(call, 'member', pool.id);
      if (method === 'PUT') return children.batch(call, pool.id);
      throw notAllowed();
    }
    if (method === 'GET') return children.get(call, 'member', subId, pool.id);
    children.get(call, 'member', subId, pool.id);
    if (method === 'PUT') return children.update(call, 'member', subId);
    if (method === 'DELETE') return children.delete(call, 'member', subId);
    throw notAllowed();
  }
  if (sub !== undefined) throw notFoundPath();
  if (method === 'GET') return children.get(call, kind, id);
  if (method === 'PUT') return children.update(call, kind, id);
  if (method === 'DELETE') return children.delete(call, kind, id);
  throw notAllowed();
}
