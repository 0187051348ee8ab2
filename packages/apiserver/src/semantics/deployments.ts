import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { podHooks } from './pods.ts';
import type { KindHooks } from './types.ts';

/** apps/v1 Deployments: the defaults of the real server (SetDefaults_Deployment), the pod template's included. */
export const deploymentHooks: KindHooks = {
  defaults(obj: KubeObject) {
    const spec = (obj.spec ??= {}) as Record<string, unknown>;
    spec.replicas ??= 1;
    const strategy = (spec.strategy ??= {}) as Record<string, unknown>;
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const rolling = (strategy.rollingUpdate ??= {}) as Record<string, unknown>;
      rolling.maxUnavailable ??= '25%';
      rolling.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    const template = spec.template;
    if (template && typeof template === 'object') {
      const t = template as KubeObject;
      t.metadata ??= {};
      podHooks.defaults?.(t);
    }
  },
};
