/**
 * The API machinery's own wire types: `Status` (every error's body) and watch events. The kinds are in `meta.ts`,
 * `core.ts`, `discovery.ts`, `coordination.ts` and `networking.ts`.
 */
import type { KubeObject, ListMeta } from './meta.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** `meta/v1 Status`: the body of every API error (and of some successful deletes). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** The `reason` values the API uses (metav1.StatusReason). */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'RequestEntityTooLarge'
  | 'InternalError'
  | 'Timeout'
  | 'ServerTimeout'
  | 'ServiceUnavailable'
  | '';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One line of a watch stream. `object` is a `Status` when `type` is `ERROR`. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T | Status;
}
