import type { ResourceDef, ResourceRegistry } from '../resources/index.ts';

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The version this server reports at `/version` (the API surface it follows). */
export const serverVersion = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0-raven',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.22.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** `GET /api`: APIVersions. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(name: string, versions: string[]): object {
  const list = versions.map((version) => ({ groupVersion: groupVersion(name, version), version }));
  return { name, versions: list, preferredVersion: list[0] };
}

/** `GET /apis`: every named group (the core group is at /api). */
export function apiGroupList(registry: ResourceRegistry): object {
  const groups = [...registry.groups()]
    .filter(([name]) => name !== '')
    .map(([name, versions]) => apiGroup(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `GET /apis/<group>`: one APIGroup, or undefined when not served. */
export function apiGroupOf(registry: ResourceRegistry, group: string): object | undefined {
  const versions = registry.groups().get(group);
  if (!versions || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, versions) };
}

function resourceEntries(def: ResourceDef): object[] {
  const main: Record<string, unknown> = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: def.verbs ?? allVerbs,
  };
  if (def.shortNames?.length) main.shortNames = def.shortNames;
  if (def.categories?.length) main.categories = def.categories;
  const subresources = (def.subresources ?? []).map((sub) => ({
    name: `${def.resource}/${sub}`,
    singularName: '',
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: sub === 'status' || sub === 'scale' ? ['get', 'patch', 'update'] : ['create'],
    ...(sub === 'token' ? { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } : {}),
    ...(sub === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : {}),
  }));
  return [main, ...subresources];
}

/** `GET /api/v1`, `GET /apis/<group>/<version>`: APIResourceList, or undefined when not served. */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const defs = registry.inGroupVersion(group, version);
  if (defs.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: defs.flatMap(resourceEntries),
  };
}
