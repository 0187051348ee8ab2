/**
 * auth: who a request is from (the admin token, a `--token-auth-file`, ServiceAccount tokens the server minted) and
 * whether it may do what it asks (the RBAC authorizer over the stored RBAC kinds, with kube-apiserver's 403 message),
 * and the review kinds that answer those questions for the caller (`kubectl auth can-i`, `whoami`, `create token`).
 */
export {
  adminUser,
  parseTokenFile,
  sameToken,
  serviceAccountUser,
  ServiceAccountTokens,
  type ServiceAccountClaim,
  type UserInfo,
} from './authenticate.ts';
export {
  authorize,
  forbiddenMessage,
  ruleAllows,
  rulesFor,
  type Attributes,
  type Decision,
  type PolicyRule,
} from './rbac.ts';
export {
  selfSubjectAccessReview,
  selfSubjectRulesReview,
  selfSubjectReview,
  tokenRequest,
  type Authorizer,
} from './reviews.ts';
export { bootstrapRoles } from './bootstrap.ts';
export { createAccess, type Access, type AccessOptions } from './access.ts';
