import type { Clock } from '../../../core/index.ts';
import type { SeededRandom } from '../random.ts';

/** Octavia's in-memory database and the API shapes of its objects (Zed, API v2.26). */
export type ProvisioningStatus = 'ACTIVE' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE' | 'ERROR' | 'DELETED';

export interface OctaviaBase {
  id: string;
  name: string;
  description: string;
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
  /** Octavia made the VIP port itself (and may delete it with the LB). */
  octaviaOwnedPort: boolean;
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

/** Octavia's timestamps: seconds, no zone. */
export function octaviaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '');
}

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
      name: (attrs.name as string | undefined) ?? '',
      description: (attrs.description as string | undefined) ?? '',
      project_id: project,
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      admin_state_up: (attrs.admin_state_up as boolean | undefined) ?? true,
      created_at: octaviaTime(this.clock.now()),
      updated_at: null,
      tags: [...((attrs.tags as string[] | undefined) ?? [])],
    };
  }

  touch(r: OctaviaBase): void {
    r.updated_at = octaviaTime(this.clock.now());
  }

  listenersOf(lbId: string): ListenerRecord[] {
    return [...this.listeners.values()].filter((l) => l.loadbalancer_id === lbId);
  }

  poolsOf(lbId: string): PoolRecord[] {
    return [...this.pools.values()].filter((p) => p.loadbalancer_id === lbId);
  }

  membersOf(poolId: string): MemberRecord[] {
    return [...this.members.values()].filter((m) => m.pool_id === poolId);
  }

  monitorOf(poolId: string): HealthMonitorRecord | undefined {
    return [...this.healthmonitors.values()].find((h) => h.pool_id === poolId);
  }

  /** The listeners whose default pool this is (a pool is reached from them). */
  listenersOfPool(poolId: string): ListenerRecord[] {
    return [...this.listeners.values()].filter((l) => l.default_pool_id === poolId);
  }
}

const listenerDefaults = {
  default_tls_container_ref: null, sni_container_refs: [], l7policies: [], insert_headers: {}, timeout_client_data: 50000,
  timeout_member_connect: 5000, timeout_member_data: 50000, timeout_tcp_inspect: 0, client_ca_tls_container_ref: null,
  client_authentication: 'NONE', client_crl_container_ref: null, allowed_cidrs: null, tls_ciphers: null, tls_versions: null, alpn_protocols: null,
};
const poolDefaults = { tls_container_ref: null, ca_tls_container_ref: null, crl_container_ref: null, tls_enabled: false, tls_ciphers: null, tls_versions: null, alpn_protocols: null };

export function serializeLoadBalancer(s: OctaviaStore, lb: LoadBalancerRecord): Record<string, unknown> {
  return {
    listeners: s.listenersOf(lb.id).map((l) => ({ id: l.id })), description: lb.description, provisioning_status: lb.provisioning_status,
    id: lb.id, vip_address: lb.vip_address, vip_network_id: lb.vip_network_id, vip_subnet_id: lb.vip_subnet_id, vip_port_id: lb.vip_port_id,
    provider: 'amphora', pools: s.poolsOf(lb.id).map((p) => ({ id: p.id })), created_at: lb.created_at, updated_at: lb.updated_at,
    operating_status: lb.operating_status, name: lb.name, vip_qos_policy_id: null, availability_zone: null, flavor_id: null,
    project_id: lb.project_id, tenant_id: lb.project_id, admin_state_up: lb.admin_state_up, tags: [...lb.tags], additional_vips: [],
  };
}

export function serializeListener(s: OctaviaStore, l: ListenerRecord): Record<string, unknown> {
  return {
    id: l.id, name: l.name, description: l.description, provisioning_status: l.provisioning_status, operating_status: l.operating_status,
    admin_state_up: l.admin_state_up, protocol: l.protocol, protocol_port: l.protocol_port, connection_limit: l.connection_limit,
    project_id: l.project_id, tenant_id: l.project_id, default_pool_id: l.default_pool_id, loadbalancers: [{ id: l.loadbalancer_id }],
    created_at: l.created_at, updated_at: l.updated_at, tags: [...l.tags], ...listenerDefaults, ...l.extra,
  };
}

export function serializePool(s: OctaviaStore, p: PoolRecord): Record<string, unknown> {
  return {
    id: p.id, name: p.name, description: p.description, provisioning_status: p.provisioning_status, operating_status: p.operating_status,
    admin_state_up: p.admin_state_up, protocol: p.protocol, lb_algorithm: p.lb_algorithm, session_persistence: p.session_persistence,
    project_id: p.project_id, tenant_id: p.project_id, loadbalancers: [{ id: p.loadbalancer_id }],
    listeners: s.listenersOfPool(p.id).map((l) => ({ id: l.id })), created_at: p.created_at, updated_at: p.updated_at,
    healthmonitor_id: s.monitorOf(p.id)?.id ?? null, members: s.membersOf(p.id).map((m) => ({ id: m.id })), tags: [...p.tags], ...poolDefaults, ...p.extra,
  };
}

export function serializeMember(m: MemberRecord): Record<string, unknown> {
  return {
    id: m.id, name: m.name, operating_status: m.operating_status, provisioning_status: m.provisioning_status, admin_state_up: m.admin_state_up,
    address: m.address, protocol_port: m.protocol_port, weight: m.weight, backup: m.backup, subnet_id: m.subnet_id, project_id: m.project_id,
    tenant_id: m.project_id, created_at: m.created_at, updated_at: m.updated_at, monitor_address: m.monitor_address, monitor_port: m.monitor_port, tags: [...m.tags],
  };
}

export function serializeMonitor(h: HealthMonitorRecord): Record<string, unknown> {
  return {
    id: h.id, name: h.name, project_id: h.project_id, tenant_id: h.project_id, type: h.type, delay: h.delay, timeout: h.timeout,
    max_retries: h.max_retries, max_retries_down: h.max_retries_down, http_method: h.http_method, url_path: h.url_path,
    expected_codes: h.expected_codes, admin_state_up: h.admin_state_up, pools: [{ id: h.pool_id }], created_at: h.created_at,
    updated_at: h.updated_at, provisioning_status: h.provisioning_status, operating_status: h.operating_status, tags: [...h.tags],
    http_version: h.http_version, domain_name: h.domain_name,
  };
}
