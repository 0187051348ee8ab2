import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { KindHooks } from './types.ts';

/** Namespaces: the `kubernetes` finalizer, `Active` phase and the immutable `kubernetes.io/metadata.name` label. */
export const namespaceHooks: KindHooks = {
  defaults(obj: KubeObject) {
    const labels = (obj.metadata.labels ??= {});
    labels['kubernetes.io/metadata.name'] = obj.metadata.name ?? '';
  },
  initialize(obj: KubeObject) {
    const spec = (obj.spec ??= {}) as { finalizers?: string[] };
    if (!spec.finalizers?.includes('kubernetes')) spec.finalizers = [...(spec.finalizers ?? []), 'kubernetes'];
    obj.status = { phase: 'Active' };
  },
};
