import ipaddr from 'ipaddr.js';
import type { ServiceType } from '../errors.ts';
import type { Handler, Interceptor, PreparedRequest, RawResponse } from './http.ts';

/** One write the dry run did not send: what it would have changed, in the order it was asked for. */
export interface PlannedWrite {
  service: ServiceType;
  /**
   * `create`, `update` (attributes or tags), `delete`, `attach` / `detach` (router interfaces), `members`,
   * `add-subports` / `remove-subports` (a trunk's: the subports asked for in `changes.sub_ports`).
   */
  action: 'create' | 'update' | 'delete' | 'attach' | 'detach' | 'members' | 'add-subports' | 'remove-subports';
  /** The collection: `ports`, `security-group-rules`, `loadbalancers`, `pools/<id>/members` … */
  collection: string;
  id: string;
  /** The object as it would be after the write (a delete: as it was). */
  object: Record<string, unknown>;
  /** An update: the attributes it sets (tags as `tags`). */
  changes?: Record<string, unknown>;
  /** An update: the object as it was. */
  before?: Record<string, unknown>;
  /** A create: what was asked for (without what the dry run made up). */
  spec?: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

/** The body key of one item and of a list, per collection. */
const singular: Record<string, string> = {
  networks: 'network',
  subnets: 'subnet',
  ports: 'port',
  routers: 'router',
  floatingips: 'floatingip',
  'security-groups': 'security_group',
  'security-group-rules': 'security_group_rule',
  subnetpools: 'subnetpool',
  loadbalancers: 'loadbalancer',
  listeners: 'listener',
  pools: 'pool',
  healthmonitors: 'healthmonitor',
  members: 'member',
  trunks: 'trunk',
};
const plural = (collection: string): string => {
  const one = singular[baseOf(collection)] ?? collection;
  return one.endsWith('s') ? one : `${one}s`;
};
/** `pools/<id>/members` → `members`. */
const baseOf = (collection: string): string => collection.split('/').at(-1) ?? collection;
const notFilters = new Set([
  'fields',
  'limit',
  'marker',
  'sort',
  'sort_key',
  'sort_dir',
  'page_reverse',
  'tags',
  'tags-any',
  'not-tags',
  'not-tags-any',
  'additive_only',
  'cascade',
]);

interface Parsed {
  service: ServiceType;
  /** `/v2.0` or `/v2/lbaas`. */
  prefix: string;
  collection: string;
  id: string | undefined;
  /** `tags`, `tags/<tag>`, `add_router_interface`, `status` … */
  rest: string | undefined;
}

function parse(req: PreparedRequest): Parsed | undefined {
  const prefix = req.service === 'network' ? '/v2.0/' : req.service === 'load-balancer' ? '/v2/lbaas/' : undefined;
  if (!prefix || !req.path.startsWith(prefix)) return undefined;
  const parts = req.path.slice(prefix.length).split('/').map(decodeURIComponent);
  // Octavia's members live below their pool: `pools/<pool>/members[/<member>]`.
  if (parts[0] === 'pools' && parts[2] === 'members')
    return { service: req.service, prefix, collection: `pools/${parts[1]}/members`, id: parts[3], rest: undefined };
  const [collection = '', id, ...rest] = parts;
  return {
    service: req.service,
    prefix: prefix.slice(0, -1),
    collection,
    id,
    rest: rest.length > 0 ? rest.join('/') : undefined,
  };
}

const json = (status: number, body: unknown): RawResponse => ({
  status,
  headers: { 'content-type': 'application/json', 'x-openstack-request-id': 'req-dry-run' },
  text: body === undefined ? '' : JSON.stringify(body),
});

function notFound(p: Parsed, id: string): RawResponse {
  const kind = (singular[baseOf(p.collection)] ?? p.collection).replace(/(^|_)(\w)/g, (_m, _u, c: string) =>
    c.toUpperCase(),
  );
  const message = `${kind} ${id} could not be found.`;
  return p.service === 'network'
    ? json(404, { NeutronError: { type: `${kind}NotFound`, message, detail: '' } })
    : json(404, { faultcode: 'Client', faultstring: message, debuginfo: null });
}

function tagList(values: string[]): string[] {
  return values.flatMap((v) => v.split(',')).filter((v) => v !== '');
}

/** Whether `obj` passes the list's equality and tag filters (as Neutron and Octavia read them). */
export function matchesQuery(obj: Obj, query: URLSearchParams): boolean {
  const tags = Array.isArray(obj.tags) ? (obj.tags as string[]) : [];
  const all = tagList(query.getAll('tags'));
  if (all.some((t) => !tags.includes(t))) return false;
  const any = tagList(query.getAll('tags-any'));
  if (any.length > 0 && !any.some((t) => tags.includes(t))) return false;
  const notAll = tagList(query.getAll('not-tags'));
  if (notAll.length > 0 && notAll.every((t) => tags.includes(t))) return false;
  const none = tagList(query.getAll('not-tags-any'));
  if (none.some((t) => tags.includes(t))) return false;
  for (const key of new Set(query.keys())) {
    if (notFilters.has(key)) continue;
    const wanted = query.getAll(key);
    if (key === 'fixed_ips') {
      const ips = Array.isArray(obj.fixed_ips) ? (obj.fixed_ips as Obj[]) : [];
      const ok = wanted.every((w) => {
        const [k = '', v = ''] = w.split('=', 2);
        return ips.some((ip) => str(ip[k]) === v);
      });
      if (!ok) return false;
      continue;
    }
    if (key === 'loadbalancer_id' && obj.loadbalancer_id === undefined && Array.isArray(obj.loadbalancers)) {
      if (!(obj.loadbalancers as Obj[]).some((l) => wanted.includes(str(l.id)))) return false;
      continue;
    }
    const value = obj[key];
    const values = Array.isArray(value) ? value.map(String) : [str(value)];
    if (value === undefined || !wanted.some((w) => values.some((v) => v.toLowerCase() === w.toLowerCase())))
      return false;
  }
  return true;
}

function project(obj: Obj, query: URLSearchParams): Obj {
  const fields = query.getAll('fields');
  if (fields.length === 0) return obj;
  return Object.fromEntries(fields.filter((f) => f in obj).map((f) => [f, obj[f]]));
}

interface Entry {
  collection: string;
  /** The object as the dry run has it now; undefined once deleted. */
  object: Obj | undefined;
  /** Made by the dry run (not in the cloud). */
  planned: boolean;
}

/**
 * A cloud that is read but never written: the interceptor sends GETs on, and answers every write itself from a
 * copy-on-write overlay — a create returns a made-up object (`id: planned-<n>`, the request's fields, the defaults
 * Neutron and Octavia would fill in, ACTIVE at once), an update merges into it, a delete hides it — and records it as
 * a {@link PlannedWrite}. Later reads see the overlay: a GET of a planned, changed or deleted id is answered from it
 * (404 once deleted), and lists drop deleted objects, show changes, and add planned objects that match the query's
 * filters. A trunk's subport adds and removes change the overlay's trunk (and make the port a subport, as ML2/OVN does).
 * `raven plan` runs the daemon on a session with this interceptor.
 */
export class DryRunCloud {
  readonly #entries = new Map<string, Entry>();
  readonly #writes: PlannedWrite[] = [];
  readonly #listeners = new Set<() => void>();
  /** Every object seen in an answer, by id: what a plan line names it by. */
  readonly #seen = new Map<string, { collection: string; object: Obj }>();
  #next = 0;
  #addresses = 0;
  readonly #madeUp = new Set<string>();

