import { isPlainObject, type KubeObject } from '../../../../src/kube/api/index.ts';
import type { ServiceAccountTokens, UserInfo } from './authenticate.ts';
import type { Attributes, Decision, PolicyRule } from './rbac.ts';

type Json = Record<string, unknown>;

/** How the server decides, and lists rules, for one user (RBAC, or everything when authorization is off). */
export interface Authorizer {
  decide(user: UserInfo, attrs: Attributes): Decision;
  rules(user: UserInfo, namespace: string): PolicyRule[];
}

const specOf = (body: unknown): Json => (isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {});

function answer(apiVersion: string, kind: string, spec: Json, status: Json): KubeObject {
  return { apiVersion, kind, metadata: { creationTimestamp: null }, spec, status };
}

/** `kubectl auth can-i`: may the caller do what `spec` describes? */
export function selfSubjectAccessReview(body: unknown, user: UserInfo, authorizer: Authorizer): KubeObject {
  const spec = specOf(body);
  const res = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const non = isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const attrs: Attributes = res
    ? {
        resourceRequest: true,
        verb: str(res.verb),
        group: str(res.group),
        resource: str(res.resource),
        ...(str(res.subresource) ? { subresource: str(res.subresource) } : {}),
        ...(str(res.namespace) ? { namespace: str(res.namespace) } : {}),
        ...(str(res.name) ? { name: str(res.name) } : {}),
      }
    : { resourceRequest: false, verb: str(non?.verb), path: str(non?.path) };
  const decision = authorizer.decide(user, attrs);
  return answer('authorization.k8s.io/v1', 'SelfSubjectAccessReview', spec, {
    allowed: decision.allowed,
    ...(decision.reason ? { reason: decision.reason } : {}),
  });
}

/** `kubectl auth can-i --list`: the caller's rules in a namespace. */
export function selfSubjectRulesReview(body: unknown, user: UserInfo, authorizer: Authorizer): KubeObject {
  const spec = specOf(body);
  const rules = authorizer.rules(user, typeof spec.namespace === 'string' ? spec.namespace : '');
  const resourceRules = rules
    .filter((r) => r.resources?.length)
    .map(({ nonResourceURLs: _n, ...r }) => ({ verbs: r.verbs ?? [], ...r }));
  const nonResourceRules = rules
    .filter((r) => r.nonResourceURLs?.length)
    .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs }));
  return answer('authorization.k8s.io/v1', 'SelfSubjectRulesReview', spec, {
    resourceRules,
    nonResourceRules,
    incomplete: false,
  });
}

/** `kubectl auth whoami`. */
export function selfSubjectReview(user: UserInfo): KubeObject {
  const userInfo = { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups };
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: { creationTimestamp: null },
    status: { userInfo },
  };
}

/**
 * `POST serviceaccounts/<name>/token` (`kubectl create token`): a TokenRequest answered with a token for the
 * ServiceAccount, valid for `spec.expirationSeconds` (3600 by default, at least 600, as upstream).
 */
export function tokenRequest(
  body: unknown,
  sa: KubeObject,
  tokens: ServiceAccountTokens,
  now: number,
): { object: KubeObject } | { invalid: string } {
  const spec = { ...specOf(body) };
  const seconds = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : 3600;
  if (seconds < 600) return { invalid: 'may not specify a duration less than 10 minutes' };
  if (seconds > 2 ** 32) return { invalid: 'may not specify a duration larger than 2^32 seconds' };
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0 ? (spec.audiences as string[]) : [tokens.issuer];
  const token = tokens.mint(
    { namespace: sa.metadata.namespace ?? '', name: sa.metadata.name ?? '', uid: sa.metadata.uid ?? '' },
    { audiences, expirationSeconds: seconds, now },
  );
  const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    object: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {
        name: sa.metadata.name,
        namespace: sa.metadata.namespace,
        creationTimestamp: rfc3339(now),
      },
      spec: { ...spec, audiences, expirationSeconds: seconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token, expirationTimestamp: rfc3339(now + seconds * 1000) },
    } as unknown as KubeObject,
  };
}
