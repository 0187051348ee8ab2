import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { KindHooks } from './types.ts';

interface Container {
  image?: string;
  imagePullPolicy?: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  resources?: object;
  ports?: Array<{ protocol?: string }>;
}

function defaultContainer(c: Container): void {
  if (c.imagePullPolicy === undefined) {
    const image = c.image ?? '';
    const tag = image.includes('@') ? undefined : /:([^/:]+)$/.exec(image)?.[1];
    c.imagePullPolicy = image.includes('@') || (tag !== undefined && tag !== 'latest') ? 'IfNotPresent' : 'Always';
  }
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
}

/** Pods: the defaults a real API server fills, and the initial `Pending` status. */
export const podHooks: KindHooks = {
  defaults(obj: KubeObject) {
    const spec = (obj.spec ??= {}) as Record<string, unknown>;
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.securityContext ??= {};
    spec.enableServiceLinks ??= true;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
    spec.priority ??= 0;
    spec.serviceAccountName ??= spec.serviceAccount ?? 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
    for (const list of ['containers', 'initContainers'] as const) {
      const containers = spec[list];
      if (Array.isArray(containers))
        for (const c of containers as Container[]) if (c && typeof c === 'object') defaultContainer(c);
    }
  },
  initialize(obj: KubeObject) {
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
  },
};
