import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../../../src/core/index.ts';
import { authRequiredMessage, isObject, keystoneError } from '../http.ts';
import { secretString, type SeededRandom } from '../random.ts';

/**
 * Keystone's identity data (one domain `Default`; projects admin, demo, service; users admin and demo) and its
 * token rules: password, application credential and token authentication, project scope by id or by name+domain.
 */
export interface Role {
  id: string;
  name: string;
}
export interface Project {
  id: string;
  name: string;
}
export interface User {
  id: string;
  name: string;
  password: string;
  /** Role names per project id. */
  roles: Map<string, string[]>;
}
export interface ApplicationCredential {
  id: string;
  name: string;
  secret: string;
  userId: string;
  projectId: string;
  roles: string[];
  description: string | null;
  expiresAt: string | null;
  unrestricted: boolean;
}
export interface Token {
  id: string;
  methods: string[];
  userId: string;
  projectId: string | undefined;
  roles: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  appCredId: string | undefined;
}

export const domain = { id: 'default', name: 'Default' };
const badRequest = () =>
  keystoneError(
    400,
    'The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.',
  );
const unauthorized = () => keystoneError(401, authRequiredMessage);

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class Identity {
  readonly roles: Role[];
  readonly projects: Project[];
  readonly users: User[];
  readonly appCreds = new Map<string, ApplicationCredential>();
  readonly tokens = new Map<string, Token>();

  constructor(
    readonly clock: Clock,
    readonly random: SeededRandom,
    readonly passwords: { admin: string; demo: string },
    readonly tokenLifetimeMs: number,
  ) {
    const id = () => random.hex(32);
    this.roles = ['admin', 'member', 'reader', 'service', 'load-balancer_member', 'load-balancer_admin'].map(
      (name) => ({ id: id(), name }),
    );
    this.projects = ['admin', 'demo', 'service'].map((name) => ({ id: id(), name }));
    const project = (name: string) => this.projects.find((p) => p.name === name)!.id;
    this.users = [
      {
        id: id(),
        name: 'admin',
        password: passwords.admin,
        roles: new Map([[project('admin'), ['admin', 'member', 'reader']]]),
      },
      {
        id: id(),
        name: 'demo',
        password: passwords.demo,
        roles: new Map([[project('demo'), ['member', 'reader', 'load-balancer_member']]]),
      },
    ];
  }

  project(id: string | undefined): Project | undefined {
    return this.projects.find((p) => p.id === id);
  }

  user(id: string | undefined): User | undefined {
    return this.users.find((u) => u.id === id);
  }

  role(name: string): Role {
    return this.roles.find((r) => r.name === name)!;
  }

  #findUser(ref: unknown): User {
    if (!isObject(ref)) throw badRequest();
    if (typeof ref.id === 'string') {
      const u = this.user(ref.id);
      if (!u) throw unauthorized();
      return u;
    }
    if (typeof ref.name !== 'string' || !isObject(ref.domain)) throw badRequest();
    if (ref.domain.id !== domain.id && ref.domain.name !== domain.name) throw unauthorized();
    const u = this.users.find((x) => x.name === ref.name);
    if (!u) throw unauthorized();
    return u;
  }

  #scope(scope: unknown): string | undefined {
    if (scope === undefined || scope === 'unscoped') return undefined;
    if (!isObject(scope) || !isObject(scope.project)) throw unauthorized();
    const p = scope.project;
    if (typeof p.id === 'string') {
      if (!this.project(p.id)) throw unauthorized();
      return p.id;
    }
    if (
      typeof p.name !== 'string' ||
      !isObject(p.domain) ||
      (p.domain.id !== domain.id && p.domain.name !== domain.name)
    )
      throw unauthorized();
    const found = this.projects.find((x) => x.name === p.name);
    if (!found) throw unauthorized();
    return found.id;
  }

  /** `POST /v3/auth/tokens`: checks the credentials and issues a token (throws Keystone's 400/401). */
  authenticate(body: unknown): Token {
    if (!isObject(body) || !isObject(body.auth) || !isObject(body.auth.identity)) throw badRequest();
    const { identity, scope } = body.auth;
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0) throw badRequest();
    const method = methods[0] as string;
    let userId: string;
    let projectId: string | undefined;
    let roles: string[] | undefined;
    let appCredId: string | undefined;
    if (method === 'password') {
      const pw = identity.password;
      if (!isObject(pw) || !isObject(pw.user) || typeof pw.user.password !== 'string') throw badRequest();
      const user = this.#findUser(pw.user);
      if (!sameSecret(user.password, pw.user.password)) throw unauthorized();
      userId = user.id;
      projectId = this.#scope(scope);
    } else if (method === 'application_credential') {
      const ac = identity.application_credential;
      if (!isObject(ac) || typeof ac.secret !== 'string') throw badRequest();
      if (scope !== undefined) throw unauthorized();
      const cred =
        typeof ac.id === 'string'
          ? this.appCreds.get(ac.id)
          : [...this.appCreds.values()].find((c) => c.name === ac.name && c.userId === this.#findUser(ac.user).id);
      if (
        !cred ||
        !sameSecret(cred.secret, ac.secret) ||
        (cred.expiresAt && Date.parse(cred.expiresAt) <= this.clock.now())
      )
        throw unauthorized();
      userId = cred.userId;
      projectId = cred.projectId;
      roles = cred.roles;
      appCredId = cred.id;
    } else if (method === 'token') {
      const t =
        isObject(identity.token) && typeof identity.token.id === 'string'
          ? this.validate(identity.token.id)
          : undefined;
      if (!t) throw unauthorized();
      userId = t.userId;
      projectId = scope === undefined ? t.projectId : this.#scope(scope);
    } else {
      throw unauthorized();
    }
    if (projectId !== undefined && roles === undefined) {
      roles = this.user(userId)?.roles.get(projectId);
      // No role on the project: Keystone refuses the scope.
      if (!roles || roles.length === 0) throw unauthorized();
    }
    const now = this.clock.now();
    const token: Token = {
      id: `gAAAAA${secretString(140)}`.slice(0, 183),
      methods: [method],
      userId,
      projectId,
      roles: roles ?? [],
      issuedAt: now,
      expiresAt: now + this.tokenLifetimeMs,
      auditId: secretString(16),
      appCredId,
    };
    this.tokens.set(token.id, token);
    return token;
  }

  /** A live token, or undefined (unknown, revoked or expired). */
  validate(id: string | null | undefined): Token | undefined {
    if (!id) return undefined;
    const t = this.tokens.get(id);
    if (!t) return undefined;
    if (t.expiresAt <= this.clock.now()) {
      this.tokens.delete(id);
      return undefined;
    }
    return t;
  }

  createAppCred(token: Token, body: unknown): ApplicationCredential {
    const spec = isObject(body) ? body.application_credential : undefined;
    if (!isObject(spec) || typeof spec.name !== 'string' || token.projectId === undefined) throw badRequest();
    if ([...this.appCreds.values()].some((c) => c.userId === token.userId && c.name === spec.name)) {
      throw keystoneError(
        409,
        `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${spec.name}.`,
      );
    }
    const requested = Array.isArray(spec.roles)
      ? (spec.roles as { name?: string; id?: string }[]).map(
          (r) => r.name ?? this.roles.find((x) => x.id === r.id)?.name ?? '',
        )
      : token.roles;
    if (requested.some((r) => !token.roles.includes(r)))
      throw keystoneError(
        403,
        'You are not authorized to perform the requested action: identity:create_application_credential.',
      );
    const cred: ApplicationCredential = {
      id: this.random.hex(32),
      name: spec.name,
      secret: typeof spec.secret === 'string' ? spec.secret : secretString(64),
      userId: token.userId,
      projectId: token.projectId,
      roles: requested,
      description: typeof spec.description === 'string' ? spec.description : null,
      expiresAt: typeof spec.expires_at === 'string' ? spec.expires_at : null,
      unrestricted: spec.unrestricted === true,
    };
    this.appCreds.set(cred.id, cred);
    return cred;
  }

  deleteAppCred(id: string): void {
    this.appCreds.delete(id);
    for (const [tid, t] of this.tokens) if (t.appCredId === id) this.tokens.delete(tid);
  }
}
