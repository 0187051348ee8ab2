import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { PrinterColumn, ResourceDef } from './types.ts';

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const num = (obj: KubeObject, path: string): number => (obj.status as Record<string, number> | undefined)?.[path] ?? 0;

/** apps/v1: Deployments (stored and served, `scale` too; no controller in the server, as in kube-apiserver). */
export const appsResources: ResourceDef[] = [
  {
    group: 'apps',
    versions: ['v1'],
    resource: 'deployments',
    kind: 'Deployment',
    singular: 'deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    tracksGeneration: true,
    printerColumns: [
      {
        name: 'Ready',
        type: 'string',
        jsonPath: (d) => `${num(d, 'readyReplicas')}/${(d.spec as { replicas?: number } | undefined)?.replicas ?? 0}`,
      },
      { name: 'Up-to-date', type: 'integer', jsonPath: (d) => num(d, 'updatedReplicas') },
      { name: 'Available', type: 'integer', jsonPath: (d) => num(d, 'availableReplicas') },
      age,
    ],
  },
];

const rbac = (resource: string, kind: string, namespaced: boolean, printerColumns: PrinterColumn[]): ResourceDef => ({
  group: 'rbac.authorization.k8s.io',
  versions: ['v1'],
  resource,
  kind,
  singular: kind.toLowerCase(),
  namespaced,
  nameRule: 'path-segment',
  printerColumns,
});
const createdAt: PrinterColumn = { name: 'Created At', type: 'string', jsonPath: '.metadata.creationTimestamp' };
const roleRef: PrinterColumn = {
  name: 'Role',
  type: 'string',
  jsonPath: (b) => {
    const ref = b.roleRef as { kind?: string; name?: string } | undefined;
    return `${ref?.kind ?? ''}/${ref?.name ?? ''}`;
  },
};

/** rbac.authorization.k8s.io/v1: the four kinds the RBAC authorizer reads. */
export const rbacResources: ResourceDef[] = [
  rbac('roles', 'Role', true, [createdAt]),
  rbac('clusterroles', 'ClusterRole', false, [createdAt]),
  rbac('rolebindings', 'RoleBinding', true, [roleRef, age]),
  rbac('clusterrolebindings', 'ClusterRoleBinding', false, [roleRef, age]),
];

/** Kinds that are only ever created, never stored: the server answers them (reviews of the caller's access). */
const review = (group: string, resource: string, kind: string): ResourceDef => ({
  group,
  versions: ['v1'],
  resource,
  kind,
  singular: '',
  namespaced: false,
  verbs: ['create'],
  review: true,
});

export const reviewResources: ResourceDef[] = [
  review('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview'),
  review('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'),
  review('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview'),
];
