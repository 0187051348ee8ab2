/**
 * Parses an API path the way the real server's RequestInfoFactory does:
 * `/api/v1/namespaces/{ns}/{resource}/{name}/{subresource}`, `/apis/{group}/{version}/…`, the legacy `/watch/`
 * prefix, and namespace subresources (`/api/v1/namespaces/{name}/status`).
 */
export interface RequestInfo {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** The verb, as RBAC would name it. */
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
}

/** Namespace paths whose third segment is a namespace subresource, not a resource inside the namespace. */
const namespaceSubresources = new Set(['status', 'finalize']);

/**
 * A boolean query parameter the way the real server converts one: present and not `false`/`0` (any case) is true
 * (python sends `watch=True`).
 */
export function isTrueParam(value: string | null): boolean {
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
}

/** Returns undefined for paths that are not resource paths (discovery, health, unknown). */
export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo | undefined {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(1);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    rest = parts.slice(2);
  } else {
    return undefined;
  }
  const version = rest[0]!;
  let current = rest.slice(1);
  let watchPrefix = false;
  if (current[0] === 'watch') {
    watchPrefix = true;
    current = current.slice(1);
  }
  let namespace: string | undefined;
  if (current[0] === 'namespaces' && current.length > 1) {
    namespace = current[1];
    if (current.length > 2 && !namespaceSubresources.has(current[2]!)) current = current.slice(2);
    else namespace = undefined;
  }
  if (current.length === 0 || current.length > 3) return undefined;
  const [resource, name, subresource] = current as [string, string | undefined, string | undefined];
  // `?watch` turns only a collection GET into a watch; a named object is watched through the /watch/ prefix.
  const watch = watchPrefix || (name === undefined && isTrueParam(query.get('watch')));
  let verb: RequestInfo['verb'];
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = watch ? 'watch' : name === undefined ? 'list' : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      return undefined;
  }
  const info: RequestInfo = { group, version, resource, verb };
  if (namespace !== undefined) info.namespace = namespace;
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = subresource;
  return info;
}
