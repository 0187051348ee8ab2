import { checkChildMutable, findObject, pecanNotFound, type OctaviaCall } from './common.ts';
import { octaviaError } from '../http.ts';
import { notImplemented } from './providers.ts';
import { mandatory, optional, parseBody, ws, type BodySpec } from './wsme.ts';

/**
 * `POST /l7policies` up to the provider: the sim keeps no L7 policies, so only the OVN driver's refusal (it has no
 * L7 at all) is answered; for other providers the route stays unknown, as it was.
 */
const l7policyPost: BodySpec = {
  argname: 'l7policy_',
  key: 'l7policy',
  firstRead: 'listener_id',
  spec: {
    name: optional(ws.str(255)),
    description: optional(ws.str(255)),
    admin_state_up: optional(ws.bool),
    project_id: optional(ws.str(36)),
    action: mandatory(ws.enum('REJECT', 'REDIRECT_TO_URL', 'REDIRECT_TO_POOL', 'REDIRECT_PREFIX')),
    redirect_pool_id: optional(ws.uuid),
    redirect_url: optional(ws.str()),
    redirect_prefix: optional(ws.str()),
    position: optional(ws.int(1, 2147483647)),
    listener_id: mandatory(ws.uuid),
    rules: optional(ws.list(ws.any)),
    tags: optional(ws.list(ws.str(255))),
    redirect_http_code: optional(ws.enum(301, 302, 303, 307, 308)),
    tenant_id: optional(ws.str(36)),
  },
};

export function createL7Policy(call: OctaviaCall): never {
  const attrs = parseBody(call.body, l7policyPost);
  const listener = findObject(call, call.store.listeners, attrs.listener_id as string, 'Listener');
  const lb = call.store.loadbalancers.get(listener.loadbalancer_id)!;
  if (listener.protocol === 'PROMETHEUS')
    throw octaviaError(400, 'Protocol PROMETHEUS listeners cannot have child objects.');
  checkChildMutable(lb);
  if (lb.provider === 'ovn') throw notImplemented('ovn', 'This provider does not support creating l7policies.');
  throw pecanNotFound();
}
