import { OpenStackError } from '../errors.ts';
import type { OpenStackSession } from '../session.ts';
import { OctaviaResource, type CallOptions, type ListQuery, type Page } from './resource.ts';
import type {
  HealthMonitor,
  HealthMonitorCreate,
  HealthMonitorUpdate,
  Listener,
  ListenerCreate,
  ListenerUpdate,
  LoadBalancer,
  LoadBalancerCreate,
  LoadBalancerStats,
  LoadBalancerStatusTree,
  LoadBalancerTree,
  LoadBalancerTreeCreate,
  LoadBalancerUpdate,
  Member,
  MemberCreate,
  MemberUpdate,
  Pool,
  PoolCreate,
  PoolUpdate,
} from './types.ts';
import { parseVersionDocument, type OctaviaVersions } from './versions.ts';

const base = '/v2/lbaas';
const seg = (id: string): string => encodeURIComponent(id);

/** The list/get/find/create/update/delete every top-level Octavia collection has. */
class Collection<T, Create, Update> {
  protected readonly resource: OctaviaResource<T, Create, Update>;
  readonly #path: string;

  constructor(session: OpenStackSession, singular: string, plural: string) {
    this.resource = new OctaviaResource(session, singular, plural);
    this.#path = `${base}/${plural}`;
  }

  protected item(id: string): string {
    return `${this.#path}/${seg(id)}`;
  }

