import type {
  Deployment,
  EndpointSlice,
  Endpoints,
  Event,
  KubeObject,
  Lease,
  Namespace,
  NetworkPolicy,
  Node,
  Pod,
  Service,
} from '../api/index.ts';

/**
 * Resources and their URL paths: a {@link ResourceRef} names a REST collection (group, version, plural, scope) the way
 * client-go's `GroupVersionResource` plus the RESTMapper's scope do, and {@link resourcePath} turns one into the path
 * the API server serves (`/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise).
 */

/**
 * A REST collection: `group` is `''` for the core group; `resource` is the lower-case plural (`pods`). `T` is the
 * type of its objects: the client and the informers infer it, so `client.get(resources.pods, …)` is a `Pod`.
 */
export interface ResourceRef<T extends KubeObject = KubeObject> {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespaced: boolean;
  /** The kind of the objects (`Pod`), for messages and for callers that build objects. */
  readonly kind?: string;
  /** Type only, never set: carries `T`. */
  readonly __object?: T;
}

function ref<T extends KubeObject>(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
): ResourceRef<T> {
  return Object.freeze({ group, version, resource, namespaced, kind });
}

/** The built-in resources Raven uses. */
export const resources = Object.freeze({
  pods: ref<Pod>('', 'v1', 'pods', 'Pod', true),
  services: ref<Service>('', 'v1', 'services', 'Service', true),
  endpoints: ref<Endpoints>('', 'v1', 'endpoints', 'Endpoints', true),
  namespaces: ref<Namespace>('', 'v1', 'namespaces', 'Namespace', false),
  nodes: ref<Node>('', 'v1', 'nodes', 'Node', false),
  events: ref<Event>('', 'v1', 'events', 'Event', true),
  configmaps: ref<KubeObject>('', 'v1', 'configmaps', 'ConfigMap', true),
  secrets: ref<KubeObject>('', 'v1', 'secrets', 'Secret', true),
  endpointslices: ref<EndpointSlice>('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  leases: ref<Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  networkpolicies: ref<NetworkPolicy>('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true),
  deployments: ref<Deployment>('apps', 'v1', 'deployments', 'Deployment', true),
});

export interface PathParts {
  /** Required for a namespaced resource's object paths; omitted on a namespaced collection = all namespaces. */
  namespace?: string | undefined;
  name?: string | undefined;
  /** `status`, `scale`… (needs `name`). */
  subresource?: string | undefined;
}

/**
 * The path of a collection, an object or an object's subresource.
 *
 * @example
 * resourcePath(resources.pods, { namespace: 'default', name: 'web', subresource: 'status' });
 * // '/api/v1/namespaces/default/pods/web/status'
 */
export function resourcePath(r: ResourceRef, parts: PathParts = {}): string {
  const { namespace, name, subresource } = parts;
  const segments: string[] = r.group ? ['apis', r.group, r.version] : ['api', r.version];
  if (r.namespaced && namespace) segments.push('namespaces', namespace);
  else if (r.namespaced && name !== undefined)
    throw new RangeError(`${r.resource} is namespaced: a namespace is needed for "${name}"`);
  segments.push(r.resource);
  if (name !== undefined) {
    if (name === '') throw new RangeError(`an empty name for ${r.resource}`);
    segments.push(name);
  }
  if (subresource) {
    if (name === undefined) throw new RangeError(`subresource "${subresource}" needs a name`);
    segments.push(subresource);
  }
  return '/' + segments.map(encodeURIComponent).join('/');
}

/** A query string (with its `?`, or `''`) from the defined, non-empty values. */
export function queryString(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') q.set(key, String(value));
  const s = q.toString();
  return s ? `?${s}` : '';
}
