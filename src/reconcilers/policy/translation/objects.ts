/**
 * The objects the translation reads and the groups it wants, apart from the model that computes them: the model,
 * its templates and the Service VIP rules all name them, and none of those imports another for a type.
 */
import type { KubeObject } from '../../../kube/api/index.ts';
import type { GroupSpec } from './groups.ts';
import type { DesiredRule } from './rules.ts';

/** What the model reads of a pod (Raven's trimmed pod cache satisfies it). */
export interface PolicyPod extends KubeObject {
  metadata: KubeObject['metadata'] & { labels?: Record<string, string> | undefined };
  spec: {
    nodeName?: string | undefined;
    containers?: { ports?: { name?: string; containerPort: number; protocol?: string }[] }[];
  };
}

/** What the model reads of a node: its addresses (Raven's trimmed node cache). */
export interface PolicyNode extends KubeObject {
  status?: { addresses?: { type: string; address: string }[] } | undefined;
}

/** A group the translation wants, with its rules (shared between answers of {@link PolicyModel.groups}: read only). */
export interface DesiredGroup {
  readonly key: string;
  readonly id: string;
  readonly spec: GroupSpec;
  readonly rules: readonly DesiredRule[];
}
