import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { KindHooks } from './types.ts';

/** Secrets: `type` defaults to `Opaque` (the real server's `SetDefaults_Secret`); `kubectl get secrets` prints it. */
export const secretHooks: KindHooks = {
  defaults(obj: KubeObject) {
    obj.type ??= 'Opaque';
  },
};
