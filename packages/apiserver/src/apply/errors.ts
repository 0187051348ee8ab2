import { RavenError } from '../../../../src/core/index.ts';
import type { StatusCause } from '../../../../src/kube/api/index.ts';

/** One field an apply would take from another manager. */
export interface Conflict {
  /**
   * The owner as a conflict names it: `"kubectl"`, `"kube-controller" using v1`, `"x" with subresource "status" using
   * v1`.
   */
  readonly owner: string;
  /** The field, as structured-merge-diff prints paths: `.spec.ports[port=80,protocol="TCP"].targetPort`. */
  readonly field: string;
}

/**
 * An apply that would change fields other managers own (409 Conflict upstream). `message` and `causes` are the
 * Status the server answers with, as k8s.io/apimachinery's managedfields NewConflictError writes them.
 */
export class ApplyConflictError extends RavenError {
  readonly conflicts: readonly Conflict[];
  readonly causes: StatusCause[];

  constructor(conflicts: readonly Conflict[]) {
    super('APPLY_CONFLICT', conflictMessage(conflicts));
    this.conflicts = conflicts;
    this.causes = conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${c.owner}`,
      field: c.field,
    }));
  }
}

function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1)
    return `Apply failed with 1 conflict: conflict with ${conflicts[0]!.owner}: ${conflicts[0]!.field}`;
  const byOwner = new Map<string, string[]>();
  for (const c of conflicts) byOwner.set(c.owner, [...(byOwner.get(c.owner) ?? []), c.field]);
  const lines: string[] = [];
  for (const owner of [...byOwner.keys()].sort()) {
    lines.push(`conflicts with ${owner}:`, ...byOwner.get(owner)!.map((field) => `- ${field}`));
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * An applied configuration that does not fit the kind's schema: an associative-list item without its key, duplicate
 * keys, an object in a set. Upstream answers 500 with `failed to create typed patch object (...): <errors>`.
 */
export class TypedValueError extends RavenError {
  constructor(message: string) {
    super('APPLY_INVALID_OBJECT', message);
  }
}
