import type { CallOptions, StandardFilters } from './query.ts';
import { badResponse, ResourceApi, type NeutronTransport, type StandardAttributes } from './resource.ts';
import type { TagsApi } from './tags.ts';
import type { SubPort } from './trunks.ts';

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

export interface AllowedAddressPair {
  ip_address: string;
  mac_address: string;
}

/** A Neutron port as the API returns it (ML2 with port bindings and port security). */
export interface Port extends StandardAttributes {
  network_id: string;
  mac_address: string;
  admin_state_up: boolean;
  /** `DOWN` until a mechanism driver binds it; `ACTIVE` once bound (without agents: only the ML2 `test` driver). */
  status: string;
  /** Owner instance (pod uid, router id, `lb-<id>`). */
  device_id: string;
  /** `compute:kuryr`, `network:router_interface`, `network:router_gateway`, `Octavia` … */
  device_owner: string;
  fixed_ips: FixedIp[];
  security_groups: string[];
  port_security_enabled: boolean;
  allowed_address_pairs: AllowedAddressPair[];
  extra_dhcp_opts: unknown[];
  'binding:host_id': string;
  /** `unbound`, `binding_failed`, `ovs` … */
  'binding:vif_type': string;
  'binding:vnic_type': string;
  'binding:profile': Record<string, unknown>;
  'binding:vif_details': Record<string, unknown>;
  /** Only on a trunk's parent port (`trunk-details`). */
  trunk_details?: TrunkDetails;
}

/**
 * A parent port's trunk: its id and subports. Each subport's `mac_address` is there when the port is read by id, but
 * not in a port list (Zed).
 */
export interface TrunkDetails {
  trunk_id: string;
  sub_ports: (SubPort & { mac_address?: string })[];
}

/** A port to create. */
export interface PortCreate {
  network_id: string;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  /** A given MAC already used on the network → 409 `MacAddressInUse`. */
  mac_address?: string;
  /**
   * Addresses wanted; omitted: one from each subnet. A taken address → 409 `IpAddressAlreadyAllocated`; one in no
   * subnet of the network → 400 `InvalidIpForNetwork`.
   */
  fixed_ips?: { subnet_id?: string; ip_address?: string }[];
  device_id?: string;
  device_owner?: string;
  security_groups?: string[];
  port_security_enabled?: boolean;
  allowed_address_pairs?: { ip_address: string; mac_address?: string }[];
  'binding:host_id'?: string;
  'binding:vnic_type'?: string;
  'binding:profile'?: Record<string, unknown>;
  /** Admin only: create it in another project. */
  project_id?: string;
  /**
   * Tags for the new port. In the POST itself when Neutron has `tag-ports-during-bulk-creation`, else set by a second
   * request right after the create (see {@link PortsApi.create}).
   */
  tags?: string[];
}

/** What a port update may change. */
export interface PortUpdate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  mac_address?: string;
  fixed_ips?: { subnet_id?: string; ip_address?: string }[];
  device_id?: string;
  device_owner?: string;
  security_groups?: string[];
  port_security_enabled?: boolean;
  allowed_address_pairs?: { ip_address: string; mac_address?: string }[];
  'binding:host_id'?: string;
  'binding:vnic_type'?: string;
  'binding:profile'?: Record<string, unknown>;
}

/** One `fixed_ips=` filter; several keys in one filter, or several filters, must all match. */
export interface FixedIpFilter {
  ip_address?: string;
  subnet_id?: string;
  /** Substring match on the address (the `ip-substring-filtering` extension). */
  ip_address_substr?: string;
}

export interface PortFilters extends StandardFilters {
  network_id?: string | readonly string[];
  device_id?: string | readonly string[];
  device_owner?: string | readonly string[];
  mac_address?: string | readonly string[];
  status?: string;
  admin_state_up?: boolean;
  'binding:host_id'?: string;
  security_groups?: string | readonly string[];
  fixed_ips?: FixedIpFilter | readonly FixedIpFilter[];
}

/** Options of a port create. */
export interface PortCreateOptions extends CallOptions {
  /**
   * Without tags-on-create, tagging bumps each port's `revision_number`, so by default the client re-reads the ports
   * and hands back what Neutron has now (one more GET). `false` skips that GET: the ports come back with the tags set
   * but the create answer's `revision_number` (one behind) — for callers that never send `If-Match`.
   */
  reread?: boolean;
}

/** The Neutron extension that accepts `tags` in a port POST (an ML2 extension driver, off by default). */
export const TAG_PORTS_ON_CREATE = 'tag-ports-during-bulk-creation';

/** Deadline for a bulk create: 100 ports take 10–20 s on a small real Neutron (docs/openstack.md, "Neutron"). */
export function bulkTimeoutMs(count: number): number {
  return 60_000 + 1_000 * count;
}

