/** `apps/v1` Deployment: the fields the cluster simulator's Deployment controller reads and writes. */
import type { Condition, KubeObject, LabelSelector } from './meta.ts';
import type { PodSpec } from './core.ts';

export interface Deployment extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: LabelSelector;
    template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: PodSpec };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Condition[];
  };
}
