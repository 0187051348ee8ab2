import { mandatory, optional, ws, type BodySpec, type Spec } from './wsme.ts';

/**
 * The request types of Octavia Zed's API (`octavia/api/v2/types/*.py`): which attributes each call accepts, their
 * wsme types, and the order wsme checks them in. `tenant_id` is the deprecated alias every type with a `project_id`
 * gets (`api/common/types.py BaseMeta`).
 */

const MAX_TIMEOUT = 24 * 24 * 60 * 60 * 1000;
const str255 = optional(ws.str(255));
const tags = optional(ws.list(ws.str(255)));
const port = ws.int(1, 65535);
const timeout = optional(ws.int(0, MAX_TIMEOUT));
const tlsVersions = optional(ws.list(ws.str(32)));
const alpn = optional(ws.list(ws.enum('http/1.0', 'http/1.1', 'h2')));
const project = optional(ws.str(36));

export const listenerProtocols = ['TCP', 'HTTPS', 'HTTP', 'TERMINATED_HTTPS', 'UDP', 'SCTP', 'PROMETHEUS'];
export const poolProtocols = ['TCP', 'HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'UDP', 'SCTP'];
const lbAlgorithms = ['LEAST_CONNECTIONS', 'ROUND_ROBIN', 'SOURCE_IP', 'SOURCE_IP_PORT'];
const monitorTypes = ['HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'];
const httpMethods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'OPTIONS', 'CONNECT', 'PATCH'];
const clientAuth = ['NONE', 'OPTIONAL', 'MANDATORY'];
const expectedCodes = /^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$/;
const domainName = /^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)(?:\.|$))+$/;

const memberCommon = {
  weight: optional(ws.int(0, 256)),
  backup: optional(ws.bool),
  subnet_id: optional(ws.uuid),
};
export const memberSingle: Spec = {
  name: str255,
  admin_state_up: optional(ws.bool),
  address: mandatory(ws.ip),
  protocol_port: mandatory(port),
  ...memberCommon,
  monitor_port: optional(port),
  monitor_address: optional(ws.ip),
  tags,
};
export const memberPost: Spec = {
  name: str255,
  admin_state_up: optional(ws.bool),
  address: mandatory(ws.ip),
  protocol_port: mandatory(port),
  ...memberCommon,
  project_id: project,
  monitor_port: optional(port),
  monitor_address: optional(ws.ip),
  tags,
  tenant_id: project,
};
export const memberPut: Spec = {
  name: str255,
  admin_state_up: optional(ws.bool),
  weight: optional(ws.int(0, 256)),
  backup: optional(ws.bool),
  monitor_port: optional(port),
  monitor_address: optional(ws.ip),
  tags,
};

const monitorChecks = {
  http_method: optional(ws.enum(...httpMethods)),
  url_path: optional(ws.urlpath),
  expected_codes: optional(ws.str(undefined, { pattern: expectedCodes })),
};
const monitorTail = {
  http_version: optional(ws.enum(1.0, 1.1)),
  domain_name: optional(ws.str(255, { min: 1, pattern: domainName })),
};
const retries = ws.int(1, 10);
export const monitorSingle: Spec = {
  name: str255,
  type: mandatory(ws.enum(...monitorTypes)),
  delay: mandatory(ws.int(0)),
  timeout: mandatory(ws.int(0)),
  max_retries_down: optional(retries),
  max_retries: mandatory(retries),
  ...monitorChecks,
  admin_state_up: optional(ws.bool),
  tags,
  ...monitorTail,
};
export const monitorPost: Spec = {
  name: str255,
  type: mandatory(ws.enum(...monitorTypes)),
  delay: mandatory(ws.int(0)),
  timeout: mandatory(ws.int(0)),
  max_retries_down: optional(retries),
  max_retries: mandatory(retries),
  ...monitorChecks,
  admin_state_up: optional(ws.bool),
  project_id: project,
  pool_id: mandatory(ws.uuid),
  tags,
  ...monitorTail,
  tenant_id: project,
};
export const monitorPut: Spec = {
  name: str255,
  delay: optional(ws.int(0)),
  timeout: optional(ws.int(0)),
  max_retries_down: optional(retries),
  max_retries: optional(retries),
  ...monitorChecks,
  admin_state_up: optional(ws.bool),
  tags,
  ...monitorTail,
};

const poolTls = {
  tls_container_ref: str255,
  ca_tls_container_ref: str255,
  crl_container_ref: str255,
  tls_enabled: optional(ws.bool),
  tls_ciphers: optional(ws.str(2048)),
  tls_versions: tlsVersions,
  alpn_protocols: alpn,
};
export const poolSingle: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  protocol: optional(ws.enum(...poolProtocols)),
  lb_algorithm: optional(ws.enum(...lbAlgorithms)),
  session_persistence: optional(ws.any),
  healthmonitor: optional(ws.object('healthmonitor', monitorSingle)),
  members: optional(ws.list(ws.object('members', memberSingle))),
  tags,
  ...poolTls,
};
export const poolPost: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  listener_id: optional(ws.uuid),
  loadbalancer_id: optional(ws.uuid),
  protocol: mandatory(ws.enum(...poolProtocols)),
  lb_algorithm: mandatory(ws.enum(...lbAlgorithms)),
  session_persistence: optional(ws.any),
  project_id: project,
  healthmonitor: optional(ws.object('healthmonitor', monitorSingle)),
  members: optional(ws.list(ws.object('members', memberSingle))),
  tags,
  ...poolTls,
  tenant_id: project,
};
export const poolPut: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  lb_algorithm: optional(ws.enum(...lbAlgorithms)),
  session_persistence: optional(ws.any),
  tags,
  ...poolTls,
};