  /** Whether the dry run made `address` up (a planned port's or floating IP's): not one the cloud would pick. */
  madeUp(address: string): boolean {
    return this.#madeUp.has(address);
  }

  /** The writes so far, in order. */
  writes(): readonly PlannedWrite[] {
    return this.#writes;
  }

  /** An object by id, as last seen (in the cloud's answers or the overlay): for names in plan lines. */
  seen(id: string): { collection: string; object: Obj } | undefined {
    return this.#seen.get(id);
  }

  /** The objects of `collection` the dry run made that are still there (its security groups' rules, say). */
  planned(collection: string): Obj[] {
    return [...this.#entries.values()].flatMap((e) =>
      e.planned && e.collection === collection && e.object ? [e.object] : [],
    );
  }

  /** Calls `listener` after each recorded write; returns the function that stops it. */
  onWrite(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  readonly interceptor: Interceptor = (next) => async (req) => {
    const p = parse(req);
    if (!p) {
      if (req.method === 'GET' || req.method === 'HEAD' || req.service === 'identity') return next(req);
      return json(204, undefined);
    }
    if (req.method === 'GET' || req.method === 'HEAD') return this.#read(next, req, p);
    return this.#write(next, req, p);
  };

  #record(write: PlannedWrite): void {
    this.#writes.push(write);
    for (const listener of this.#listeners) listener();
  }

  #see(collection: string, obj: Obj): void {
    // A list with `fields` answers part of an object: what was seen of it before stays.
    if (typeof obj.id === 'string')
      this.#seen.set(obj.id, { collection, object: { ...this.#seen.get(obj.id)?.object, ...obj } });
  }

