import { neutronError, text, type SimHttpError } from '../http.ts';
import type { QuotaResource } from './store.ts';

/**
 * Neutron's exceptions as the API renders them: type = exception class, message = its text (Zed 21.0.0, neutron-lib
 * 3.1).
 */
export const nerr = {
  badRequest: (message: string): SimHttpError => neutronError(400, 'HTTPBadRequest', message),
  invalidInput: (message: string): SimHttpError =>
    neutronError(400, 'InvalidInput', `Invalid input for operation: ${message}.`),
  /** A request-body attribute that fails validation (`prepare_request_body` raises these as webob's HTTPBadRequest). */
  invalidAttr: (attr: string, reason: string): SimHttpError =>
    neutronError(400, 'HTTPBadRequest', `Invalid input for ${attr}. Reason: ${reason}.`),
  /** `BadRequest(resource=…, msg=…)`. */
  badResourceRequest: (resource: string, message: string): SimHttpError =>
    neutronError(400, 'BadRequest', `Bad ${resource} request: ${message}.`),
  notFound: (type: string, what: string, id: string): SimHttpError =>
    neutronError(404, type, `${what} ${id} could not be found.`),
  networkNotFound: (id: string): SimHttpError =>
    neutronError(404, 'NetworkNotFound', `Network ${id} could not be found.`),
  subnetNotFound: (id: string): SimHttpError => neutronError(404, 'SubnetNotFound', `Subnet ${id} could not be found.`),
  portNotFound: (id: string): SimHttpError => neutronError(404, 'PortNotFound', `Port ${id} could not be found.`),
  // neutron-lib's RouterNotFound has no full stop.
  routerNotFound: (id: string): SimHttpError => neutronError(404, 'RouterNotFound', `Router ${id} could not be found`),
  /** The `standard-attr-tag` endpoints' 404 for the parent resource (`collection` as in the URL, `_` for `-`). */
  tagResourceNotFound: (collection: string, id: string): SimHttpError =>
    neutronError(404, 'TagResourceNotFound', `Resource ${collection} ${id} could not be found.`),
  policy: (rule: string): SimHttpError => neutronError(403, 'PolicyNotAuthorized', `${rule} is disallowed by policy`),
  overQuota: (resources: QuotaResource[]): SimHttpError =>
    neutronError(409, 'OverQuota', `Quota exceeded for resources: [${resources.map((r) => `'${r}'`).join(', ')}].`),
  ipAllocated: (ip: string, subnetId: string): SimHttpError =>
    neutronError(409, 'IpAddressAlreadyAllocated', `IP address ${ip} already allocated in subnet ${subnetId}`),
  ipGenerationFailure: (networkId: string): SimHttpError =>
    neutronError(409, 'IpAddressGenerationFailure', `No more IP addresses available on network ${networkId}.`),
  revision: (wanted: number, current: number): SimHttpError =>
    neutronError(412, 'RevisionNumberConstraintFailed', `Constrained to ${wanted}, but current revision is ${current}`),
};

/** Python's `str()` of a JSON value: what `'%s' % data` puts in a message (strings bare, the rest as pyRepr). */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Python's repr of a JSON value, for messages that quote user input the way Neutron does (`'x'`, `1`, `True`). */
export function pyRepr(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null || value === undefined) return 'None';
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `'${k}': ${pyRepr(v)}`)
      .join(', ')}}`;
  return text(value);
}
