/**
 * Octavia v2 wire types, with the API's own snake_case field names, as Zed (API v2.26) sends them. Fields a newer
 * minor version adds are optional. Create and update specs are separate types: what the API accepts is not what it
 * answers with.
 */

/** Lifecycle state; every change passes through a `PENDING_*` state, during which the load balancer is immutable. */
export type ProvisioningStatus =
  'ACTIVE' | 'DELETED' | 'ERROR' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE';

/** Observed health. Without a health manager (Raven's dev Octavia) load balancers and listeners stay `OFFLINE`. */
export type OperatingStatus = 'ONLINE' | 'DRAINING' | 'OFFLINE' | 'DEGRADED' | 'ERROR' | 'NO_MONITOR';

export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TCP' | 'TERMINATED_HTTPS' | 'UDP' | 'SCTP' | 'PROMETHEUS';
export type PoolProtocol = 'HTTP' | 'HTTPS' | 'PROXY' | 'PROXYV2' | 'TCP' | 'UDP' | 'SCTP';
export type LbAlgorithm = 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';
export type HealthMonitorType = 'HTTP' | 'HTTPS' | 'PING' | 'TCP' | 'TLS-HELLO' | 'UDP-CONNECT' | 'SCTP';

/** How responses refer to related objects: `listeners: [{ id }]`. */
export interface IdRef {
  id: string;
}

/** Fields every Octavia object shares. */
interface Provisioned {
  id: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  admin_state_up: boolean;
  /** Needs v2.5; older APIs leave it out. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

export interface AdditionalVip {
  subnet_id: string;
  ip_address: string;
}

export interface LoadBalancer extends Provisioned {
  name: string;
  description: string;
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string;
  vip_network_id: string;
  vip_qos_policy_id: string | null;
  /** v2.26. */
  additional_vips?: AdditionalVip[];
  listeners: IdRef[];
  pools: IdRef[];
  provider: string;
  flavor_id: string | null;
  availability_zone?: string | null;
}

export interface Listener extends Provisioned {
  name: string;
  description: string;
  protocol: ListenerProtocol;
  protocol_port: number;
  connection_limit: number;
  default_pool_id: string | null;
  loadbalancers: IdRef[];
  l7policies: IdRef[];
  insert_headers: Record<string, string>;
  timeout_client_data: number;
  timeout_member_connect: number;
  timeout_member_data: number;
  timeout_tcp_inspect: number;
  default_tls_container_ref: string | null;
  sni_container_refs: string[];
  allowed_cidrs?: string[] | null;
}

export interface SessionPersistence {
  type: 'SOURCE_IP' | 'HTTP_COOKIE' | 'APP_COOKIE';
  cookie_name?: string | null;
  persistence_timeout?: number | null;
  persistence_granularity?: string | null;
}

export interface Pool extends Provisioned {
  name: string;
  description: string;
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  session_persistence: SessionPersistence | null;
  loadbalancers: IdRef[];
  listeners: IdRef[];
  members: IdRef[];
  /** Left out (not null) when the pool has no health monitor. */
  healthmonitor_id?: string;
  tls_enabled?: boolean;
}

export interface Member extends Provisioned {
  name: string;
  address: string;
  protocol_port: number;
  weight: number;
  backup: boolean;
  subnet_id: string | null;
  monitor_address: string | null;
  monitor_port: number | null;
}

export interface HealthMonitor extends Provisioned {
  name: string;
  type: HealthMonitorType;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  http_method?: string | null;
  url_path?: string | null;
  expected_codes?: string | null;
  /** v2.10. */
  http_version?: number | null;
  domain_name?: string | null;
  pools: IdRef[];
}

/** A listener as a fully-populated create answers it (`ListenerFullResponse`): no `loadbalancers`. */
export type ListenerTree = Omit<Listener, 'loadbalancers'>;

/**
 * A pool as a fully-populated create answers it (`PoolFullResponse`): members inline, no `loadbalancers`, no
 * `healthmonitor_id`.
 */
export interface PoolTree extends Omit<Pool, 'members' | 'loadbalancers' | 'healthmonitor_id'> {
  members: Member[];
  /**
   * Always null on Zed, even when a monitor was created with the pool (`PoolResponse.from_data_model` tests an
   * attribute it never sets). `pools.get(id).healthmonitor_id` has the monitor.
   */
  healthmonitor: HealthMonitor | null;
}

