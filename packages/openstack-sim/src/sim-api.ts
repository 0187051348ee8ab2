import { z } from 'zod';
import type { SimFaults } from './faults.ts';
import { isObject, jsonResponse } from './http.ts';

/**
 * The simulator's own test API under `/_sim/` (like the embedded API server's `/_raven/faults/`; documented for users in
 * docs/openstack.md, "The simulator's test API"):
 * - `GET /_sim/counters` calls per route; `GET /_sim/errors` error answers per route and status; `DELETE
 *   /_sim/counters` resets both;
 * - `GET|POST|DELETE /_sim/faults/rules` lists, adds (201, the rule with its id) or clears fault rules;
 * - `POST /_sim/faults/stuck {"loadBalancerId"?}` holds one LB (or, without an id, every new one) in PENDING_*;
 *   `DELETE /_sim/faults/stuck[?loadBalancerId=]` releases one or all;
 * - `POST /_sim/reset` clears rules, counters and held LBs (not the resources);
 * - `GET /_sim/stats` how many of each resource exist;
 * - `POST /_sim/ports/{id}/link {"up": true|false}` what a node's agent reports when a bound port's device is plugged
 *   or unplugged: `status` `ACTIVE` or `DOWN`, a revision of the port when it changes (as Neutron's agents make one).
 */
export function handleSimApi(
  faults: SimFaults,
  stats: () => Record<string, number>,
  method: string,
  url: URL,
  body: unknown,
  link?: (portId: string, up: boolean) => Response,
): Response {
  const path = url.pathname.slice('/_sim/'.length);
  const linked = /^ports\/([^/]+)\/link$/.exec(path);
  if (linked && method === 'POST' && link) {
    if (!isObject(body) || typeof body.up !== 'boolean')
      return jsonResponse(400, { error: 'body must be {"up": boolean}' });
    return link(decodeURIComponent(linked[1]!), body.up);
  }
  if (path === 'counters' && method === 'GET') return jsonResponse(200, faults.counters());
  if (path === 'errors' && method === 'GET') return jsonResponse(200, faults.errors());
  if (path === 'counters' && method === 'DELETE') {
    faults.resetCounters();
    return jsonResponse(200, {});
  }
  if (path === 'faults/rules') {
    if (method === 'GET') return jsonResponse(200, { rules: faults.rules });
    if (method === 'DELETE') {
      faults.clearRules();
      return jsonResponse(200, { rules: [] });
    }
    if (method === 'POST') {
      try {
        return jsonResponse(201, faults.addRule(body as never));
      } catch (err) {
        return jsonResponse(400, { error: err instanceof z.ZodError ? z.prettifyError(err) : String(err) });
      }
    }
  }
  if (path === 'faults/stuck') {
    if (method === 'GET') return jsonResponse(200, faults.stuck);
    if (method === 'POST') {
      const id = isObject(body) && typeof body.loadBalancerId === 'string' ? body.loadBalancerId : undefined;
      faults.stick(id);
      return jsonResponse(200, faults.stuck);
    }
    if (method === 'DELETE') {
      faults.unstick(url.searchParams.get('loadBalancerId') ?? undefined);
      return jsonResponse(200, faults.stuck);
    }
  }
  if (path === 'reset' && method === 'POST') {
    faults.reset();
    return jsonResponse(200, {});
  }
  if (path === 'stats' && method === 'GET') return jsonResponse(200, stats());
  return jsonResponse(404, { error: `no such simulator API: ${method} /_sim/${path}` });
}
