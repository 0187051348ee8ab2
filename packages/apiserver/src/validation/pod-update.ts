/**
 * What a pod update may change (ValidatePodUpdate): container and init-container images, activeDeadlineSeconds
 * (only lowered, never unset), tolerations (only added to), and terminationGracePeriodSeconds (only from a
 * negative value to 1). Everything else in `spec` is fixed once the pod exists; scheduling goes through a binding.
 */
import { forbidden, invalid, isZero, list, num, record, semanticEqual, type FieldCause } from './field.ts';

/** The upstream text of the spec-immutability error (the message adds a summary of what changed). */
export const POD_UPDATE_FORBIDDEN_MESSAGE =
  'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, ' +
  '`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or ' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

const MAX_INT32 = 2147483647;
const MAX_DIFF_LINES = 10;

/** Copies the old images into the new containers, so that an image change alone compares equal. */
function withOldImages(containers: unknown, oldContainers: unknown): unknown {
  const before = list(oldContainers);
  if (!Array.isArray(containers)) return containers;
  return containers.map((c: unknown, i) => {
    const ctr = record(c);
    const prev = record(before[i]);
    return ctr && prev ? { ...ctr, image: prev.image } : c;
  });
}

/** Tolerations equal except for tolerationSeconds, which may change. */
function sameToleration(a: unknown, b: unknown): boolean {
  const x = record(a) ?? {};
  const y = record(b) ?? {};
  return semanticEqual({ ...x, tolerationSeconds: undefined }, { ...y, tolerationSeconds: undefined });
}

function activeDeadlineCauses(value: unknown, oldValue: unknown): FieldCause[] {
  const field = 'spec.activeDeadlineSeconds';
  if (value === undefined || value === null) {
    return oldValue === undefined || oldValue === null
      ? []
      : [invalid(field, null, 'must not update from a positive integer to nil value')];
  }
  const n = num(value) ?? NaN;
  if (!(n >= 0 && n <= MAX_INT32)) return [invalid(field, value, `must be between 0 and ${MAX_INT32}, inclusive`)];
  const before = num(oldValue);
  if (before !== undefined && before < n)
    return [invalid(field, value, 'must be less than or equal to previous value')];
  return [];
}

/** Leaf paths where two JSON values differ (zero values count as absent), for the error's summary. */
function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (out.length >= MAX_DIFF_LINES || semanticEqual(a, b)) return;
  const x = record(a);
  const y = record(b);
  if (x && y) {
    for (const key of new Set([...Object.keys(x), ...Object.keys(y)]))
      differences(x[key], y[key], `${path}.${key}`, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((v, i) => differences(v, b[i], `${path}[${i}]`, out));
    return;
  }
  const show = (v: unknown): string => (isZero(v) ? '<unset>' : JSON.stringify(v));
  out.push(`${path}: ${show(b)} -> ${show(a)}`);
}

/**
 * The update-only rules for `spec` (new vs stored). Returns the specific causes upstream reports first (added or
 * removed containers, activeDeadlineSeconds, changed tolerations), then one Forbidden on `spec` for anything else.
 */
export function validatePodSpecUpdate(spec: Record<string, unknown>, oldSpec: Record<string, unknown>): FieldCause[] {
  if (list(spec.containers).length !== list(oldSpec.containers).length) {
    return [forbidden('spec.containers', 'pod updates may not add or remove containers')];
  }
  const causes = activeDeadlineCauses(spec.activeDeadlineSeconds, oldSpec.activeDeadlineSeconds);
  if (causes.length > 0) return causes;
  const tolerations = list(spec.tolerations);
  for (const old of list(oldSpec.tolerations)) {
    if (!tolerations.some((t) => sameToleration(t, old))) {
      return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }

  const munged: Record<string, unknown> = {
    ...spec,
    containers: withOldImages(spec.containers, oldSpec.containers),
    initContainers: withOldImages(spec.initContainers, oldSpec.initContainers),
    activeDeadlineSeconds: oldSpec.activeDeadlineSeconds,
    tolerations: oldSpec.tolerations,
    // Ephemeral containers are written through their own subresource, never by a pod update.
    ephemeralContainers: oldSpec.ephemeralContainers,
  };
  const oldGrace = num(oldSpec.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && spec.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = oldGrace;
  }
  if (semanticEqual(munged, oldSpec)) return [];
  const changed: string[] = [];
  differences(munged, oldSpec, 'spec', changed);
  return [forbidden('spec', `${POD_UPDATE_FORBIDDEN_MESSAGE}\n${changed.map((line) => `  ${line}`).join('\n')}`)];
}