  /** Every match across all pages. */
  list(query: ListQuery = {}, options: CallOptions = {}): Promise<T[]> {
    return this.resource.list(this.#path, query, options);
  }

  /** One page (`limit`, `marker`); `nextMarker` continues. */
  listPage(query: ListQuery = {}, options: CallOptions = {}): Promise<Page<T>> {
    return this.resource.listPage(this.#path, query, options);
  }

  /** Throws an {@link OpenStackError} (`isNotFound`) when missing. */
  get(id: string, options: CallOptions = {}): Promise<T> {
    return this.resource.get(this.item(id), options);
  }

  /** Undefined when missing. */
  find(id: string, options: CallOptions = {}): Promise<T | undefined> {
    return this.resource.find(this.item(id), options);
  }

  /**
   * Answers at once with a `PENDING_CREATE` object; its load balancer is `PENDING_UPDATE` until the provider is done.
   */
  create(spec: Create, options: CallOptions = {}): Promise<T> {
    return this.resource.create(this.#path, spec, options);
  }

  /** Answers with the object in `PENDING_UPDATE`; 409 ({@link isImmutable}) while its load balancer is busy. */
  update(id: string, patch: Update, options: CallOptions = {}): Promise<T> {
    return this.resource.update(this.item(id), patch, options);
  }

  /**
   * True when the delete was accepted, false when the object was already gone; the object lingers in `PENDING_DELETE`.
   */
  delete(id: string, options: CallOptions = {}): Promise<boolean> {
    return this.resource.delete(this.item(id), options);
  }
}

export interface LoadBalancerDeleteOptions extends CallOptions {
  /** Delete the listeners, pools, members and monitors too; without it a load balancer with children is a 400. */
  cascade?: boolean;
}

/** `/v2/lbaas/loadbalancers`. */
export class LoadBalancers extends Collection<LoadBalancer, LoadBalancerCreate, LoadBalancerUpdate> {
  readonly #session: OpenStackSession;

  constructor(session: OpenStackSession) {
    super(session, 'loadbalancer', 'loadbalancers');
    this.#session = session;
  }

  /**
   * A fully-populated create: the load balancer with its listeners, default pools, members and health monitors in
   * one call, answered with the whole tree inline (each pool's `healthmonitor` is null in that answer on Zed).
   *
   * On Octavia Zed (11.0) only the load balancer goes `ACTIVE`: the API hands the create to the worker before it
   * commits the children, the worker finds none, and the listeners, pools, members and monitor stay
   * `PENDING_CREATE` for good (every run against real Zed). Changes to their members and monitors are then refused
   * with 409 (`isImmutable`) for ever; a listener update, a new listener or pool, and a cascade delete still work.
   *
   * @example
   * const members = [{ address, protocol_port: 8080 }];
   * const pool = { name: 'p', protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', members };
   * const listeners = [{ protocol: 'TCP', protocol_port: 80, default_pool: pool }];
   * await octavia.loadBalancers.createTree({ name, vip_subnet_id, listeners }, { signal });
   */
  async createTree(spec: LoadBalancerTreeCreate, options: CallOptions = {}): Promise<LoadBalancerTree> {
    const { body } = await this.#session.request<{ loadbalancer: LoadBalancerTree }>({
      service: 'load-balancer',
      method: 'POST',
      path: `${base}/loadbalancers`,
      body: { loadbalancer: spec },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body.loadbalancer;
  }

  /**
   * With `cascade`, removes the whole tree. The VIP port may outlive the load balancer (docs/openstack.md, "Octavia").
   */
  override delete(id: string, options: LoadBalancerDeleteOptions = {}): Promise<boolean> {
    return this.resource.delete(this.item(id), {
      ...options,
      query: { cascade: options.cascade ? 'true' : undefined },
    });
  }

  /** Traffic counters (all zero without a data plane). */
  async stats(id: string, options: CallOptions = {}): Promise<LoadBalancerStats> {
    const { body } = await this.#session.request<{ stats: LoadBalancerStats }>({
      service: 'load-balancer',
      method: 'GET',
      path: `${this.item(id)}/stats`,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body.stats;
  }

  /** The provisioning and operating status of the load balancer and everything below it, in one call. */
  async statusTree(id: string, options: CallOptions = {}): Promise<LoadBalancerStatusTree> {
    const { body } = await this.#session.request<{ statuses: { loadbalancer: LoadBalancerStatusTree } }>({
      service: 'load-balancer',
      method: 'GET',
      path: `${this.item(id)}/status`,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return body.statuses.loadbalancer;
  }
}

/** `/v2/lbaas/listeners`. */
export class Listeners extends Collection<Listener, ListenerCreate, ListenerUpdate> {
  constructor(session: OpenStackSession) {
    super(session, 'listener', 'listeners');
  }
}

/** `/v2/lbaas/pools`. */
export class Pools extends Collection<Pool, PoolCreate, PoolUpdate> {
  constructor(session: OpenStackSession) {
    super(session, 'pool', 'pools');
  }
}

/** `/v2/lbaas/healthmonitors`. */
export class HealthMonitors extends Collection<HealthMonitor, HealthMonitorCreate, HealthMonitorUpdate> {
  constructor(session: OpenStackSession) {
    super(session, 'healthmonitor', 'healthmonitors');
  }
}

export interface BatchUpdateOptions extends CallOptions {
  /** Keep members missing from the list instead of deleting them (v2.11, `additiveMemberBatch`). */
  additiveOnly?: boolean;
}

/** `/v2/lbaas/pools/{pool_id}/members`: members live below their pool. */
export class Members {
  readonly #session: OpenStackSession;
  readonly #resource: OctaviaResource<Member, MemberCreate, MemberUpdate>;

  constructor(session: OpenStackSession) {
    this.#session = session;
    this.#resource = new OctaviaResource(session, 'member', 'members');
  }

  #collection(poolId: string): string {
    return `${base}/pools/${seg(poolId)}/members`;
  }

  #item(poolId: string, id: string): string {
    return `${this.#collection(poolId)}/${seg(id)}`;
  }

  list(poolId: string, query: ListQuery = {}, options: CallOptions = {}): Promise<Member[]> {
    return this.#resource.list(this.#collection(poolId), query, options);
  }

  listPage(poolId: string, query: ListQuery = {}, options: CallOptions = {}): Promise<Page<Member>> {
    return this.#resource.listPage(this.#collection(poolId), query, options);
  }

  get(poolId: string, id: string, options: CallOptions = {}): Promise<Member> {
    return this.#resource.get(this.#item(poolId, id), options);
  }

  find(poolId: string, id: string, options: CallOptions = {}): Promise<Member | undefined> {
    return this.#resource.find(this.#item(poolId, id), options);
  }

  create(poolId: string, spec: MemberCreate, options: CallOptions = {}): Promise<Member> {
    return this.#resource.create(this.#collection(poolId), spec, options);
  }

  update(poolId: string, id: string, patch: MemberUpdate, options: CallOptions = {}): Promise<Member> {
    return this.#resource.update(this.#item(poolId, id), patch, options);
  }

  delete(poolId: string, id: string, options: CallOptions = {}): Promise<boolean> {
    return this.#resource.delete(this.#item(poolId, id), options);
  }

  /**
   * Sets the pool's members in one call (202, no body): members are matched on address + protocol port; new ones
   * are created, matched ones updated, and the rest deleted (unless `additiveOnly`). The change is asynchronous like
   * any other: the load balancer is `PENDING_UPDATE` until it is applied.
   */
  async batchUpdate(poolId: string, members: readonly MemberCreate[], options: BatchUpdateOptions = {}): Promise<void> {
    await this.#session.request({
      service: 'load-balancer',
      method: 'PUT',
      path: this.#collection(poolId),
      query: { additive_only: options.additiveOnly ? 'true' : undefined },
      body: { members },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }
}

/**
 * A typed Octavia (load-balancer v2) client on an {@link OpenStackSession}. It never waits: writes answer with the
 * object in a `PENDING_*` state and the caller looks again later (see `provisioningState`, `isImmutable`).
 *
 * @example
 * const octavia = new OctaviaClient(session);
 * const lb = await octavia.loadBalancers.create({ name, vip_subnet_id, tags: [uid] }, { signal });
 * if (provisioningState(lb).state === 'PENDING') return { requeueAfterMs: 1_000 };
 */
export class OctaviaClient {
  readonly loadBalancers: LoadBalancers;
  readonly listeners: Listeners;
  readonly pools: Pools;
  readonly members: Members;
  readonly healthMonitors: HealthMonitors;
  readonly #session: OpenStackSession;
  #versions: OctaviaVersions | undefined;

  constructor(session: OpenStackSession) {
    this.#session = session;
    this.loadBalancers = new LoadBalancers(session);
    this.listeners = new Listeners(session);
    this.pools = new Pools(session);
    this.members = new Members(session);
    this.healthMonitors = new HealthMonitors(session);
  }

  /**
   * The endpoint's version document (`GET /`), fetched once and cached (a failed fetch is not cached). Use
   * `supports(feature)` to leave out what an older Octavia would reject.
   */
  async versions(options: CallOptions = {}): Promise<OctaviaVersions> {
    if (this.#versions) return this.#versions;
    const { body, requestId } = await this.#session.request({
      service: 'load-balancer',
      method: 'GET',
      path: '/',
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    const versions = parseVersionDocument(body);
    if (!versions) {
      throw new OpenStackError(
        { service: 'load-balancer', method: 'GET', path: '/', status: 200, type: '', requestId },
        `not an Octavia version document: ${JSON.stringify(body)?.slice(0, 200)}`,
        { code: 'OPENSTACK_BAD_RESPONSE' },
      );
    }
    this.#versions = versions;
    return versions;
  }
}
