import { RavenError } from '../../../../src/core/index.ts';
import { failureStatus, type Status, type StatusCause } from '../../../../src/kube/api/index.ts';
import type { ResourceDef } from '../resources/index.ts';

/** An API failure, answered as a `Status` body with the same code, reason and message a real server would give. */
export class ApiError extends RavenError {
  readonly status: Status;

  constructor(status: Status, options?: { cause?: unknown }) {
    super(`API_${status.reason || 'ERROR'}`, status.message ?? '', options);
    this.status = status;
  }
}

/** `pods` or `endpointslices.discovery.k8s.io`: how the real server names a resource in messages. */
export function qualifiedResource(def: Pick<ResourceDef, 'group' | 'resource'>): string {
  return def.group ? `${def.resource}.${def.group}` : def.resource;
}

export const apiErrors = {
  badRequest: (message: string) => new ApiError(failureStatus(400, 'BadRequest', message)),
  unauthorized: () => new ApiError(failureStatus(401, 'Unauthorized', 'Unauthorized')),
  forbidden: (def: ResourceDef, name: string, message: string, causes?: StatusCause[]) =>
    new ApiError(
      failureStatus(403, 'Forbidden', `${qualifiedResource(def)} "${name}" is forbidden: ${message}`, {
        name,
        group: def.group,
        kind: def.resource,
        ...(causes ? { causes } : {}),
      }),
    ),
  notFound: (def: Pick<ResourceDef, 'group' | 'resource'>, name: string) =>
    new ApiError(
      failureStatus(404, 'NotFound', `${qualifiedResource(def)} "${name}" not found`, {
        name,
        group: def.group,
        kind: def.resource,
      }),
    ),
  pathNotFound: () =>
    new ApiError(
      failureStatus(404, 'NotFound', 'the server could not find the requested resource', {
        causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }],
      }),
    ),
  methodNotAllowed: () =>
    new ApiError(
      failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'),
    ),
  notAcceptable: (supported: string[]) =>
    new ApiError(
      failureStatus(406, 'NotAcceptable', `only the following media types are accepted: ${supported.join(', ')}`),
    ),
  alreadyExists: (def: ResourceDef, name: string) =>
    new ApiError(
      failureStatus(409, 'AlreadyExists', `${qualifiedResource(def)} "${name}" already exists`, {
        name,
        group: def.group,
        kind: def.resource,
      }),
    ),
  conflict: (
    def: ResourceDef,
    name: string,
    why = 'the object has been modified; please apply your changes to the latest version and try again',
  ) =>
    new ApiError(
      failureStatus(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(def)} "${name}": ${why}`, {
        name,
        group: def.group,
        kind: def.resource,
      }),
    ),
  expired: (message: string) => new ApiError(failureStatus(410, 'Expired', message)),
  unsupportedMediaType: (message: string) => new ApiError(failureStatus(415, 'UnsupportedMediaType', message)),
  invalid: (def: Pick<ResourceDef, 'group' | 'kind'>, name: string, causes: StatusCause[]) => {
    const list = causes.map((c) => `${c.field ? `${c.field}: ` : ''}${c.message ?? ''}`);
    const summary = list.length === 1 ? list[0]! : `[${list.join(', ')}]`;
    const kind = def.group ? `${def.kind}.${def.group}` : def.kind;
    return new ApiError(
      failureStatus(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
        name,
        group: def.group,
        kind: def.kind,
        causes,
      }),
    );
  },
  /** A server-side apply that would change fields other managers own (managedfields NewConflictError). */
  applyConflict: (message: string, causes: StatusCause[]) =>
    new ApiError(failureStatus(409, 'Conflict', message, { causes })),
  /** An error the real server does not classify (ErrorToAPIStatus of a plain Go error): no reason, no details. */
  unknown: (code: number, message: string) => {
    const { reason: _reason, ...status } = failureStatus(code, '', message);
    return new ApiError(status);
  },
  /** A patch that parsed but could not be applied (422 without causes, as the real server answers). */
  unprocessable: (message: string) => new ApiError(failureStatus(422, 'Invalid', message)),
  tooLargeResourceVersion: (rv: string, current: number) =>
    new ApiError(
      failureStatus(504, 'Timeout', `Too large resource version: ${rv}, current: ${current}`, {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      }),
    ),
  internal: (message: string) =>
    new ApiError(failureStatus(500, 'InternalError', `Internal error occurred: ${message}`)),
};