  async #read(next: Handler, req: PreparedRequest, p: Parsed): Promise<RawResponse> {
    if (p.id !== undefined) {
      if (p.collection === 'trunks' && p.rest === 'get_subports') {
        const trunk = await this.#current(next, req, p, p.id);
        return trunk ? json(200, { sub_ports: trunk.sub_ports ?? [] }) : notFound(p, p.id);
      }
      const entry = this.#entries.get(p.id);
      if (!entry) {
        const res = await next(req);
        this.#seeAnswer(p, res);
        return p.rest === undefined ? this.#withRules(p, res) : res;
      }
      if (!entry.object) return notFound(p, p.id);
      if (p.rest === 'tags') return json(200, { tags: entry.object.tags ?? [] });
      if (p.rest?.startsWith('tags/')) {
        const tag = p.rest.slice(5);
        const has = ((entry.object.tags as string[] | undefined) ?? []).includes(tag);
        return has
          ? json(204, undefined)
          : json(404, { NeutronError: { type: 'TagNotFound', message: `Tag ${tag} could not be found.` } });
      }
      if (p.rest !== undefined) return entry.planned ? json(200, {}) : next(req);
      const obj = this.#rulesOf(p.collection, entry.object);
      return json(200, { [singular[baseOf(p.collection)] ?? p.collection]: project(obj, req.query) });
    }
    // A list: the cloud's page, with the overlay's objects of this collection replaced, hidden or added. Below a
    // planned parent (a planned pool's members) the cloud has nothing.
    const parent = p.collection.split('/')[1];
    const res =
      parent !== undefined && this.#entries.get(parent)?.planned
        ? json(200, { [plural(p.collection)]: [] })
        : await next(req);
    if (res.status !== 200) return res;
    const key = plural(p.collection);
    let body: Obj;
    try {
      body = JSON.parse(res.text) as Obj;
    } catch {
      return res;
    }
    const items = body[key];
    if (!Array.isArray(items)) return res;
    const out: Obj[] = [];
    for (const item of items as Obj[]) {
      const id = typeof item.id === 'string' ? item.id : undefined;
      const entry = id === undefined ? undefined : this.#entries.get(id);
      if (!entry) {
        this.#see(p.collection, item);
        out.push(this.#rulesOf(p.collection, item));
      }
    }
    const links = body[`${key}_links`];
    const last = !Array.isArray(links) || !(links as Obj[]).some((l) => l.rel === 'next');
    if (last)
      for (const entry of this.#entries.values())
        if (entry.collection === p.collection && entry.object && matchesQuery(entry.object, req.query))
          out.push(project(this.#rulesOf(p.collection, entry.object), req.query));
    return json(200, { ...body, [key]: out });
  }

  #seeAnswer(p: Parsed, res: RawResponse): void {
    if (res.status !== 200 || p.rest !== undefined) return;
    try {
      const obj = (JSON.parse(res.text) as Obj)[singular[baseOf(p.collection)] ?? ''];
      if (obj && typeof obj === 'object') this.#see(p.collection, obj as Obj);
    } catch {
      // Not JSON: nothing to remember.
    }
  }

  /** A security group of the cloud read whole: its rules as the overlay has them. */
  #withRules(p: Parsed, res: RawResponse): RawResponse {
    if (p.collection !== 'security-groups' || res.status !== 200) return res;
    try {
      const body = JSON.parse(res.text) as Obj;
      const group = body.security_group as Obj | undefined;
      if (!group) return res;
      return json(200, { security_group: this.#rulesOf(p.collection, group) });
    } catch {
      return res;
    }
  }

  #rulesOf(collection: string, group: Obj): Obj {
    if (collection !== 'security-groups' || !Array.isArray(group.security_group_rules)) return group;
    const rules = (group.security_group_rules as Obj[]).filter((r) => {
      const entry = this.#entries.get(str(r.id));
      return !entry || entry.object !== undefined;
    });
    for (const entry of this.#entries.values())
      if (entry.collection === 'security-group-rules' && entry.planned && entry.object?.security_group_id === group.id)
        rules.push(entry.object as Obj);
    return { ...group, security_group_rules: rules };
  }

  /** The object `id` as it is now: the overlay's, else the cloud's (one GET), else undefined. */
  async #current(next: Handler, req: PreparedRequest, p: Parsed, id: string): Promise<Obj | undefined> {
    const entry = this.#entries.get(id);
    if (entry) return entry.object;
    const res = await next({
      ...req,
      method: 'GET',
      path: `${p.prefix}/${p.collection.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(id)}`,
      query: new URLSearchParams(),
      body: undefined,
    });
    if (res.status !== 200) return undefined;
    const obj = (JSON.parse(res.text) as Obj)[singular[baseOf(p.collection)] ?? ''] as Obj | undefined;
    if (obj) this.#see(p.collection, obj);
    return obj;
  }

  #set(collection: string, obj: Obj, planned: boolean): void {
    this.#entries.set(str(obj.id), { collection, object: obj, planned });
    this.#see(collection, obj);
  }

  async #write(next: Handler, req: PreparedRequest, p: Parsed): Promise<RawResponse> {
    const body = req.body === undefined ? undefined : (JSON.parse(req.body) as Obj);
    const one = singular[baseOf(p.collection)] ?? p.collection;
    if (req.method === 'POST' && p.id === undefined) {
      const specs = Array.isArray(body?.[plural(p.collection)])
        ? (body[plural(p.collection)] as Obj[])
        : [(body?.[one] ?? {}) as Obj];
      const made: Obj[] = [];
      for (const spec of specs) {
        const obj = await this.#make(next, req, p, spec);
        this.#set(p.collection, obj, true);
        this.#record({
          service: p.service,
          action: 'create',
          collection: p.collection,
          id: str(obj.id),
          object: obj,
          spec,
        });
        // A new security group answers with the rules Neutron gave it.
        made.push(this.#rulesOf(p.collection, obj));
      }
      return json(
        201,
        Array.isArray(body?.[plural(p.collection)]) ? { [plural(p.collection)]: made } : { [one]: made[0] },
      );
    }
    if (p.collection === 'routers' && p.id !== undefined && p.rest?.endsWith('_router_interface'))
      return this.#routerInterface(next, req, p, p.id, p.rest.startsWith('add'), body ?? {});
    if (p.collection === 'trunks' && p.id !== undefined && (p.rest === 'add_subports' || p.rest === 'remove_subports'))
      return this.#subports(next, req, p, p.id, p.rest === 'add_subports', (body?.sub_ports ?? []) as Obj[]);
    if (p.collection.endsWith('/members') && p.id === undefined && req.method === 'PUT')
      return this.#members(next, req, p, (body?.members ?? []) as Obj[]);
    if (p.id === undefined) return json(204, undefined);
    const current = await this.#current(next, req, p, p.id);
    if (!current) return notFound(p, p.id);
    if (p.rest === 'tags' || p.rest?.startsWith('tags/')) {
      const tags = [...((current.tags as string[] | undefined) ?? [])];
      let after = tags;
      if (p.rest === 'tags') after = req.method === 'PUT' ? ((body?.tags ?? []) as string[]) : [];
      else {
        const tag = p.rest.slice(5);
        if (req.method === 'PUT' && !tags.includes(tag)) after = [...tags, tag];
        if (req.method === 'DELETE') {
          if (!tags.includes(tag))
            return json(404, { NeutronError: { type: 'TagNotFound', message: `Tag ${tag} could not be found.` } });
          after = tags.filter((t) => t !== tag);
        }
      }
      if (JSON.stringify([...after].sort()) !== JSON.stringify([...tags].sort()))
        this.#update(p, current, { tags: after });
      return p.rest === 'tags' && req.method === 'PUT' ? json(200, { tags: after }) : json(201, undefined);
    }
    if (p.rest !== undefined) return json(204, undefined);
    if (req.method === 'PUT') {
      const changes = (body?.[one] ?? {}) as Obj;
      const updated = this.#update(p, current, changes);
      return json(200, { [one]: this.#rulesOf(p.collection, updated) });
    }
    if (req.method === 'DELETE') {
      this.#entries.set(p.id, { collection: p.collection, object: undefined, planned: false });
      this.#record({ service: p.service, action: 'delete', collection: p.collection, id: p.id, object: current });
      if (p.collection === 'loadbalancers' && req.query.get('cascade') === 'true')
        for (const [id, entry] of this.#entries)
          if (entry.object && matchesQuery(entry.object, new URLSearchParams({ loadbalancer_id: p.id })))
            this.#entries.set(id, { ...entry, object: undefined });
      return json(204, undefined);
    }
    return json(204, undefined);
  }

  #update(p: Parsed, current: Obj, changes: Obj): Obj {
    const updated: Obj = { ...current, ...changes, updated_at: now() };
    if (typeof current.revision_number === 'number') updated.revision_number = current.revision_number + 1;
    const entry = this.#entries.get(str(current.id));
    this.#set(p.collection, updated, entry?.planned ?? false);
    this.#record({
      service: p.service,
      action: 'update',
      collection: p.collection,
      id: str(current.id),
      object: updated,
      changes,
      before: current,
    });
    return updated;
  }

