import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { immutable, invalid, notSupported, record, required, type FieldCause } from './field.ts';
import { validateLabelSelector } from './meta.ts';
import { validatePodSpec } from './pod.ts';

/** Whether `matchLabels` of a selector all hold on `labels` (matchExpressions are left to the controller). */
function selects(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  return Object.entries(record(selector.matchLabels) ?? {}).every(([k, v]) => labels[k] === v);
}

/**
 * apps/v1 Deployment, the rules a controller depends on: a selector that selects the template's labels, a valid pod
 * template, non-negative replicas, a known strategy; the selector is immutable.
 */
export function validateDeployment(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const spec = record(obj.spec) ?? {};
  const causes: FieldCause[] = [];
  const selector = record(spec.selector);
  const template = record(spec.template) ?? {};
  const labels = record(record(template.metadata)?.labels) ?? {};
  if (!selector) causes.push(required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(selector, 'spec.selector'));
    if (Object.keys(record(selector.matchLabels) ?? {}).length === 0 && !Array.isArray(selector.matchExpressions))
      causes.push(invalid('spec.selector', selector, 'empty selector is invalid for deployment'));
    else if (!selects(selector, labels))
      causes.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodSpec(template.spec, 'spec.template.spec'));
  const restart = record(template.spec)?.restartPolicy;
  if (restart !== undefined && restart !== 'Always')
    causes.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (typeof spec.replicas === 'number' && spec.replicas < 0)
    causes.push(invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  const strategy = record(spec.strategy)?.type;
  if (strategy !== undefined && strategy !== 'RollingUpdate' && strategy !== 'Recreate')
    causes.push(notSupported('spec.strategy.type', strategy, ['Recreate', 'RollingUpdate']));
  if (old) causes.push(...immutable('spec.selector', spec.selector, record(old.spec)?.selector));
  return causes;
}

const roleKinds = { RoleBinding: ['Role', 'ClusterRole'], ClusterRoleBinding: ['ClusterRole'] } as const;

/** RoleBinding and ClusterRoleBinding: a roleRef to a Role or ClusterRole of the RBAC group, immutable once set. */
export function validateBinding(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const ref = record(obj.roleRef);
  const kinds = roleKinds[obj.kind as keyof typeof roleKinds] ?? ['ClusterRole'];
  if (!ref) return [required('roleRef')];
  if (ref.apiGroup !== 'rbac.authorization.k8s.io')
    causes.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', ['rbac.authorization.k8s.io']));
  if (!kinds.includes(ref.kind as never)) causes.push(notSupported('roleRef.kind', ref.kind ?? '', [...kinds]));
  if (typeof ref.name !== 'string' || ref.name === '') causes.push(required('roleRef.name'));
  for (const [i, s] of (Array.isArray(obj.subjects) ? (obj.subjects as unknown[]) : []).entries()) {
    const subject = record(s) ?? {};
    if (!['User', 'Group', 'ServiceAccount'].includes(subject.kind as string))
      causes.push(notSupported(`subjects[${i}].kind`, subject.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    if (typeof subject.name !== 'string' || subject.name === '') causes.push(required(`subjects[${i}].name`));
  }
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(obj.roleRef))
    causes.push(invalid('roleRef', obj.roleRef, 'cannot change roleRef'));
  return causes;
}

/** Role and ClusterRole: every rule names verbs, and resources with API groups or non-resource URLs. */
export function validateRole(obj: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const [i, r] of (Array.isArray(obj.rules) ? (obj.rules as unknown[]) : []).entries()) {
    const rule = record(r) ?? {};
    const path = `rules[${i}]`;
    const has = (k: string) => Array.isArray(rule[k]) && (rule[k] as unknown[]).length > 0;
    if (!has('verbs')) causes.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
    if (has('nonResourceURLs') && obj.kind === 'Role')
      causes.push(
        invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'),
      );
    if (!has('nonResourceURLs') && !has('resources'))
      causes.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
    if (has('resources') && !Array.isArray(rule.apiGroups))
      causes.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  }
  return causes;
}
