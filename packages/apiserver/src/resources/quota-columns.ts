import type { KubeObject } from '../../../../src/kube/api/index.ts';

/** `kubectl get quota`'s REQUEST and LIMIT columns: `name: used/hard` of the requests, and of the `limits.*`. */
export function quotaColumn(limits: boolean): (obj: KubeObject) => string {
  return (obj) => {
    const quota = obj as { status?: { hard?: Record<string, string>; used?: Record<string, string> } };
    return Object.keys(quota.status?.hard ?? {})
      .filter((n) => n.startsWith('limits.') === limits)
      .sort()
      .map((n) => `${n}: ${quota.status?.used?.[n] ?? '0'}/${quota.status?.hard?.[n] ?? ''}`)
      .join(', ');
  };
}