/** A load balancer as a fully-populated create answers it: listeners and pools inline (pools ordered by id). */
export interface LoadBalancerTree extends Omit<LoadBalancer, 'listeners' | 'pools'> {
  listeners: ListenerTree[];
  pools: PoolTree[];
}

// ---- create specs ----------------------------------------------------------------------------------------------

/** Give exactly one of `vip_subnet_id`, `vip_network_id` or `vip_port_id` (a port alone fails with noop networking). */
export interface LoadBalancerCreate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  /** Admins may create for another project; without Keystone this (or `X-Project-Id`) names the project. */
  project_id?: string;
  vip_subnet_id?: string;
  vip_network_id?: string;
  vip_port_id?: string;
  vip_address?: string;
  vip_qos_policy_id?: string;
  /** v2.26. */
  additional_vips?: { subnet_id: string; ip_address?: string }[];
  provider?: string;
  flavor_id?: string;
  availability_zone?: string;
  tags?: string[];
}

export interface MemberCreate {
  address: string;
  protocol_port: number;
  name?: string;
  weight?: number;
  backup?: boolean;
  subnet_id?: string;
  monitor_address?: string;
  monitor_port?: number;
  admin_state_up?: boolean;
  tags?: string[];
}

interface HealthMonitorFields {
  type: HealthMonitorType;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down?: number;
  name?: string;
  http_method?: string;
  url_path?: string;
  expected_codes?: string;
  http_version?: number;
  domain_name?: string;
  admin_state_up?: boolean;
  tags?: string[];
}

export interface HealthMonitorCreate extends HealthMonitorFields {
  pool_id: string;
}

interface PoolFields {
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  session_persistence?: SessionPersistence | null;
  tls_enabled?: boolean;
  tags?: string[];
}

/** Give `listener_id` (becomes its default pool) or `loadbalancer_id` (or both). */
export interface PoolCreate extends PoolFields {
  loadbalancer_id?: string;
  listener_id?: string;
}

interface ListenerFields {
  protocol: ListenerProtocol;
  protocol_port: number;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  connection_limit?: number;
  insert_headers?: Record<string, string>;
  timeout_client_data?: number;
  timeout_member_connect?: number;
  timeout_member_data?: number;
  timeout_tcp_inspect?: number;
  /** v2.12. */
  allowed_cidrs?: string[];
  tags?: string[];
}

export interface ListenerCreate extends ListenerFields {
  loadbalancer_id: string;
  default_pool_id?: string;
}

/** A pool inside a fully-populated create: it must be named; a second reference gives the name only. */
export interface PoolTreeCreate extends PoolFields {
  name: string;
  members?: MemberCreate[];
  healthmonitor?: HealthMonitorFields;
}

export interface ListenerTreeCreate extends ListenerFields {
  default_pool?: PoolTreeCreate | { name: string };
}

/** A fully-populated create: the load balancer with its listeners, pools, members and monitors, in one call. */
export interface LoadBalancerTreeCreate extends LoadBalancerCreate {
  listeners?: ListenerTreeCreate[];
  pools?: PoolTreeCreate[];
}

// ---- update specs ----------------------------------------------------------------------------------------------

export type LoadBalancerUpdate = Partial<
  Pick<LoadBalancerCreate, 'name' | 'description' | 'admin_state_up' | 'vip_qos_policy_id' | 'tags'>
>;
export type ListenerUpdate = Partial<Omit<ListenerFields, 'protocol' | 'protocol_port'>> & {
  default_pool_id?: string | null;
};
export type PoolUpdate = Partial<Omit<PoolFields, 'protocol'>>;
export type MemberUpdate = Partial<Omit<MemberCreate, 'address' | 'protocol_port' | 'subnet_id'>>;
export type HealthMonitorUpdate = Partial<Omit<HealthMonitorFields, 'type'>>;

// ---- read-only views -------------------------------------------------------------------------------------------

export interface LoadBalancerStats {
  active_connections: number;
  bytes_in: number;
  bytes_out: number;
  request_errors: number;
  total_connections: number;
}

interface StatusNode {
  id: string;
  name?: string;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
}

/** `GET /loadbalancers/{id}/status`: the provisioning and operating status of the whole tree. */
export interface LoadBalancerStatusTree extends StatusNode {
  listeners: (StatusNode & {
    pools: (StatusNode & {
      /** Named `health_monitor` here (PoolStatusResponse), unlike `healthmonitor` everywhere else. */
      health_monitor?: StatusNode & { type: HealthMonitorType };
      members: (StatusNode & { address: string; protocol_port: number })[];
    })[];
  })[];
}
