import { isNotFound, OpenStackError } from '../errors.ts';
import type { OpenStackRequest, OpenStackResponse, OpenStackSession } from '../session.ts';
import { listQuery, nextMarker, seg, walkPages, type CallOptions, type ListOptions } from './query.ts';

/** Every Neutron resource has an id; standard-attribute ones also carry tags, revision and timestamps. */
export interface Identified {
  id: string;
}

/** Attributes every standard-attribute resource carries (tags, revision, timestamps, owner). */
export interface StandardAttributes {
  id: string;
  name: string;
  description: string;
  project_id: string;
  /** Same as `project_id` (the pre-Keystone-v3 name Neutron still sends). */
  tenant_id: string;
  tags: string[];
  /** Bumped by every change; the value `If-Match: revision_number=N` compares with. */
  revision_number: number;
  /** ISO 8601, seconds precision, `Z`. */
  created_at: string;
  updated_at: string;
}

/** Options of `update()`. */
export interface UpdateOptions extends CallOptions {
  /**
   * Apply only if the resource's `revision_number` is still this one (`If-Match: revision_number=N`); otherwise
   * Neutron answers 412 `RevisionNumberConstraintFailed` and nothing changes. Take N from a read (get/list), not
   * from an earlier update's answer: on real Neutron a port `description` change is two revisions while the answer
   * shows one, and a new subnet is a revision of its network. Every update bumps the revision, even a no-op one.
   */
  ifRevision?: number | undefined;
}

/** How one collection is spelled on the wire. */
export interface CollectionNames {
  /** Body key of one item: `security_group`. */
  singular: string;
  /** Body key of a list: `security_groups`. */
  plural: string;
  /** URL segment below `/v2.0/`: `security-groups`. */
  path: string;
}

/** An answer without the expected shape (a proxy's page, a different API): `OPENSTACK_BAD_RESPONSE`. */
export function badResponse(
  res: OpenStackResponse<unknown>,
  method: string,
  path: string,
  what: string,
): OpenStackError {
  return new OpenStackError(
    { service: 'network', method, path: `/v2.0${path}`, status: res.status, type: '', requestId: res.requestId },
    what,
    { code: 'OPENSTACK_BAD_RESPONSE' },
  );
}

/** What each resource client sends through: the session plus the wire helpers they share. */
export class NeutronTransport {
  readonly session: OpenStackSession;

  constructor(session: OpenStackSession) {
    this.session = session;
  }

  /** One request to the `network` service; `path` is below `/v2.0`. */
  send<T>(
    method: OpenStackRequest['method'],
    path: string,
    options: CallOptions & Omit<Partial<OpenStackRequest>, 'method' | 'path' | 'service'> = {},
  ): Promise<OpenStackResponse<T>> {
    const { signal, timeoutMs, ...rest } = options;
    return this.session.request<T>({
      ...rest,
      service: 'network',
      method,
      path: `/v2.0${path}`,
      signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }
}

/**
 * The operations every Neutron collection shares: list (following pagination markers), get, create, update (with an
 * optional revision precondition) and an idempotent delete. `T` is the resource as Neutron returns it, `C` its create
 * spec, `U` the attributes an update may change, `F` the filters a list accepts.
 */
export class ResourceApi<T extends Identified, C extends object, U extends object, F extends object> {
  protected readonly transport: NeutronTransport;
  protected readonly names: CollectionNames;

  constructor(transport: NeutronTransport, names: CollectionNames) {
    this.transport = transport;
    this.names = names;
  }

  /**
   * Every matching item, across all pages. With `fields`, items hold only those attributes (typed as such).
   *
   * @example
   * const ports = await neutron.ports.list({ device_id: pod.metadata.uid }, { fields: ['id', 'fixed_ips'], signal });
   */
  async list<K extends keyof T & string = keyof T & string>(
    filters?: F,
    options: ListOptions<K> = {},
  ): Promise<Pick<T, K>[]> {
    const all: Pick<T, K>[] = [];
    for await (const page of this.pages(filters, options)) all.push(...page);
    return all;
  }

  /**
   * The matching items one page at a time (page size `limit`, else whatever the server's page limit is), fetched as
   * they are consumed: `for await (const page of neutron.ports.pages(filters, { limit: 500 })) …`.
   */
  pages<K extends keyof T & string = keyof T & string>(
    filters?: F,
    options: ListOptions<K> = {},
  ): AsyncGenerator<Pick<T, K>[], void, undefined> {
    const query = listQuery(this.encodeFilters(filters), options);
    const { plural, path } = this.names;
    return walkPages(async (marker) => {
      const res = await this.transport.send<Record<string, unknown>>('GET', `/${path}`, {
        query: marker === undefined ? query : { ...query, marker },
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        priority: options.priority,
      });
      const items = res.body?.[plural];
      if (!Array.isArray(items)) throw badResponse(res, 'GET', `/${path}`, `no "${plural}" array in the answer`);
      return { items: items as Pick<T, K>[], next: nextMarker(res.body, plural) };
    });
  }

  /** One item by id; rejects with 404 (`NetworkNotFound`, `PortNotFound` …) when there is none. */
  async get<K extends keyof T & string = keyof T & string>(
    id: string,
    options: CallOptions & { fields?: readonly K[] | undefined } = {},
  ): Promise<Pick<T, K>> {
    const query = options.fields && options.fields.length > 0 ? { fields: options.fields } : undefined;
    const res = await this.transport.send<Record<string, Pick<T, K>>>('GET', `/${this.names.path}/${seg(id)}`, {
      query,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      priority: options.priority,
    });
    return this.unwrap(res, 'GET', `/${this.names.path}/${seg(id)}`);
  }

  /** Creates one item (a POST: never retried by the transport; a reconciler finds a lost create by name or tag). */
  async create(spec: C, options: CallOptions = {}): Promise<T> {
    const res = await this.transport.send<Record<string, T>>('POST', `/${this.names.path}`, {
      body: { [this.names.singular]: spec },
      ...options,
    });
    return this.unwrap(res, 'POST', `/${this.names.path}`);
  }

  /** Changes some attributes; `ifRevision` makes it conditional (412 `RevisionNumberConstraintFailed` when stale). */
  async update(id: string, changes: U, options: UpdateOptions = {}): Promise<T> {
    const headers =
      options.ifRevision === undefined ? undefined : { 'if-match': `revision_number=${options.ifRevision}` };
    const res = await this.transport.send<Record<string, T>>('PUT', `/${this.names.path}/${seg(id)}`, {
      body: { [this.names.singular]: changes },
      headers,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      priority: options.priority,
    });
    return this.unwrap(res, 'PUT', `/${this.names.path}/${seg(id)}`);
  }

  /**
   * Deletes one item: `true` when this call deleted it, `false` when it was already gone (404), so a reconciler can
   * delete without checking first. Conflicts (`NetworkInUse`, `SecurityGroupInUse` …) still reject.
   */
  async delete(id: string, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.transport.send('DELETE', `/${this.names.path}/${seg(id)}`, options);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Turns typed filters into plain query values (ports spell `fixed_ips` objects as `ip_address=…`). */
  protected encodeFilters(filters: F | undefined): object | undefined {
    return filters;
  }

  /** The `<singular>` object of an answer. */
  protected unwrap<R>(res: OpenStackResponse<Record<string, R> | undefined>, method: string, path: string): R {
    const item = res.body?.[this.names.singular];
    if (item === undefined || item === null || typeof item !== 'object')
      throw badResponse(res, method, path, `no "${this.names.singular}" object in the answer`);
    return item;
  }
}
