import type { Clock } from '../../core/index.ts';
import { OpenStackError, parseErrorBody, type ServiceType } from '../errors.ts';
import type { Handler } from './http.ts';

/**
 * One HTTP exchange with an OpenStack service, as an observer (the daemon's Prometheus metrics) sees it. Every field
 * is low-cardinality and free of secrets: no ids, query values, headers, bodies or tokens.
 */
export interface RequestSample {
  service: ServiceType;
  method: string;
  /**
   * The route template of the path: ids and tags replaced (`/v2.0/ports/{id}/tags`), no query. See {@link operationOf}.
   */
  operation: string;
  /** The HTTP status; 0 when no response arrived (then `failure` says why). */
  status: number;
  /** Why no response arrived: the connection failed, the request timed out, or the caller aborted it. */
  failure?: 'unreachable' | 'timeout' | 'aborted';
  /** For a status ≥ 400: the service's error type (Neutron's `NeutronError.type`, Keystone's title), '' if none. */
  errorType?: string;
  /** From sending the request to the end of the response body, in milliseconds. */
  durationMs: number;
  /** 1 for the first attempt, 2 and up for the retry interceptor's retries. */
  attempt: number;
}

/** Receives a {@link RequestSample} per attempt. It must not throw (a throw is swallowed) and must not block. */
export type RequestObserver = (sample: RequestSample) => void;

/** API versions (`v2.0`, `v3`) are routes, not ids. */
const version = /^v\d+(\.\d+)?$/;
/** A UUID (with or without dashes, as Keystone's project ids are), or any long hex string. */
const hexId = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$|^[0-9a-f]{16,}$/i;
/** What a route word looks like: `ports`, `add_router_interface`, `l7policies`, `security-group-rules`. */
const routeWord = /^[a-z][a-z0-9_-]{0,39}$/;

/**
 * The low-cardinality route template of a path below a service endpoint, for metric labels. The query is dropped and
 * version segments are kept. A UUID-like segment becomes `{id}`; so does the segment after `quotas` (a project id,
 * which need not look like one). The segment after `tags` becomes `{tag}`, because Neutron's
 * `PUT /v2.0/ports/{id}/tags/{tag}` carries the tag in the path. Any other segment that does not look like a route
 * word (capitals, a leading digit, `%`-escapes, `=`…) becomes `{id}` too, so nothing a user or a cluster names can
 * reach a label.
 *
 * @example
 * operationOf('/v2.0/ports/3f1c0e2a-9b7d-4c1e-8a55-0d7a1b2c3d4e/tags/raven.cluster%3Dprod'); //
 * '/v2.0/ports/{id}/tags/{tag}'
 * operationOf('/v2/lbaas/pools/…/members/…'); // '/v2/lbaas/pools/{id}/members/{id}'
 */
export function operationOf(path: string): string {
  const end = path.search(/[?#]/);
  const segments = (end === -1 ? path : path.slice(0, end)).split('/');
  return segments
    .map((s, i) => {
      if (s === '' || version.test(s)) return s;
      if (segments[i - 1] === 'tags') return '{tag}';
      if (segments[i - 1] === 'quotas') return '{id}';
      if (hexId.test(s) || !routeWord.test(s)) return '{id}';
      return s;
    })
    .join('/');
}

/** The failure an error with no response stands for (the terminal handler's codes). */
function failureOf(err: unknown): RequestSample['failure'] {
  if (err instanceof OpenStackError && err.code === 'OPENSTACK_TIMEOUT') return 'timeout';
  if (err instanceof OpenStackError && err.code === 'OPENSTACK_UNREACHABLE') return 'unreachable';
  return 'aborted';
}

/**
 * Wraps the terminal handler so each HTTP exchange (each retry, each re-authentication, each Keystone token request)
 * is reported to the current observers once it ends. Observers are read per request, so they can come and go.
 */
export function observed(send: Handler, observers: () => Iterable<RequestObserver>, clock: Clock): Handler {
  return async (req) => {
    const started = clock.now();
    const report = (sample: () => Pick<RequestSample, 'status' | 'failure' | 'errorType'>): void => {
      const list = [...observers()];
      if (list.length === 0) return;
      const full: RequestSample = {
        service: req.service,
        method: req.method,
        operation: operationOf(req.path),
        durationMs: clock.now() - started,
        attempt: req.attempt ?? 1,
        ...sample(),
      };
      for (const observe of list) {
        try {
          observe(full);
        } catch {
          // An observer's bug must not fail the request it watched.
        }
      }
    };
    try {
      const res = await send(req);
      // The error type is short and from a fixed set (Neutron's exception class names); cut it anyway.
      report(() =>
        res.status >= 400
          ? { status: res.status, errorType: parseErrorBody(res.text).type.slice(0, 64) }
          : { status: res.status },
      );
      return res;
    } catch (err) {
      report(() => ({ status: 0, failure: failureOf(err) }));
      throw err;
    }
  };
}
