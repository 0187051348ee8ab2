import type { Clock } from '../../../../src/core/index.ts';
import type { SeededRandom } from '../random.ts';

/**
 * Octavia's in-memory database and the API shapes of its objects, as Zed (11.0.0, API v2.26) answers them: the key
 * order of real responses, `name`/`description` NULL in the database but `""` on the wire, tags and related-object
 * lists in MariaDB's order (tags case-insensitively, `[{id}]` lists by id), `healthmonitor_id` left out when unset.
 */
export type ProvisioningStatus =
  'ACTIVE' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE' | 'ERROR' | 'DELETED';

export interface OctaviaBase {
  id: string;
  /** NULL when not given (a `name=` filter does not match it), `""` on the wire. */
  name: string | null;
  description: string | null;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  operating_status: string;
  admin_state_up: boolean;
  created_at: string;
  updated_at: string | null;
  tags: string[];
}

export interface LoadBalancerRecord extends OctaviaBase {
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string;
  vip_network_id: string;
  /** v2.26: further VIPs on the same port (one per IP family on a dual-stack load balancer). */
  additional_vips?: { subnet_id: string; ip_address: string }[];
  /** Octavia made the VIP port itself (and may delete it with the LB). */
  octaviaOwnedPort: boolean;
  /** The provider driver that runs it (`amphora`, `noop_driver`, `ovn`). */
  provider: string;
}

export interface ListenerRecord extends OctaviaBase {
  loadbalancer_id: string;
  protocol: string;
  protocol_port: number;
  connection_limit: number;
  default_pool_id: string | null;
  extra: Record<string, unknown>;
}

export interface PoolRecord extends OctaviaBase {
  loadbalancer_id: string;
  protocol: string;
  lb_algorithm: string;
  session_persistence: unknown;
  extra: Record<string, unknown>;
}

export interface MemberRecord extends OctaviaBase {
  pool_id: string;
  address: string;
  protocol_port: number;
  weight: number;
  backup: boolean;
  subnet_id: string | null;
  monitor_address: string | null;
  monitor_port: number | null;
}

export interface HealthMonitorRecord extends OctaviaBase {
  pool_id: string;
  type: string;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  http_method: string | null;
  url_path: string | null;
  expected_codes: string | null;
  http_version: number | null;
  domain_name: string | null;
}

/** Octavia's timestamps: UTC, whole seconds, no zone (`2026-11-22T12:07:54`). */
export function octaviaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '');
}

/** MariaDB's default collation (utf8mb3_general_ci): case-insensitive. */
export function ciCompare(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Tags as the tags table gives them back: ordered by tag, case-insensitively. */
export function sortTags(tags: readonly string[]): string[] {
  return [...tags].sort(ciCompare);
}

const byId = <T extends { id: string }>(items: T[]): T[] => items.sort((a, b) => ciCompare(a.id, b.id));

export class OctaviaStore {
  readonly loadbalancers = new Map<string, LoadBalancerRecord>();
  readonly listeners = new Map<string, ListenerRecord>();
  readonly pools = new Map<string, PoolRecord>();
  readonly members = new Map<string, MemberRecord>();
  readonly healthmonitors = new Map<string, HealthMonitorRecord>();

  constructor(
    readonly clock: Clock,
    readonly random: SeededRandom,
  ) {}

  base(project: string, attrs: Record<string, unknown>): OctaviaBase {
    return {
      id: this.random.uuid(),
      name: (attrs.name as string | null | undefined) ?? null,
      description: (attrs.description as string | null | undefined) ?? null,
      project_id: project,
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      admin_state_up: (attrs.admin_state_up as boolean | null | undefined) ?? true,
      created_at: octaviaTime(this.clock.now()),
      updated_at: null,
      tags: sortTags((attrs.tags as string[] | null | undefined) ?? []),
    };
  }

  /** Any write to a row sets `updated_at` (SQLAlchemy `onupdate`). */
  touch(r: OctaviaBase): void {
    r.updated_at = octaviaTime(this.clock.now());
  }

  listenersOf(lbId: string): ListenerRecord[] {
    return byId([...this.listeners.values()].filter((l) => l.loadbalancer_id === lbId));
  }

  poolsOf(lbId: string): PoolRecord[] {
    return byId([...this.pools.values()].filter((p) => p.loadbalancer_id === lbId));
  }

  membersOf(poolId: string): MemberRecord[] {
    return byId([...this.members.values()].filter((m) => m.pool_id === poolId));
  }

  monitorOf(poolId: string): HealthMonitorRecord | undefined {
    return [...this.healthmonitors.values()].find((h) => h.pool_id === poolId);
  }

  /** The listeners whose default pool this is (a pool is reached from them). */
  listenersOfPool(poolId: string): ListenerRecord[] {
    return byId([...this.listeners.values()].filter((l) => l.default_pool_id === poolId));
  }
}

const ids = (items: { id: string }[]): { id: string }[] => items.map((i) => ({ id: i.id }));
const text = (v: string | null): string => v ?? '';

const listenerTls = {
  client_ca_tls_container_ref: null,
  client_authentication: 'NONE',
  client_crl_container_ref: null,
  allowed_cidrs: null,
  tls_ciphers: null,
  tls_versions: null,
  alpn_protocols: null,
};
const listenerTimeouts = {
  timeout_client_data: 50000,
  timeout_member_connect: 5000,
  timeout_member_data: 50000,
  timeout_tcp_inspect: 0,
};
const poolTls = {
  tls_container_ref: null,
  ca_tls_container_ref: null,
  crl_container_ref: null,
  tls_enabled: false,
  tls_ciphers: null,
  tls_versions: null,
  alpn_protocols: null,
};

/** Picks the keys of `defaults` from a record's `extra` (what the caller set), in the defaults' order. */
function withExtra(defaults: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, k in extra ? extra[k] : v]));
}

