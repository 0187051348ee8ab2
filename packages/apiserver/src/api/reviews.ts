import type { KubeObject } from '../../../../src/kube/api/index.ts';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  tokenRequest,
  type UserInfo,
} from '../auth/index.ts';
import { apiErrors } from '../http/errors.ts';
import type { ResourceDef } from '../resources/index.ts';
import type { ApiContext, Target } from './context.ts';

/** A create of a review kind: answered for the caller, never stored. */
export function answerReview(ctx: ApiContext, def: ResourceDef, body: unknown, user: UserInfo): KubeObject {
  switch (def.kind) {
    case 'SelfSubjectAccessReview':
      return selfSubjectAccessReview(body, user, ctx.auth.authorizer);
    case 'SelfSubjectRulesReview':
      return selfSubjectRulesReview(body, user, ctx.auth.authorizer);
    default:
      return selfSubjectReview(user);
  }
}

/** `POST serviceaccounts/<name>/token`: 404 without the ServiceAccount, 422 on a bad expiration. */
export function requestToken(ctx: ApiContext, target: Target, name: string, body: unknown): KubeObject {
  const sa = ctx.store.get(target.table, target.namespace ?? '', name);
  if (!sa) throw apiErrors.notFound(target.def, name);
  const result = tokenRequest(body, sa, ctx.auth.tokens, Date.now());
  if ('invalid' in result) {
    throw apiErrors.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, name, [
      { reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${result.invalid}` },
    ]);
  }
  return result.object;
}