  async #routerInterface(
    next: Handler,
    req: PreparedRequest,
    p: Parsed,
    routerId: string,
    add: boolean,
    body: Obj,
  ): Promise<RawResponse> {
    const subnetId = typeof body.subnet_id === 'string' ? body.subnet_id : undefined;
    const ports: Parsed = { ...p, collection: 'ports', id: undefined, rest: undefined };
    if (add) {
      const subnet = subnetId ? await this.#current(next, req, { ...p, collection: 'subnets' }, subnetId) : undefined;
      const port = await this.#make(next, req, ports, {
        network_id: subnet?.network_id ?? '',
        device_id: routerId,
        device_owner: 'network:router_interface',
        fixed_ips: subnet ? [{ subnet_id: subnet.id, ip_address: subnet.gateway_ip }] : [],
        name: '',
      });
      if (typeof body.port_id === 'string') port.id = body.port_id;
      this.#set('ports', port, true);
      this.#record({ service: p.service, action: 'attach', collection: 'routers', id: routerId, object: port });
      return json(200, {
        id: routerId,
        subnet_id: subnetId ?? '',
        subnet_ids: subnetId ? [subnetId] : [],
        port_id: port.id,
        network_id: port.network_id,
        tenant_id: port.tenant_id,
        project_id: port.project_id,
        tags: [],
      });
    }
    // Remove: the interface port on that subnet (or the port named), from the overlay or the cloud.
    const query = new URLSearchParams({ device_id: routerId, device_owner: 'network:router_interface' });
    if (subnetId) query.append('fixed_ips', `subnet_id=${subnetId}`);
    const listed = await this.#read(
      next,
      { ...req, method: 'GET', path: '/v2.0/ports', query, body: undefined },
      ports,
    );
    const found = (JSON.parse(listed.text) as { ports?: Obj[] }).ports ?? [];
    const port = typeof body.port_id === 'string' ? found.find((x) => x.id === body.port_id) : found[0];
    if (!port)
      return json(404, {
        NeutronError: { type: 'RouterInterfaceNotFoundForSubnet', message: `no interface of ${routerId} found` },
      });
    this.#entries.set(str(port.id), { collection: 'ports', object: undefined, planned: false });
    this.#record({ service: p.service, action: 'detach', collection: 'routers', id: routerId, object: port });
    return json(200, { id: routerId, subnet_id: subnetId ?? '', port_id: port.id, network_id: port.network_id });
  }

  /**
   * A trunk's `add_subports` / `remove_subports`: the trunk with its subports changed, answered without the `trunk`
   * key; the ports become subports as ML2/OVN makes them (`device_owner: trunk:subport`) or stop being ones. A VLAN id
   * already on the trunk is 409 `DuplicateSubPort`, removing a port that is no subport 404 `SubPortNotFound`.
   */
  async #subports(
    next: Handler,
    req: PreparedRequest,
    p: Parsed,
    trunkId: string,
    add: boolean,
    asked: Obj[],
  ): Promise<RawResponse> {
    const trunk = await this.#current(next, req, p, trunkId);
    if (!trunk) return notFound(p, trunkId);
    const before = (trunk.sub_ports as Obj[] | undefined) ?? [];
    const ids = asked.map((s) => str(s.port_id));
    const taken = add ? asked.find((s) => before.some((b) => b.segmentation_id === s.segmentation_id)) : undefined;
    if (taken)
      return json(409, {
        NeutronError: {
          type: 'DuplicateSubPort',
          message: `segmentation_type ${str(taken.segmentation_type)} and segmentation_id ${str(taken.segmentation_id)} already in use on trunk ${trunkId}.`,
          detail: '',
        },
      });
    const missing = add ? undefined : ids.find((id) => !before.some((b) => b.port_id === id));
    if (missing !== undefined)
      return json(404, {
        NeutronError: {
          type: 'SubPortNotFound',
          message: `SubPort on trunk ${trunkId} with parent port ${str(trunk.port_id)} could not be found.`,
          detail: '',
        },
      });
    const sub_ports = add ? [...before, ...asked] : before.filter((b) => !ids.includes(str(b.port_id)));
    const updated: Obj = { ...trunk, sub_ports, updated_at: now() };
    this.#set('trunks', updated, this.#entries.get(trunkId)?.planned ?? false);
    const ports: Parsed = { ...p, collection: 'ports', id: undefined, rest: undefined };
    for (const id of ids) {
      const port = await this.#current(next, req, ports, id);
      if (port)
        this.#set(
          'ports',
          { ...port, device_owner: add ? 'trunk:subport' : '' },
          this.#entries.get(id)?.planned ?? false,
        );
    }
    this.#record({
      service: p.service,
      action: add ? 'add-subports' : 'remove-subports',
      collection: 'trunks',
      id: trunkId,
      object: updated,
      changes: { sub_ports: asked },
      before: trunk,
    });
    return json(200, updated);
  }

  /** Octavia's batch member update: the pool's members become exactly these (matched on address and port). */
  async #members(next: Handler, req: PreparedRequest, p: Parsed, wanted: Obj[]): Promise<RawResponse> {
    const listed = await this.#read(
      next,
      { ...req, method: 'GET', path: req.path, query: new URLSearchParams(), body: undefined },
      p,
    );
    const before = (JSON.parse(listed.text) as { members?: Obj[] }).members ?? [];
    const same = (a: Obj, b: Obj) => a.address === b.address && a.protocol_port === b.protocol_port;
    for (const m of before)
      if (!wanted.some((w) => same(w, m)))
        this.#entries.set(str(m.id), { collection: p.collection, object: undefined, planned: false });
    const after: Obj[] = [];
    for (const w of wanted) {
      const old = before.find((m) => same(w, m));
      const member: Obj = old ? { ...old, ...w } : await this.#make(next, req, p, w);
      this.#set(p.collection, member, !old || (this.#entries.get(str(old.id))?.planned ?? false));
      after.push(member);
    }
    const poolId = p.collection.split('/')[1] ?? '';
    const key = (m: Obj) => `${str(m.address)}:${str(m.protocol_port)}`;
    const changed = before.length !== after.length || before.map(key).sort().join() !== after.map(key).sort().join();
    if (changed)
      this.#record({
        service: p.service,
        action: 'members',
        collection: p.collection,
        id: poolId,
        object: { id: poolId, members: after },
      });
    return json(202, undefined);
  }

  /** A made-up object for a create: the spec, an id, and what the service would fill in. */
  async #make(next: Handler, req: PreparedRequest, p: Parsed, spec: Obj): Promise<Obj> {
    const id = `planned-${++this.#next}`;
    const at = now();
    const common: Obj = {
      id,
      name: '',
      description: '',
      tags: [],
      project_id: 'planned',
      tenant_id: 'planned',
      created_at: at,
      updated_at: at,
      revision_number: 1,
    };
    const base = baseOf(p.collection);
    switch (base) {
      case 'networks':
        return {
          ...common,
          status: 'ACTIVE',
          admin_state_up: true,
          subnets: [],
          mtu: 1450,
          shared: false,
          'router:external': false,
          ...spec,
        };
      case 'subnets': {
        const cidr = typeof spec.cidr === 'string' ? spec.cidr : '0.0.0.0/0';
        const [range] = ipaddr.parseCIDR(cidr);
        const gateway = hostIn(cidr, 1);
        return {
          ...common,
          ip_version: range.kind() === 'ipv6' ? 6 : 4,
          gateway_ip: gateway,
          enable_dhcp: true,
          allocation_pools: [],
          dns_nameservers: [],
          host_routes: [],
          ...spec,
          cidr,
        };
      }
      case 'ports': {
        const fixed = Array.isArray(spec.fixed_ips) ? (spec.fixed_ips as Obj[]) : [];
        const want = fixed.length > 0 ? fixed : [{}];
        const ips: Obj[] = [];
        for (const f of want) {
          if (typeof f.ip_address === 'string' && typeof f.subnet_id === 'string') ips.push(f);
          else ips.push(...(await this.#allocate(next, req, p, str(spec.network_id ?? ''), f.subnet_id)));
        }
        return {
          ...common,
          status: 'DOWN',
          admin_state_up: true,
          device_id: '',
          device_owner: '',
          mac_address: mac(this.#next),
          security_groups: [],
          allowed_address_pairs: [],
          'binding:host_id': '',
          'binding:vif_type': 'unbound',
          'binding:vnic_type': 'normal',
          ...spec,
          fixed_ips: ips,
        };
      }
      case 'routers':
        return { ...common, status: 'ACTIVE', admin_state_up: true, external_gateway_info: null, routes: [], ...spec };
      case 'floatingips': {
        let address = spec.floating_ip_address;
        if (typeof address !== 'string') {
          const [ip] = await this.#allocate(next, req, p, str(spec.floating_network_id ?? ''), undefined);
          address = ip?.ip_address ?? '';
        }
        return {
          ...common,
          status: spec.port_id ? 'ACTIVE' : 'DOWN',
          port_id: null,
          fixed_ip_address: null,
          router_id: null,
          ...spec,
          floating_ip_address: address,
        };
      }
      case 'security-groups':
        // Neutron gives every new group an egress rule per family (planned rules: the group's reads list them).
        for (const ethertype of ['IPv4', 'IPv6'])
          this.#set(
            'security-group-rules',
            {
              ...common,
              id: `planned-${++this.#next}`,
              security_group_id: id,
              direction: 'egress',
              ethertype,
              protocol: null,
              port_range_min: null,
              port_range_max: null,
              remote_ip_prefix: null,
              remote_group_id: null,
            },
            true,
          );
        return { ...common, stateful: true, ...spec, security_group_rules: [] };
      case 'security-group-rules':
        return {
          ...common,
          protocol: null,
          port_range_min: null,
          port_range_max: null,
          remote_ip_prefix: null,
          remote_group_id: null,
          remote_address_group_id: null,
          ethertype: 'IPv4',
          ...spec,
        };
      case 'loadbalancers': {
        let address = spec.vip_address;
        let network = spec.vip_network_id;
        let subnet = spec.vip_subnet_id;
        if (typeof spec.vip_port_id === 'string') {
          const port = await this.#current(
            next,
            req,
            { ...p, service: 'network', prefix: '/v2.0', collection: 'ports' },
            spec.vip_port_id,
          );
          const ip = (port?.fixed_ips as Obj[] | undefined)?.[0];
          address ??= ip?.ip_address;
          subnet ??= ip?.subnet_id;
          network ??= port?.network_id;
        }
        return {
          ...octavia(common),
          vip_address: address ?? null,
          vip_network_id: network ?? null,
          vip_subnet_id: subnet ?? null,
          vip_port_id: spec.vip_port_id ?? null,
          listeners: [],
          pools: [],
          provider: 'amphora',
          flavor_id: null,
          ...spec,
        };
      }
      case 'listeners': {
        const lb = str(spec.loadbalancer_id ?? '');
        return {
          ...octavia(common),
          loadbalancers: [{ id: lb }],
          default_pool_id: null,
          allowed_cidrs: null,
          insert_headers: {},
          connection_limit: -1,
          ...spec,
        };
      }
      case 'pools': {
        let lb = spec.loadbalancer_id;
        const listenerId = typeof spec.listener_id === 'string' ? spec.listener_id : undefined;
        if (listenerId) {
          // A pool made for a listener becomes that listener's default pool (Octavia sets it).
          const lp: Parsed = { ...p, collection: 'listeners', id: listenerId };
          const listener = await this.#current(next, req, lp, listenerId);
          if (listener) {
            lb ??= (listener.loadbalancers as Obj[] | undefined)?.[0]?.id;
            this.#set(
              'listeners',
              { ...listener, default_pool_id: id },
              this.#entries.get(listenerId)?.planned ?? false,
            );
          }
        }
        return {
          ...octavia(common),
          loadbalancers: lb ? [{ id: lb }] : [],
          listeners: listenerId ? [{ id: listenerId }] : [],
          members: [],
          healthmonitor_id: null,
          session_persistence: null,
          ...spec,
        };
      }
      case 'healthmonitors': {
        const poolId = typeof spec.pool_id === 'string' ? spec.pool_id : undefined;
        if (poolId) {
          const pool = await this.#current(next, req, { ...p, collection: 'pools', id: poolId }, poolId);
          if (pool) this.#set('pools', { ...pool, healthmonitor_id: id }, this.#entries.get(poolId)?.planned ?? false);
        }
        return { ...octavia(common), pools: poolId ? [{ id: poolId }] : [], ...spec };
      }
      case 'trunks':
        // ML2/OVN's trunk is ACTIVE at once.
        return { ...common, status: 'ACTIVE', admin_state_up: true, sub_ports: [], ...spec };
      default:
        return { ...common, ...(p.service === 'load-balancer' ? octavia(common) : {}), ...spec };
    }
  }

  /** Made-up fixed IPs on `network` (one per subnet, or on `subnetId`): for the code that reads addresses back. */
  async #allocate(next: Handler, req: PreparedRequest, p: Parsed, network: string, subnetId: unknown): Promise<Obj[]> {
    const query = new URLSearchParams(typeof subnetId === 'string' ? { id: subnetId } : { network_id: network });
    const res = await this.#read(
      next,
      { ...req, method: 'GET', path: '/v2.0/subnets', query, body: undefined, service: 'network' },
      { ...p, service: 'network', prefix: '/v2.0', collection: 'subnets', id: undefined, rest: undefined },
    );
    let subnets: Obj[];
    try {
      subnets = (JSON.parse(res.text) as { subnets?: Obj[] }).subnets ?? [];
    } catch {
      subnets = [];
    }
    const n = ++this.#addresses;
    return subnets
      .filter((s) => typeof s.cidr === 'string')
      .map((s) => {
        const address = hostIn(str(s.cidr), 1000 + n);
        this.#madeUp.add(address);
        return { subnet_id: s.id, ip_address: address };
      });
  }
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function octavia(common: Obj): Obj {
  const { revision_number: _r, tenant_id: _t, ...rest } = common;
  return { ...rest, provisioning_status: 'ACTIVE', operating_status: 'ONLINE', admin_state_up: true };
}

function mac(n: number): string {
  const hex = n.toString(16).padStart(6, '0').slice(-6);
  return `fa:16:3e:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}

/** The `index`-th address of `cidr` (wrapped into the range), for made-up addresses. */
function hostIn(cidr: string, index: number): string {
  try {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    const bytes = range.toByteArray();
    const size = bytes.length * 8 - bits;
    const span = size >= 30 ? 2 ** 30 : 2 ** size;
    let offset = span > 2 ? (index % (span - 2)) + 1 : 0;
    for (let i = bytes.length - 1; i >= 0 && offset > 0; i--) {
      const sum = bytes[i]! + (offset % 256);
      bytes[i] = sum % 256;
      offset = Math.floor(offset / 256) + Math.floor(sum / 256);
    }
    return ipaddr.fromByteArray(bytes).toString();
  } catch {
    return '';
  }
}

/** A field's value as text: strings and numbers as they are, anything else as JSON ('' for none). */
export function str(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `${value}`;
  return JSON.stringify(value);
}
