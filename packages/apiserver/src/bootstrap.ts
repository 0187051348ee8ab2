import type { ServiceIpFamilies } from './allocators/index.ts';
import { targetOf, type ApiContext } from './api/context.ts';
import { createObject } from './api/write.ts';
import { bootstrapRoles } from './auth/index.ts';

/** Namespaces every cluster starts with. */
export const defaultNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The `default` ServiceAccount the real service-account controller puts in every namespace. */
export function ensureDefaultServiceAccount(ctx: ApiContext, namespace: string): void {
  if (ctx.store.get('/serviceaccounts', namespace, 'default')) return;
  const def = ctx.registry.lookup('', 'v1', 'serviceaccounts')!;
  createObject(
    ctx,
    targetOf(def, 'v1', namespace),
    { metadata: { name: 'default' } },
    { dryRun: false, fieldManager: 'kube-controller-manager' },
  );
}

/**
 * What a new cluster has before anyone writes: the default namespaces (each with its `default` ServiceAccount) and
 * the `kubernetes` Service on the first address of the service range, the default ClusterRoles every authenticated
 * user is bound to (discovery, `kubectl auth can-i`), as a real control plane creates them.
 */
export function bootstrap(ctx: ApiContext, ips: ServiceIpFamilies): void {
  // The control plane writes these as kube-apiserver, which is the manager their managedFields name.
  const asApiServer = { dryRun: false, fieldManager: 'kube-apiserver' };
  const nsDef = ctx.registry.lookup('', 'v1', 'namespaces')!;
  for (const name of defaultNamespaces) {
    if (!ctx.store.get('/namespaces', '', name))
      createObject(ctx, targetOf(nsDef, 'v1', undefined), { metadata: { name } }, asApiServer);
    ensureDefaultServiceAccount(ctx, name);
  }
  const roleDef = ctx.registry.lookup('rbac.authorization.k8s.io', 'v1', 'clusterroles')!;
  const bindingDef = ctx.registry.lookup('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings')!;
  for (const { name, rules } of bootstrapRoles) {
    const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
    if (!ctx.store.get('rbac.authorization.k8s.io/clusterroles', '', name))
      createObject(ctx, targetOf(roleDef, 'v1', undefined), { metadata: { name, labels }, rules }, asApiServer);
    if (!ctx.store.get('rbac.authorization.k8s.io/clusterrolebindings', '', name))
      createObject(
        ctx,
        targetOf(bindingDef, 'v1', undefined),
        {
          metadata: { name, labels },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
        },
        asApiServer,
      );
  }
  if (!ctx.store.get('/services', 'default', 'kubernetes')) {
    const svcDef = ctx.registry.lookup('', 'v1', 'services')!;
    createObject(
      ctx,
      targetOf(svcDef, 'v1', 'default'),
      {
        metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: {
          clusterIP: ips.primary.reservedFirst(),
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
        },
      },
      asApiServer,
    );
  }
}
