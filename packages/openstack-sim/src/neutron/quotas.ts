import { isObject, neutronError } from '../http.ts';
import type { NeutronCall } from './common.ts';
import { toInt } from './body.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';
import { quotaResources, type QuotaResource } from './store.ts';

/** `/quotas[/{project}[/details|/default]]`: per-project limits over configurable defaults (-1 = unlimited). */
function limits(call: NeutronCall, project: string): Item {
  return Object.fromEntries(quotaResources.map((r) => [r, call.store.quotaLimit(project, r)]));
}

function checkAccess(call: NeutronCall, project: string, write: boolean): void {
  if (call.ctx.isAdmin) return;
  if (write) throw nerr.policy('rule:update_quota');
  if (project !== call.ctx.projectId) {
    throw neutronError(
      403,
      'AdminRequired',
      'User does not have admin privileges: Only admin is authorized to access quotas for another tenant.',
    );
  }
}

export function handleQuotas(
  call: NeutronCall,
  method: string,
  project: string | undefined,
  sub: string | undefined,
): { status: number; body?: Item } {
  if (project === undefined) {
    if (method !== 'GET')
      throw neutronError(405, 'HTTPMethodNotAllowed', 'The method is not allowed for this resource.');
    if (!call.ctx.isAdmin) throw nerr.policy('rule:get_quota');
    return {
      status: 200,
      body: { quotas: [...call.store.quotas.keys()].map((p) => ({ ...limits(call, p), project_id: p, tenant_id: p })) },
    };
  }
  if (method === 'GET') {
    checkAccess(call, project, false);
    if (sub === 'details') {
      return {
        status: 200,
        body: {
          quota: Object.fromEntries(
            quotaResources.map((r) => [
              r,
              { limit: call.store.quotaLimit(project, r), used: call.store.used(project, r), reserved: 0 },
            ]),
          ),
        },
      };
    }
    if (sub === 'default') return { status: 200, body: { quota: { ...call.store.quotaDefaults } } };
    return { status: 200, body: { quota: limits(call, project) } };
  }
  if (method === 'PUT' && sub === undefined) {
    checkAccess(call, project, true);
    if (!isObject(call.body) || !isObject(call.body.quota))
      throw nerr.badRequest("Unable to find 'quota' in request body");
    const update = call.body.quota;
    const unknown = Object.keys(update).filter((k) => !(quotaResources as readonly string[]).includes(k));
    if (unknown.length > 0) throw nerr.badRequest(`Unrecognized attribute(s) '${unknown.join(', ')}'`);
    const values: Partial<Record<QuotaResource, number>> = { ...call.store.quotas.get(project) };
    for (const [k, v] of Object.entries(update)) {
      const n = toInt(v);
      if (n < -1) throw nerr.invalidAttr(k, `'${n}' is too small - must be at least '-1'`);
      values[k as QuotaResource] = n;
    }
    call.store.quotas.set(project, values);
    return { status: 200, body: { quota: limits(call, project) } };
  }
  if (method === 'DELETE' && sub === undefined) {
    checkAccess(call, project, true);
    if (!call.store.quotas.delete(project))
      throw neutronError(404, 'TenantQuotaNotFound', `Quota for tenant ${project} could not be found.`);
    return { status: 204 };
  }
  throw neutronError(405, 'HTTPMethodNotAllowed', 'The method is not allowed for this resource.');
}