const listenerMiddle = {
  default_tls_container_ref: str255,
  sni_container_refs: optional(ws.list(ws.str(255))),
};
const listenerTail = {
  insert_headers: optional(ws.dict(ws.str(255))),
  timeout_client_data: timeout,
  timeout_member_connect: timeout,
  timeout_member_data: timeout,
  timeout_tcp_inspect: timeout,
};
const listenerTls = {
  tags,
  client_ca_tls_container_ref: str255,
  client_authentication: optional(ws.enum(...clientAuth)),
  client_crl_container_ref: str255,
  allowed_cidrs: optional(ws.list(ws.cidr)),
  tls_ciphers: optional(ws.str(2048)),
  tls_versions: tlsVersions,
  alpn_protocols: alpn,
};
export const listenerSingle: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  protocol: mandatory(ws.enum(...listenerProtocols)),
  protocol_port: mandatory(port),
  connection_limit: optional(ws.int(-1)),
  ...listenerMiddle,
  default_pool_id: optional(ws.uuid),
  default_pool: optional(ws.object('default_pool', poolSingle)),
  l7policies: optional(ws.list(ws.any)),
  ...listenerTail,
  ...listenerTls,
};
export const listenerPost: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  protocol: mandatory(ws.enum(...listenerProtocols)),
  protocol_port: mandatory(port),
  connection_limit: optional(ws.int(-1)),
  ...listenerMiddle,
  project_id: project,
  default_pool_id: optional(ws.uuid),
  default_pool: optional(ws.object('default_pool', poolSingle)),
  l7policies: optional(ws.list(ws.any)),
  insert_headers: listenerTail.insert_headers,
  loadbalancer_id: mandatory(ws.uuid),
  timeout_client_data: timeout,
  timeout_member_connect: timeout,
  timeout_member_data: timeout,
  timeout_tcp_inspect: timeout,
  ...listenerTls,
  tenant_id: project,
};
export const listenerPut: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  connection_limit: optional(ws.int(-1)),
  ...listenerMiddle,
  default_pool_id: optional(ws.uuid),
  ...listenerTail,
  ...listenerTls,
};

export const loadBalancerPost: Spec = {
  name: str255,
  description: str255,
  admin_state_up: optional(ws.bool),
  vip_address: optional(ws.ip),
  vip_port_id: optional(ws.uuid),
  vip_subnet_id: optional(ws.uuid),
  vip_network_id: optional(ws.uuid),
  vip_qos_policy_id: optional(ws.uuid),
  additional_vips: optional(ws.list(ws.any)),
  project_id: project,
  listeners: optional(ws.list(ws.object('listeners', listenerSingle))),
  pools: optional(ws.list(ws.object('pools', poolSingle))),
  provider: optional(ws.str(64)),
  tags,
  flavor_id: optional(ws.uuid),
  availability_zone: str255,
  tenant_id: project,
};
export const loadBalancerPut: Spec = {
  name: str255,
  description: str255,
  vip_qos_policy_id: optional(ws.uuid),
  admin_state_up: optional(ws.bool),
  tags,
};

/** The body argument of each write: its wsme name, root key, attributes, and what the controller reads first. */
export const bodies = {
  loadBalancerPost: { argname: 'load_balancer', key: 'loadbalancer', spec: loadBalancerPost, firstRead: 'project_id' },
  loadBalancerPut: {
    argname: 'load_balancer',
    key: 'loadbalancer',
    spec: loadBalancerPut,
    firstRead: 'vip_qos_policy_id',
  },
  listenerPost: { argname: 'listener_', key: 'listener', spec: listenerPost, firstRead: 'loadbalancer_id' },
  listenerPut: { argname: 'listener_', key: 'listener', spec: listenerPut, firstRead: '' },
  poolPost: { argname: 'pool_', key: 'pool', spec: poolPost, firstRead: 'loadbalancer_id' },
  poolPut: { argname: 'pool_', key: 'pool', spec: poolPut, firstRead: 'tls_versions' },
  memberPost: { argname: 'member_', key: 'member', spec: memberPost, firstRead: 'address' },
  memberPut: { argname: 'member_', key: 'member', spec: memberPut, firstRead: 'backup' },
  healthmonitorPost: { argname: 'health_monitor_', key: 'healthmonitor', spec: monitorPost, firstRead: 'pool_id' },
  healthmonitorPut: { argname: 'health_monitor_', key: 'healthmonitor', spec: monitorPut, firstRead: 'delay' },
} satisfies Record<string, BodySpec>;