function lbFields(lb: LoadBalancerRecord): Record<string, unknown> {
  return {
    id: lb.id,
    name: text(lb.name),
    description: text(lb.description),
    provisioning_status: lb.provisioning_status,
    operating_status: lb.operating_status,
    admin_state_up: lb.admin_state_up,
    project_id: lb.project_id,
    created_at: lb.created_at,
    updated_at: lb.updated_at,
    vip_address: lb.vip_address,
    vip_port_id: lb.vip_port_id,
    vip_subnet_id: lb.vip_subnet_id,
    vip_network_id: lb.vip_network_id,
    additional_vips: (lb.additional_vips ?? []).map((v) => ({ ...v })),
  };
}

function lbTail(lb: LoadBalancerRecord): Record<string, unknown> {
  return {
    provider: lb.provider,
    flavor_id: null,
    vip_qos_policy_id: null,
    tags: [...lb.tags],
    availability_zone: null,
    tenant_id: lb.project_id,
  };
}

export function serializeLoadBalancer(s: OctaviaStore, lb: LoadBalancerRecord): Record<string, unknown> {
  return { ...lbFields(lb), listeners: ids(s.listenersOf(lb.id)), pools: ids(s.poolsOf(lb.id)), ...lbTail(lb) };
}

/** The fully-populated create's answer: listeners and pools inline (`LoadBalancerFullResponse`). */
export function serializeLoadBalancerTree(s: OctaviaStore, lb: LoadBalancerRecord): Record<string, unknown> {
  return {
    listeners: s.listenersOf(lb.id).map((l) => serializeListener(s, l, true)),
    pools: s.poolsOf(lb.id).map((p) => serializePool(s, p, true)),
    ...lbFields(lb),
    ...lbTail(lb),
  };
}

/**
 * `full`: as inside a fully-populated create's answer (`ListenerFullResponse`: no `loadbalancers`, `l7policies` first).
 */
export function serializeListener(s: OctaviaStore, l: ListenerRecord, full = false): Record<string, unknown> {
  const e = l.extra;
  const body: Record<string, unknown> = {
    ...(full ? { l7policies: [] } : {}),
    id: l.id,
    name: text(l.name),
    description: text(l.description),
    provisioning_status: l.provisioning_status,
    operating_status: l.operating_status,
    admin_state_up: l.admin_state_up,
    protocol: l.protocol,
    protocol_port: l.protocol_port,
    connection_limit: l.connection_limit,
    default_tls_container_ref: 'default_tls_container_ref' in e ? e.default_tls_container_ref : null,
    sni_container_refs: e.sni_container_refs ?? [],
    project_id: l.project_id,
    default_pool_id: l.default_pool_id,
    ...(full ? {} : { l7policies: [] }),
    insert_headers: e.insert_headers ?? {},
    created_at: l.created_at,
    updated_at: l.updated_at,
    ...(full ? {} : { loadbalancers: [{ id: l.loadbalancer_id }] }),
    ...withExtra(listenerTimeouts, e),
    tags: [...l.tags],
    ...withExtra(listenerTls, e),
    tenant_id: l.project_id,
  };
  return body;
}

