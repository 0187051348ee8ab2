/**
 * openstack: Raven's OpenStack clients. Imports core only.
 *
 * Contract:
 * - A {@link CloudConfig} comes from clouds.yaml (+ secure.yaml) or `OS_*` variables, resolved like openstacksdk
 *   (`loadCloudConfig`). It holds secrets: log it only through `describeCloud`.
 * - An {@link OpenStackSession} authenticates (Keystone v3 password / application credential / token, or none),
 *   picks endpoints (override, else catalog by type, interface and region), and sends every request through one
 *   keep-alive HTTP client (core/http-client.ts) and a chain of interceptors: logging (request id, never secrets) →
 *   retry (idempotent requests only, on 429/5xx/connection failures, honouring Retry-After) → a concurrency cap per
 *   service → auth (token, renewed before expiry, re-authenticated once on a 401). Observers (`session.observe`) are
 *   told of every HTTP exchange — service, method, route template (`/v2.0/ports/{id}`), status, duration, attempt — for
 *   metrics.
 * - Every failure is an {@link OpenStackError}: stable `code` per HTTP status, the service's own error `type`
 *   (`IpAddressAlreadyAllocated`, `OverQuota` …), the request id, and the method and path.
 * - Typed Neutron and Octavia clients sit on the session; they never sleep or poll: Octavia's provisioning states are
 *   reported for the caller to requeue.
 */
export {
  type ServiceType,
  OpenStackError,
  OpenStackConfigError,
  isOpenStackError,
  isNotFound,
  isConflict,
  isBadRequest,
  isUnreachable,
  codeForStatus,
  parseErrorBody,
  type OpenStackErrorDetails,
} from './errors.ts';
export { loadCloudConfig, type LoadCloudOptions } from './config/clouds.ts';
export {
  describeCloud,
  type CloudConfig,
  type AuthConfig,
  type PasswordAuth,
  type ApplicationCredentialAuth,
  type TokenAuth,
  type NoAuth,
  type EndpointInterface,
} from './config/types.ts';
export {
  KeystoneAuthenticator,
  noAuthenticator,
  tokenRequestBody,
  v3Url,
  type Authenticator,
  type AuthSession,
  type CatalogService,
  type CatalogEndpoint,
} from './auth/keystone.ts';
export { endpointFor } from './auth/catalog.ts';
export {
  OpenStackSession,
  type OpenStackRequest,
  type OpenStackResponse,
  type SessionOptions,
  type QueryValue,
} from './session.ts';
export {
  compose,
  type Interceptor,
  type Handler,
  type PreparedRequest,
  type RawResponse,
  type RequestPriority,
} from './transport/http.ts';
export { Semaphore } from './transport/interceptors.ts';
export { operationOf, type RequestObserver, type RequestSample } from './transport/observe.ts';
export { DryRunCloud, matchesQuery, str, type PlannedWrite } from './transport/dry-run.ts';
export * from './octavia/index.ts';
export * from './neutron/index.ts';
