/**
 * openstack/neutron: a typed Neutron v2.0 client on an `OpenStackSession`. Imports the openstack folder's session
 * and errors only.
 *
 * Contract:
 * - `new NeutronClient(session)` has one sub-API per resource family (networks, subnets, subnetPools, routers, ports,
 *   floatingIps, securityGroups, securityGroupRules, trunks) with `list` (every page, following `<collection>_links` markers),
 *   `pages` (async-iterable pages), `get`, `create`, `update` (optionally conditional on `revision_number`: 412
 *   `RevisionNumberConstraintFailed` when stale) and `delete` (`true` deleted, `false` already gone: idempotent).
 * - Types are the wire data: snake_case field names exactly as Neutron sends them; create specs and updates are
 *   separate types; `list(…, { fields })` is typed as the picked fields.
 * - Failures are `OpenStackError`s carrying Neutron's error `type` (`IpAddressAlreadyAllocated`, `OverQuota` …); an
 *   answer of the wrong shape is `OPENSTACK_BAD_RESPONSE`.
 * - Never sleeps or polls (port and floating IP status is reported, not waited for); every method takes `{ signal }`.
 *   Non-idempotent PUTs (router interfaces, trunk subports) are marked so the transport never retries them.
 * - Port tags on create go in the POST when the server has `tag-ports-during-bulk-creation`, else in a second request:
 *   a crash in between leaves an untagged port, so callers also identify ports by name / device_id.
 */
export { NeutronClient, type NeutronExtension } from './client.ts';
export {
  NeutronTransport,
  ResourceApi,
  type StandardAttributes,
  type UpdateOptions,
  type CollectionNames,
  type Identified,
} from './resource.ts';
export {
  type CallOptions,
  type ListOptions,
  type SortDir,
  type FilterValue,
  type TagFilters,
  type StandardFilters,
} from './query.ts';
export { NetworksApi, type Network, type NetworkCreate, type NetworkUpdate, type NetworkFilters } from './networks.ts';
export {
  SubnetsApi,
  SubnetPoolsApi,
  type Subnet,
  type SubnetCreate,
  type SubnetUpdate,
  type SubnetFilters,
  type AllocationPool,
  type HostRoute,
  type SubnetPool,
  type SubnetPoolCreate,
  type SubnetPoolUpdate,
  type SubnetPoolFilters,
} from './subnets.ts';
export {
  PortsApi,
  TAG_PORTS_ON_CREATE,
  bulkTimeoutMs,
  type Port,
  type PortCreate,
  type PortCreateOptions,
  type PortUpdate,
  type PortFilters,
  type FixedIp,
  type FixedIpFilter,
  type AllowedAddressPair,
  type TrunkDetails,
} from './ports.ts';
export {
  RoutersApi,
  type Router,
  type RouterCreate,
  type RouterUpdate,
  type RouterFilters,
  type RouterGatewayInfo,
  type RouterGatewaySpec,
  type RouterInterface,
  type RouterInterfaceTarget,
} from './routers.ts';
export {
  FloatingIpsApi,
  type FloatingIp,
  type FloatingIpCreate,
  type FloatingIpUpdate,
  type FloatingIpFilters,
  type FloatingIpPortDetails,
} from './floating-ips.ts';
export {
  SecurityGroupsApi,
  SecurityGroupRulesApi,
  type SecurityGroup,
  type SecurityGroupCreate,
  type SecurityGroupUpdate,
  type SecurityGroupFilters,
  type SecurityGroupRule,
  type SecurityGroupRuleCreate,
  type SecurityGroupRuleFilters,
} from './security-groups.ts';
export {
  TrunksApi,
  type Trunk,
  type TrunkCreate,
  type TrunkUpdate,
  type TrunkFilters,
  type SubPort,
} from './trunks.ts';
export { TagsApi, type TaggableResource } from './tags.ts';
export { QuotasApi, type QuotaResource, type QuotaSet, type QuotaDetails, type QuotaUsage } from './quotas.ts';
