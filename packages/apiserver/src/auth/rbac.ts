import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { MvccStore } from '../store/index.ts';
import type { UserInfo } from './authenticate.ts';

/** What a request wants to do, as an authorizer sees it (authorizer.Attributes). */
export type Attributes =
  | {
      resourceRequest: true;
      verb: string;
      group: string;
      version?: string;
      resource: string;
      subresource?: string;
      namespace?: string;
      name?: string;
    }
  | { resourceRequest: false; verb: string; path: string };

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding extends KubeObject {
  roleRef?: { kind?: string; name?: string };
  subjects?: Subject[];
}

export interface Decision {
  allowed: boolean;
  /** Why: the binding that allowed it, or the roles a binding names that do not exist ("" when nothing applies). */
  reason: string;
}

const has = (list: readonly string[] | undefined, value: string): boolean =>
  (list ?? []).includes('*') || (list ?? []).includes(value);

function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const wanted = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some(
    (r) =>
      r === '*' || r === wanted || (subresource !== undefined && (r === `*/${subresource}` || r === `${resource}/*`)),
  );
}

/** rbac.RuleAllows: one rule against the request's attributes. */
export function ruleAllows(rule: PolicyRule, attrs: Attributes): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (!attrs.resourceRequest) {
    return (rule.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === attrs.path || (u.endsWith('*') && attrs.path.startsWith(u.slice(0, -1))),
    );
  }
  if (!has(rule.apiGroups, attrs.group) || !resourceMatches(rule, attrs.resource, attrs.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && attrs.name !== '' && names.includes(attrs.name));
}

function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return subject.name !== undefined && user.groups.includes(subject.name);
    case 'ServiceAccount':
      return user.username === `system:serviceaccount:${subject.namespace || bindingNamespace}:${subject.name ?? ''}`;
    default:
      return false;
  }
}

/** Every (binding, rules) that applies to `user` in `namespace` (cluster-wide bindings always; "" = cluster only). */
function* applicable(
  store: MvccStore,
  user: UserInfo,
  namespace: string,
): Generator<{ binding: Binding; rules: PolicyRule[] | undefined; describe: string }> {
  const role = (kind: string | undefined, name: string | undefined, ns: string) =>
    kind === 'ClusterRole'
      ? store.get('rbac.authorization.k8s.io/clusterroles', '', name ?? '')
      : store.get('rbac.authorization.k8s.io/roles', ns, name ?? '');
  const bindings: Array<[Binding, string]> = [
    ...store.list('rbac.authorization.k8s.io/clusterrolebindings').map((b) => [b as Binding, ''] as [Binding, string]),
    ...(namespace
      ? store
          .list('rbac.authorization.k8s.io/rolebindings', namespace)
          .map((b) => [b as Binding, namespace] as [Binding, string])
      : []),
  ];
  for (const [binding, ns] of bindings) {
    const subject = (binding.subjects ?? []).find((s) => subjectMatches(s, user, ns));
    if (!subject) continue;
    const ref = binding.roleRef ?? {};
    const found = role(ref.kind, ref.name, ns);
    const what = ns
      ? `RoleBinding "${binding.metadata.name ?? ''}/${ns}"`
      : `ClusterRoleBinding "${binding.metadata.name ?? ''}"`;
    yield {
      binding,
      rules: found ? ((found.rules as PolicyRule[] | undefined) ?? []) : undefined,
      describe: `${what} of ${ref.kind ?? ''} "${ref.name ?? ''}" to ${describeSubject(subject, ns)}`,
    };
  }
}

/**
 * The RBAC authorizer over the stored Roles, ClusterRoles and their bindings (no aggregation): allowed when any rule
 * of any role bound to the user (or one of its groups) allows the request. `system:masters` is allowed everything,
 * as the real server's superuser group.
 */
export function authorize(store: MvccStore, user: UserInfo, attrs: Attributes): Decision {
  if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
  const missing: string[] = [];
  for (const { binding, rules, describe } of applicable(
    store,
    user,
    attrs.resourceRequest ? (attrs.namespace ?? '') : '',
  )) {
    if (rules === undefined) {
      const ref = binding.roleRef ?? {};
      missing.push(`${(ref.kind ?? '').toLowerCase()}.rbac.authorization.k8s.io "${ref.name ?? ''}" not found`);
      continue;
    }
    if (rules.some((r) => ruleAllows(r, attrs))) return { allowed: true, reason: `RBAC: allowed by ${describe}` };
  }
  return { allowed: false, reason: missing.length ? `RBAC: [${missing.join(', ')}]` : '' };
}

/** A binding's subject as upstream names it in an "allowed by" reason (`ServiceAccount "raven/raven-system"`). */
function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount')
    return `ServiceAccount "${subject.name ?? ''}/${subject.namespace || bindingNamespace}"`;
  return `${subject.kind ?? ''} "${subject.name ?? ''}"`;
}

/** The rules that apply to `user` in `namespace` (SelfSubjectRulesReview). */
export function rulesFor(store: MvccStore, user: UserInfo, namespace: string): PolicyRule[] {
  if (user.groups.includes('system:masters'))
    return [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ];
  return [...applicable(store, user, namespace)].flatMap(({ rules }) => rules ?? []);
}

/**
 * The 403 message of a denied request, word for word as kube-apiserver's (`pods is forbidden: User "x" cannot list
 * resource "pods" in API group "" in the namespace "y"`), with the authorizer's reason after a colon when it has one.
 */
export function forbiddenMessage(user: UserInfo, attrs: Attributes, reason: string): string {
  let what: string;
  let prefix: string;
  if (!attrs.resourceRequest) {
    what = `User "${user.username}" cannot ${attrs.verb} path "${attrs.path}"`;
    prefix = 'forbidden';
  } else {
    const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    const where = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
    what = `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.group}" ${where}`;
    const qualified = attrs.group ? `${attrs.resource}.${attrs.group}` : attrs.resource;
    prefix = attrs.name ? `${qualified} "${attrs.name}" is forbidden` : `${qualified} is forbidden`;
  }
  return `${prefix}: ${what}${reason ? `: ${reason}` : ''}`;
}
