import type { PolicyRule } from './rbac.ts';

/**
 * The default ClusterRoles (and their bindings to every authenticated user) that a real control plane creates, so
 * that a ServiceAccount can read discovery and ask `kubectl auth can-i` without being granted it by hand.
 */
export const bootstrapRoles: Array<{ name: string; rules: PolicyRule[] }> = [
  {
    name: 'system:discovery',
    rules: [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ],
  },
];