/**
 * `full`: as inside a fully-populated create's answer (`PoolFullResponse`): members inline, no `loadbalancers` and no
 * `healthmonitor_id`, and `healthmonitor` always null — Zed's `PoolResponse.from_data_model` tests
 * `pool.healthmonitor`,
 * which is never set, so the monitor that was created is not shown.
 */
export function serializePool(s: OctaviaStore, p: PoolRecord, full = false): Record<string, unknown> {
  const hm = s.monitorOf(p.id);
  const members = s.membersOf(p.id);
  return {
    ...(full ? { members: members.map(serializeMember), healthmonitor: null } : {}),
    id: p.id,
    name: text(p.name),
    description: text(p.description),
    provisioning_status: p.provisioning_status,
    operating_status: p.operating_status,
    admin_state_up: p.admin_state_up,
    protocol: p.protocol,
    lb_algorithm: p.lb_algorithm,
    session_persistence: p.session_persistence,
    project_id: p.project_id,
    ...(full ? {} : { loadbalancers: [{ id: p.loadbalancer_id }] }),
    listeners: ids(s.listenersOfPool(p.id)),
    created_at: p.created_at,
    updated_at: p.updated_at,
    ...(full ? {} : { ...(hm ? { healthmonitor_id: hm.id } : {}), members: ids(members) }),
    tags: [...p.tags],
    ...withExtra(poolTls, p.extra),
    tenant_id: p.project_id,
  };
}

export function serializeMember(m: MemberRecord): Record<string, unknown> {
  return {
    id: m.id,
    name: text(m.name),
    operating_status: m.operating_status,
    provisioning_status: m.provisioning_status,
    admin_state_up: m.admin_state_up,
    address: m.address,
    protocol_port: m.protocol_port,
    weight: m.weight,
    backup: m.backup,
    subnet_id: m.subnet_id,
    project_id: m.project_id,
    created_at: m.created_at,
    updated_at: m.updated_at,
    monitor_address: m.monitor_address,
    monitor_port: m.monitor_port,
    tags: [...m.tags],
    tenant_id: m.project_id,
  };
}

export function serializeMonitor(h: HealthMonitorRecord): Record<string, unknown> {
  return {
    id: h.id,
    name: text(h.name),
    type: h.type,
    delay: h.delay,
    timeout: h.timeout,
    max_retries: h.max_retries,
    max_retries_down: h.max_retries_down,
    http_method: h.http_method,
    url_path: h.url_path,
    expected_codes: h.expected_codes,
    admin_state_up: h.admin_state_up,
    project_id: h.project_id,
    pools: [{ id: h.pool_id }],
    provisioning_status: h.provisioning_status,
    operating_status: h.operating_status,
    created_at: h.created_at,
    updated_at: h.updated_at,
    tags: [...h.tags],
    http_version: h.http_version,
    domain_name: h.domain_name,
    tenant_id: h.project_id,
  };
}

/** `GET /loadbalancers/{id}/status`: listeners, their default pools, members and monitor, in the real key order. */
export function serializeStatusTree(s: OctaviaStore, lb: LoadBalancerRecord): Record<string, unknown> {
  const pool = (p: PoolRecord): Record<string, unknown> => {
    const hm = s.monitorOf(p.id);
    return {
      id: p.id,
      name: text(p.name),
      provisioning_status: p.provisioning_status,
      operating_status: p.operating_status,
      ...(hm
        ? {
            health_monitor: {
              id: hm.id,
              name: text(hm.name),
              type: hm.type,
              provisioning_status: hm.provisioning_status,
              operating_status: hm.operating_status,
            },
          }
        : {}),
      members: s.membersOf(p.id).map((m) => ({
        id: m.id,
        name: text(m.name),
        operating_status: m.operating_status,
        provisioning_status: m.provisioning_status,
        address: m.address,
        protocol_port: m.protocol_port,
      })),
    };
  };
  const listeners = s.listenersOf(lb.id).map((l) => {
    const p = l.default_pool_id ? s.pools.get(l.default_pool_id) : undefined;
    return {
      id: l.id,
      name: text(l.name),
      operating_status: l.operating_status,
      provisioning_status: l.provisioning_status,
      pools: p ? [pool(p)] : [],
    };
  });
  return {
    statuses: {
      loadbalancer: {
        id: lb.id,
        name: text(lb.name),
        operating_status: lb.operating_status,
        provisioning_status: lb.provisioning_status,
        listeners,
      },
    },
  };
}
