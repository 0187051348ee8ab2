import type { CallerContext } from '../context.ts';
import type { SimHttpError } from '../http.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';
import type { NeutronStore, QuotaResource } from './store.ts';

/** What a Neutron handler gets: the caller, the database, and the parsed request. */
export interface NeutronCall {
  ctx: CallerContext;
  store: NeutronStore;
  query: URLSearchParams;
  /** `<endpoint>/v2.0`. */
  href: string;
  body: unknown;
  /** `If-Match: revision_number=N`. */
  ifMatch: number | undefined;
  /** Emulate the ML2 `test` mechanism driver's binding (docs/openstack.md, "Neutron") for these host names. */
  bindingHosts: Readonly<Record<string, { vifType: string; details: Record<string, unknown>; active: boolean }>>;
  /** The trunk service plugin's driver (trunks.ts): what a trunk's status and its subports' ports become. */
  trunkDriver: TrunkDriverName;
}

/**
 * `ovn`: ML2/OVN's agentless trunk driver. `inert`: one that wires nothing and cannot trunk a bound port, as the
 * contract rig's `raven_dev` (scripts/openstack/real-openstack.sh) and the OVS agent's driver with no agent.
 */
export type TrunkDriverName = 'ovn' | 'inert';

/** `list`: a port in a list answer (its `trunk_details` has no MACs). */
export type Op = 'create' | 'show' | 'list';

/** One Neutron collection: how to find, show, and authorize its resources. */
export interface Kind<R extends { id: string; project_id: string; tags: string[] }> {
  singular: string;
  /** Collection key in bodies (`security_groups`). */
  plural: string;
  /** URL segment (`security-groups`). */
  path: string;
  quota: QuotaResource | undefined;
  map(store: NeutronStore): Map<string, R>;
  notFound(id: string): SimHttpError;
  serialize(r: R, call: NeutronCall, op: Op): Item;
  /** Visible to a non-admin beyond their own resources (shared/external networks). */
  sharedWith?(r: R, call: NeutronCall): boolean;
  /** Every attribute name (filters, sort keys); for non-admins the admin-only ones are simply absent. */
  attributes: readonly string[];
  special?: Record<string, (item: Item, values: string[]) => boolean>;
  /** Filter values converted as the attribute's `convert_to` does (a bad one is a 400): booleans and integers. */
  filterTypes?: Readonly<Record<string, 'boolean' | 'int'>>;
  /**
   * A pagination marker that names no resource: the kind's 404 (networks, ports, routers: the plugin's `_get_<x>`),
   * an empty page (OVO-based lists: subnets, subnet pools, floating IPs) or no marker at all (security groups and
   * their rules). Default 404.
   */
  missingMarker?: 'empty' | 'ignore';
}

/** Can the caller see this resource? (admin: everything; others: own, plus what `sharedWith` allows) */
export function canSee<R extends { id: string; project_id: string; tags: string[] }>(
  kind: Kind<R>,
  r: R,
  call: NeutronCall,
): boolean {
  return call.ctx.isAdmin || r.project_id === call.ctx.projectId || (kind.sharedWith?.(r, call) ?? false);
}

/** The resource, or the kind's 404 when it is missing or invisible to the caller (Neutron never says 403 for those). */
export function findVisible<R extends { id: string; project_id: string; tags: string[] }>(
  kind: Kind<R>,
  call: NeutronCall,
  id: string,
): R {
  const r = kind.map(call.store).get(id);
  if (!r || !canSee(kind, r, call)) throw kind.notFound(id);
  return r;
}

/** A resource the caller may change: visible and owned (or admin). */
export function findOwned<R extends { id: string; project_id: string; tags: string[] }>(
  kind: Kind<R>,
  call: NeutronCall,
  id: string,
  action: 'update' | 'delete',
): R {
  const r = findVisible(kind, call, id);
  if (!call.ctx.isAdmin && r.project_id !== call.ctx.projectId) throw nerr.policy(`rule:${action}_${kind.singular}`);
  return r;
}

/**
 * The project a new resource belongs to (`populate_project_info`): the body's project_id/tenant_id (admin only when
 * it is not the caller's), else the caller's; none at all is the noauth-with-X-Project-Id quirk.
 */
export function targetProject(call: NeutronCall, attrs: Record<string, unknown>): string {
  const requested = (attrs.project_id ?? attrs.tenant_id) as string | undefined;
  if (attrs.project_id !== undefined && attrs.tenant_id !== undefined && attrs.project_id !== attrs.tenant_id) {
    throw nerr.badRequest("'project_id' and 'tenant_id' do not match");
  }
  if (requested !== undefined && requested !== call.ctx.projectId && !call.ctx.isAdmin) {
    throw nerr.badRequest(
      "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
    );
  }
  const project = requested ?? call.ctx.projectId;
  if (project === undefined)
    throw nerr.badRequest('Running without keystone AuthN requires that tenant_id is specified');
  return project;
}

/** OverQuota when `count` more of `resource` would exceed the project's limit (-1: unlimited). */
export function checkQuota(store: NeutronStore, projectId: string, resource: QuotaResource, count = 1): void {
  const limit = store.quotaLimit(projectId, resource);
  if (limit >= 0 && store.used(projectId, resource) + count > limit) throw nerr.overQuota([resource]);
}

/** `If-Match: revision_number=N` against the current revision (412 when stale). */
export function checkRevision(call: NeutronCall, r: { revision_number: number }): void {
  if (call.ifMatch !== undefined && call.ifMatch !== r.revision_number)
    throw nerr.revision(call.ifMatch, r.revision_number);
}

/** Picks keys in a fixed order (Neutron's response attribute order). */
export function ordered(source: Item, keys: readonly string[]): Item {
  const out: Item = {};
  for (const k of keys) if (k in source) out[k] = source[k];
  return out;
}
