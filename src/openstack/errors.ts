import { RavenError } from '../core/index.ts';

/** The OpenStack services Raven talks to, by their catalog type. */
export type ServiceType = 'identity' | 'network' | 'load-balancer';

export interface OpenStackErrorDetails {
  service: ServiceType;
  method: string;
  /** Path below the service endpoint, without the query (queries may name things, never secrets, but stay short). */
  path: string;
  /** HTTP status; 0 when no response arrived. */
  status: number;
  /**
   * Neutron's `NeutronError.type` (`IpAddressAlreadyAllocated`, `OverQuota`, `PortNotFound` …), Keystone's error title,
   * or '' (Octavia sends none).
   */
  type: string;
  /** `X-OpenStack-Request-Id`, to find the request in the service's logs. */
  requestId: string | undefined;
}

const statusCodes: Record<number, string> = {
  400: 'OPENSTACK_BAD_REQUEST',
  401: 'OPENSTACK_UNAUTHORIZED',
  403: 'OPENSTACK_FORBIDDEN',
  404: 'OPENSTACK_NOT_FOUND',
  409: 'OPENSTACK_CONFLICT',
  412: 'OPENSTACK_PRECONDITION_FAILED',
  413: 'OPENSTACK_TOO_LARGE',
  429: 'OPENSTACK_TOO_MANY_REQUESTS',
  503: 'OPENSTACK_UNAVAILABLE',
};

/** The stable code for an HTTP status (`OPENSTACK_CONFLICT`…; other 5xx → `OPENSTACK_SERVER_ERROR`). */
export function codeForStatus(status: number): string {
  return (
    statusCodes[status] ??
    (status >= 500 ? 'OPENSTACK_SERVER_ERROR' : status === 0 ? 'OPENSTACK_UNREACHABLE' : `OPENSTACK_HTTP_${status}`)
  );
}

/**
 * Finer stable codes for Neutron's trunk rules (services/trunk), which a reconciler acts on differently: a VLAN id
 * taken on the trunk means "pick another", a port already in a trunk means "that port is someone else's".
 */
const neutronTypeCodes: Record<string, string> = {
  DuplicateSubPort: 'OPENSTACK_TRUNK_VLAN_TAKEN',
  TrunkPortInUse: 'OPENSTACK_TRUNK_PORT_IN_USE',
  ParentPortInUse: 'OPENSTACK_TRUNK_PARENT_IN_USE',
  PortInUseAsSubPort: 'OPENSTACK_TRUNK_PORT_IN_USE',
  PortInUseAsTrunkParent: 'OPENSTACK_TRUNK_PARENT_IN_USE',
  SubPortNotFound: 'OPENSTACK_TRUNK_SUBPORT_NOT_FOUND',
  TrunkDisabled: 'OPENSTACK_TRUNK_DISABLED',
  TrunkInUse: 'OPENSTACK_TRUNK_IN_USE',
  TrunkInErrorState: 'OPENSTACK_TRUNK_ERROR',
  SubPortMtuGreaterThanTrunkPortMtu: 'OPENSTACK_TRUNK_MTU',
};

/** The stable code of a failed call: a trunk rule's own (above), else the status's. */
function codeFor(details: OpenStackErrorDetails): string {
  return (details.service === 'network' ? neutronTypeCodes[details.type] : undefined) ?? codeForStatus(details.status);
}

/**
 * A failed OpenStack call: which service and request, the HTTP status, the service's own error type and message, and
 * the request id. `code` is stable per status (`OPENSTACK_NOT_FOUND`), finer for trunk rules
 * (`OPENSTACK_TRUNK_VLAN_TAKEN` …); `type` is the finer-grained service error. The
 * request id stays out of `message` (see {@link RavenError.requestId}): `errorMessage(err)` adds it for logs.
 *
 * @example
 * try { await neutron.ports.create(spec, { signal }); }
 * catch (err) { if (isOpenStackError(err, 'IpAddressAlreadyAllocated')) … }
 */
export class OpenStackError extends RavenError {
  readonly service: ServiceType;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly type: string;

  constructor(details: OpenStackErrorDetails, message: string, options?: { cause?: unknown; code?: string }) {
    const where = `${details.service} ${details.method} ${details.path}`;
    const what =
      details.status === 0 ? message : `${details.status}${details.type ? ` ${details.type}` : ''}: ${message}`;
    super(options?.code ?? codeFor(details), `${where}: ${what}`, {
      cause: options?.cause,
      requestId: details.requestId,
    });
    this.service = details.service;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.type = details.type;
  }

  /** No response (unreachable, timed out; not our own abort), or a 5xx. */
  override get outage(): boolean {
    return this.status >= 500 || this.code === 'OPENSTACK_UNREACHABLE' || this.code === 'OPENSTACK_TIMEOUT';
  }
}

/** True for an {@link OpenStackError}, optionally of one service error `type` (e.g. `OverQuota`). */
export function isOpenStackError(err: unknown, type?: string): err is OpenStackError {
  return err instanceof OpenStackError && (type === undefined || err.type === type);
}

export const isNotFound = (err: unknown): err is OpenStackError => err instanceof OpenStackError && err.status === 404;
export const isConflict = (err: unknown): err is OpenStackError => err instanceof OpenStackError && err.status === 409;
export const isBadRequest = (err: unknown): err is OpenStackError =>
  err instanceof OpenStackError && err.status === 400;
export const isUnreachable = (err: unknown): err is OpenStackError => err instanceof OpenStackError && err.status === 0;

/** Configuration that cannot work (a missing cloud, no auth URL, an endpoint not in the catalog): fix the config. */
export class OpenStackConfigError extends RavenError {}

/**
 * The service's error type and message from an error body:
 * Neutron `{"NeutronError": {"type", "message"}}`, Octavia `{"faultstring"}` (or pecan's `{"code", "title",
 * "description"}`),
 * Keystone `{"error": {"title", "message"}}`.
 */
export function parseErrorBody(text: string): { type: string; message: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      type: '',
      message: text
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 500),
    };
  }
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const neutron = b.NeutronError as { type?: unknown; message?: unknown } | undefined;
    if (neutron && typeof neutron === 'object')
      return { type: fieldText(neutron.type), message: fieldText(neutron.message) };
    if (typeof b.faultstring === 'string') return { type: '', message: b.faultstring };
    const keystone = b.error as { title?: unknown; message?: unknown } | undefined;
    if (keystone && typeof keystone === 'object')
      return { type: fieldText(keystone.title), message: fieldText(keystone.message) };
    // Octavia's pecan layer (bad limit, unknown path): {"code": 400, "title": "Bad Request", "description": "..."}.
    if (typeof b.description === 'string') return { type: '', message: b.description };
    if (typeof b.message === 'string') return { type: '', message: b.message };
  }
  return { type: '', message: text.slice(0, 500) };
}

function fieldText(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}
