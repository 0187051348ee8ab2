import { failureStatus } from '../../../../src/kube/api/index.ts';
import { ApiError } from '../http/errors.ts';
import type { RequestInfo } from '../http/request-info.ts';
import type { MvccStore } from '../store/index.ts';
import { adminUser, sameToken, serviceAccountUser, ServiceAccountTokens, type UserInfo } from './authenticate.ts';
import { authorize, forbiddenMessage, rulesFor, type Attributes } from './rbac.ts';
import type { Authorizer } from './reviews.ts';

/** Who may call the server, and what they may do: one per server. */
export interface Access {
  tokens: ServiceAccountTokens;
  authorizer: Authorizer;
  /** The user of an `Authorization: Bearer …` header, or undefined (401). */
  authenticate(header: string | null): UserInfo | undefined;
  /** Throws 403 `Forbidden`, worded as upstream, when `user` may not make this request. */
  check(user: UserInfo, method: string, path: string, info: RequestInfo | undefined): void;
  /**
   * Throws 403 `Forbidden` unless `user` is in `system:masters`, whatever the authorization mode: for the test-only
   * fault API, which fails other users' requests, compacts history and drops every watch.
   */
  checkMaster(user: UserInfo, method: string, path: string, what: string): void;
}

export interface AccessOptions {
  /** The admin token (`system:masters`). */
  token: string;
  tokenUsers?: ReadonlyMap<string, UserInfo>;
  mode: 'AlwaysAllow' | 'RBAC';
  store: MvccStore;
}

/** A request as the authorizer sees it: a namespace object is in its own namespace, as upstream's RequestInfo has it. */
function attributesOf(method: string, path: string, info: RequestInfo | undefined): Attributes {
  if (!info) return { resourceRequest: false, verb: method.toLowerCase(), path };
  const namespace = info.namespace ?? (info.resource === 'namespaces' && info.group === '' ? info.name : undefined);
  return {
    resourceRequest: true,
    verb: info.verb,
    group: info.group,
    version: info.version,
    resource: info.resource,
    ...(info.subresource !== undefined ? { subresource: info.subresource } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(info.name !== undefined ? { name: info.name } : {}),
  };
}

/** 403 `Forbidden` as the real server writes it (responsewriters.Forbidden). */
function forbidden(user: UserInfo, attrs: Attributes, reason: string): ApiError {
  const message = forbiddenMessage(user, attrs, reason);
  if (!attrs.resourceRequest) return new ApiError(failureStatus(403, 'Forbidden', message));
  return new ApiError(
    failureStatus(403, 'Forbidden', message, {
      ...(attrs.name ? { name: attrs.name } : {}),
      group: attrs.group,
      kind: attrs.resource,
    }),
  );
}

export function createAccess(options: AccessOptions): Access {
  const { store, token } = options;
  const tokens = new ServiceAccountTokens(token);
  const rbac = options.mode === 'RBAC';
  const authorizer: Authorizer = {
    decide: (user, attrs) => (rbac ? authorize(store, user, attrs) : { allowed: true, reason: '' }),
    rules: (user, namespace) => rulesFor(store, rbac ? user : adminUser, namespace),
  };
  return {
    tokens,
    authorizer,
    authenticate(header) {
      if (!header?.startsWith('Bearer ')) return undefined;
      const bearer = header.slice('Bearer '.length).trim();
      if (sameToken(bearer, token)) return adminUser;
      const listed = options.tokenUsers?.get(bearer);
      if (listed) return listed;
      // A ServiceAccount token holds while its ServiceAccount exists (the same one: same uid).
      const claim = tokens.verify(bearer, Date.now());
      const sa = claim && store.get('/serviceaccounts', claim.namespace, claim.name);
      return sa && sa.metadata.uid === claim.uid ? serviceAccountUser(claim) : undefined;
    },
    check(user, method, path, info) {
      const attrs = attributesOf(method, path, info);
      const decision = authorizer.decide(user, attrs);
      if (!decision.allowed) throw forbidden(user, attrs, decision.reason);
    },
    checkMaster(user, method, path, what) {
      if (user.groups.includes('system:masters')) return;
      throw forbidden(user, attributesOf(method, path, undefined), `only system:masters may use ${what}`);
    },
  };
}