/**
 * `/v2.0/ports`, with bulk create and tags on create.
 *
 * **Tags on create.** With `tag-ports-during-bulk-creation`, `tags` travel in the POST and the ports are born tagged.
 * Without it (Zed's default) a POST with `tags` is answered 201 but the tags are silently dropped, so the client
 * leaves them out, creates the ports, and tags them right after with one `PUT …/tags` each. A crash
 * between the two leaves an untagged port, so a reconciler must also find its ports by `name` / `device_id`, not by
 * tag alone. When tagging fails the just-created ports are deleted (best effort) and the error is rethrown. When only
 * the re-read after tagging fails, the ports are returned all the same, with the revision their tagging made.
 */
export class PortsApi extends ResourceApi<Port, PortCreate, PortUpdate, PortFilters> {
  readonly #tags: TagsApi;
  readonly #supports: (alias: string, options: CallOptions) => Promise<boolean>;

  constructor(
    transport: NeutronTransport,
    tags: TagsApi,
    supports: (alias: string, options: CallOptions) => Promise<boolean>,
  ) {
    super(transport, { singular: 'port', plural: 'ports', path: 'ports' });
    this.#tags = tags;
    this.#supports = supports;
  }

  /**
   * Creates one port, tagged when `spec.tags` is given.
   *
   * @example
   * const port = await neutron.ports.create(
   *   { network_id, name: `raven/${cluster}/${ns}/${pod}`, device_id: uid, tags: [`raven-pod=${uid}`] },
   *   { signal },
   * );
   */
  override async create(spec: PortCreate, options: PortCreateOptions = {}): Promise<Port> {
    const [port] = await this.#create([spec], options, false);
    return port!;
  }

  /**
   * Creates several ports in one request, in order. Atomic on real Neutron: when one fails (409
   * `IpAddressAlreadyAllocated` …) none is created. The deadline defaults to {@link bulkTimeoutMs}.
   */
  async createBulk(specs: readonly PortCreate[], options: PortCreateOptions = {}): Promise<Port[]> {
    if (specs.length === 0) return [];
    return this.#create(specs, { ...options, timeoutMs: options.timeoutMs ?? bulkTimeoutMs(specs.length) }, true);
  }

  protected override encodeFilters(filters: PortFilters | undefined): object | undefined {
    if (filters?.fixed_ips === undefined) return filters;
    const list: readonly FixedIpFilter[] = Array.isArray(filters.fixed_ips)
      ? filters.fixed_ips
      : [filters.fixed_ips as FixedIpFilter];
    const fixed = list.flatMap((f) =>
      Object.entries(f)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${String(v)}`),
    );
    return { ...filters, fixed_ips: fixed };
  }

  async #create(specs: readonly PortCreate[], createOptions: PortCreateOptions, bulk: boolean): Promise<Port[]> {
    const { reread, ...options } = createOptions;
    const wantTags = specs.some((s) => (s.tags?.length ?? 0) > 0);
    const tagsInBody = wantTags && (await this.#supports(TAG_PORTS_ON_CREATE, options));
    const bodies = specs.map((s) => (tagsInBody ? s : withoutTags(s)));
    const body = bulk ? { ports: bodies } : { port: bodies[0] };
    const res = await this.transport.send<{ ports?: Port[]; port?: Port }>('POST', '/ports', { body, ...options });
    const created = bulk ? res.body?.ports : res.body?.port && [res.body.port];
    if (!Array.isArray(created) || created.length !== specs.length)
      throw badResponse(res, 'POST', '/ports', `expected ${specs.length} port(s) in the answer`);
    if (!wantTags || tagsInBody) return created;

    try {
      await Promise.all(
        created.flatMap((p, i) => {
          const tags = specs[i]?.tags;
          return tags && tags.length > 0 ? [this.#tags.replace('ports', p.id, tags, options)] : [];
        }),
      );
    } catch (err) {
      // Without the caller's signal: it may be what aborted, and the ports must not stay behind untagged.
      await Promise.allSettled(created.map((p) => this.delete(p.id, { timeoutMs: 30_000 })));
      throw err;
    }
    if (reread === false) return created.map((p, i) => ({ ...p, tags: specs[i]?.tags ?? [] }));
    // Tagging bumped revision_number: hand back what Neutron has now.
    const ids = created.map((p) => p.id);
    const now = new Map<string, Port>();
    try {
      for (let i = 0; i < ids.length; i += 50) {
        const page = await this.list(
          { id: ids.slice(i, i + 50) },
          { signal: options.signal, priority: options.priority },
        );
        for (const p of page) now.set(p.id, p);
      }
    } catch {
      // The ports exist and are tagged: failing the create now would leave them made but unknown to the caller. Each
      // tag PUT was one revision; a later change is caught by the caller's If-Match (412) and its re-read.
      return created.map((p, i) => {
        const tags = specs[i]?.tags ?? [];
        return { ...p, tags, revision_number: p.revision_number + (tags.length > 0 ? 1 : 0) };
      });
    }
    return created.map((p, i) => now.get(p.id) ?? { ...p, tags: specs[i]?.tags ?? [] });
  }
}

function withoutTags(spec: PortCreate): Omit<PortCreate, 'tags'> {
  const { tags: _tags, ...rest } = spec;
  return rest;
}
