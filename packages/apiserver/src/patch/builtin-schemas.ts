// Strategic-merge schemas of the built-in kinds Raven's API server serves, transcribed from the patchStrategy /
// patchMergeKey tags of the Kubernetes Go types (k8s.io/api). Only tagged lists appear; untagged ones (tolerations,
// envFrom, args, command, containerStatuses, Endpoints subsets, EndpointSlice endpoints/ports, NetworkPolicy rules,
// Namespace spec.finalizers…) replace. Adding a kind is one entry in KINDS.
import type { ListStrategy, StrategicSchema } from './schema.ts';

type Lists = Record<string, ListStrategy>;

/** `patchStrategy:"merge"`, with `patchMergeKey` when the list holds objects. */
function merge(patchMergeKey?: string): ListStrategy {
  return patchMergeKey === undefined ? { patchStrategy: 'merge' } : { patchStrategy: 'merge', patchMergeKey };
}

/** Re-roots relative list paths below `prefix`. */
function at(prefix: string, lists: Lists): Lists {
  return Object.fromEntries(Object.entries(lists).map(([path, strategy]) => [`${prefix}.${path}`, strategy]));
}

const OBJECT_META: Lists = { finalizers: merge(), ownerReferences: merge('uid') };

// Container and EphemeralContainer(Common) carry the same tags.
const CONTAINER: Lists = {
  ports: merge('containerPort'),
  env: merge('name'),
  volumeMounts: merge('mountPath'),
  volumeDevices: merge('devicePath'),
};

const POD_SPEC: Lists = {
  containers: merge('name'),
  ...at('containers[]', CONTAINER),
  initContainers: merge('name'),
  ...at('initContainers[]', CONTAINER),
  ephemeralContainers: merge('name'),
  ...at('ephemeralContainers[]', CONTAINER),
  volumes: merge('name'), // tagged "merge,retainKeys": retainKeys only shapes what clients send ($retainKeys)
  imagePullSecrets: merge('name'),
  hostAliases: merge('ip'),
  topologySpreadConstraints: merge('topologyKey'),
  // Newer fields (1.26+), tagged like the rest; harmless for older clients.
  resourceClaims: merge('name'),
  schedulingGates: merge('name'),
};

/** The lists of a pod template rooted at `path`, for kinds that embed one (`spec.template` of Deployments…). */
function podTemplateAt(path: string): Lists {
  return { ...at(`${path}.metadata`, OBJECT_META), ...at(`${path}.spec`, POD_SPEC) };
}

/** `group/Kind` (core group = "") → the kind's lists besides ObjectMeta's, which every kind gets. */
const KINDS: Readonly<Record<string, Lists>> = {
  '/Pod': {
    ...at('spec', POD_SPEC),
    'status.conditions': merge('type'),
    'status.podIPs': merge('ip'),
    'status.hostIPs': merge('ip'),
  },
  '/Service': { 'spec.ports': merge('port'), 'status.conditions': merge('type') },
  '/Endpoints': {},
  // spec.taints has no patch strategy (checked against k8s.io/api core/v1): a taint list replaces.
  '/Node': { 'spec.podCIDRs': merge(), 'status.conditions': merge('type'), 'status.addresses': merge('type') },
  '/Namespace': { 'status.conditions': merge('type') },
  '/ConfigMap': {},
  '/Secret': {},
  '/ServiceAccount': { secrets: merge('name') }, // imagePullSecrets is untagged here, unlike PodSpec's
  '/Event': {},
  'discovery.k8s.io/EndpointSlice': {},
  'coordination.k8s.io/Lease': {},
  // status.conditions (merge by type) existed only while NetworkPolicyStatus was alpha (1.24–1.27); left out.
  'networking.k8s.io/NetworkPolicy': {},
  'events.k8s.io/Event': {},
  'apps/Deployment': { ...podTemplateAt('spec.template'), 'status.conditions': merge('type') },
  // Rules, subjects and roleRef carry no patch strategy: they replace.
  'rbac.authorization.k8s.io/Role': {},
  'rbac.authorization.k8s.io/ClusterRole': {},
  'rbac.authorization.k8s.io/RoleBinding': {},
  'rbac.authorization.k8s.io/ClusterRoleBinding': {},
};

const SCHEMAS: ReadonlyMap<string, StrategicSchema> = new Map(
  Object.entries(KINDS).map(([key, lists]) => [
    key,
    Object.freeze({ lists: Object.freeze({ ...at('metadata', OBJECT_META), ...lists }) }),
  ]),
);

/**
 * The strategic-merge schema of a built-in kind, or undefined for anything else: strategic merge patch needs the
 * Go types, so the API server answers 415 for it on custom resources, as real Kubernetes does.
 *
 * @example
 * strategicSchemaFor('', 'Pod');        // core/v1 Pod
 * strategicSchemaFor('example.com', 'Widget'); // → undefined
 */
export function strategicSchemaFor(group: string, kind: string): StrategicSchema | undefined {
  return SCHEMAS.get(`${group}/${kind}`);
}
