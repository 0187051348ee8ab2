import { realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import type { ApplicationCredentialAuth, PasswordAuth, TokenAuth } from '../config/types.ts';
import { OpenStackError, parseErrorBody } from '../errors.ts';
import type { Handler } from '../transport/http.ts';
import { requestIdOf } from '../transport/interceptors.ts';

export interface CatalogEndpoint {
  interface: string;
  region?: string | null;
  region_id?: string | null;
  url: string;
}

export interface CatalogService {
  type: string;
  name?: string;
  endpoints: CatalogEndpoint[];
}

/** What an authenticated caller holds: a token (none with noauth), when it expires, and the service catalog. */
export interface AuthSession {
  token: string | undefined;
  /** Epoch ms; Infinity without Keystone. */
  expiresAt: number;
  catalog: CatalogService[];
  projectId?: string | undefined;
  userId?: string | undefined;
}

/** Hands out a valid session, renewing it before expiry; `invalidate` drops one a service rejected (401). */
export interface Authenticator {
  session(signal?: AbortSignal): Promise<AuthSession>;
  invalidate(token: string | undefined): void;
}

/** Without Keystone: no token, no catalog (every endpoint comes from the config's overrides). */
export const noAuthenticator: Authenticator = {
  session: () => Promise.resolve({ token: undefined, expiresAt: Infinity, catalog: [] }),
  invalidate: () => {},
};

export interface KeystoneOptions {
  auth: PasswordAuth | ApplicationCredentialAuth | TokenAuth;
  /** Sends the token request (the session's pipeline without the auth interceptor). */
  send: Handler;
  timeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** keystoneauth1's margin: a token that expires within 2 minutes counts as expired (capped at half its lifetime). */
const RENEW_BEFORE_MS = 120_000;

function domain(
  name: string | undefined,
  id: string | undefined,
): { domain: Record<string, string> } | Record<string, never> {
  if (id) return { domain: { id } };
  if (name) return { domain: { name } };
  return {};
}

/** The `POST /v3/auth/tokens` body for each auth kind (Keystone v3 API reference). */
export function tokenRequestBody(auth: PasswordAuth | ApplicationCredentialAuth | TokenAuth): unknown {
  const user = (a: {
    username?: string | undefined;
    userId?: string | undefined;
    userDomainName?: string | undefined;
    userDomainId?: string | undefined;
  }) => (a.userId ? { id: a.userId } : { name: a.username, ...domain(a.userDomainName, a.userDomainId) });
  const projectScope = (a: {
    projectId?: string | undefined;
    projectName?: string | undefined;
    projectDomainName?: string | undefined;
    projectDomainId?: string | undefined;
  }) => {
    if (a.projectId) return { scope: { project: { id: a.projectId } } };
    if (a.projectName)
      return { scope: { project: { name: a.projectName, ...domain(a.projectDomainName, a.projectDomainId) } } };
    return undefined;
  };
  switch (auth.type) {
    case 'password': {
      const scope =
        projectScope(auth) ??
        (auth.domainId || auth.domainName ? { scope: domain(auth.domainName, auth.domainId) } : {});
      return {
        auth: {
          identity: { methods: ['password'], password: { user: { ...user(auth), password: auth.password } } },
          ...scope,
        },
      };
    }
    case 'v3applicationcredential': {
      const credential = auth.applicationCredentialId
        ? { id: auth.applicationCredentialId, secret: auth.applicationCredentialSecret }
        : { name: auth.applicationCredentialName, secret: auth.applicationCredentialSecret, user: user(auth) };
      return { auth: { identity: { methods: ['application_credential'], application_credential: credential } } };
    }
    case 'token':
      return { auth: { identity: { methods: ['token'], token: { id: auth.token } }, ...(projectScope(auth) ?? {}) } };
  }
}

/** `http://host:5000` and `http://host:5000/v3/` both mean the v3 API at `http://host:5000/v3`. */
export function v3Url(authUrl: string): string {
  const trimmed = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(trimmed) ? trimmed : `${trimmed}/v3`;
}

/**
 * Keystone v3 authentication: password, application credential or token. The token is cached and renewed before it
 * expires; concurrent callers share one request; a token a service rejected is dropped so the next call authenticates
 * again. Secrets go only into the request body, which nothing logs.
 */
export class KeystoneAuthenticator implements Authenticator {
  readonly #options: KeystoneOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  #current: (AuthSession & { renewAt: number }) | undefined;
  #pending: Promise<AuthSession> | undefined;
  #issued = 0;

  constructor(options: KeystoneOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ component: 'keystone' });
  }

  /** How many tokens this authenticator has obtained (for tests and metrics). */
  get tokensIssued(): number {
    return this.#issued;
  }

  session(signal?: AbortSignal): Promise<AuthSession> {
    const current = this.#current;
    if (current && this.#clock.now() < current.renewAt) return Promise.resolve(current);
    this.#pending ??= this.#authenticate(signal).finally(() => (this.#pending = undefined));
    return this.#pending;
  }

  invalidate(token: string | undefined): void {
    if (token !== undefined && this.#current?.token === token) this.#current = undefined;
  }

  async #authenticate(signal: AbortSignal | undefined): Promise<AuthSession> {
    const { auth, send } = this.#options;
    const url = `${v3Url(auth.authUrl)}/auth/tokens`;
    const res = await send({
      service: 'identity',
      method: 'POST',
      path: '/v3/auth/tokens',
      query: new URLSearchParams(),
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(tokenRequestBody(auth)),
      signal,
      timeoutMs: this.#options.timeoutMs ?? 30_000,
      // Issuing a token twice is harmless.
      idempotent: true,
    });
    const token = res.headers['x-subject-token'];
    if (res.status !== 201 && res.status !== 200) {
      const { type, message } = parseErrorBody(res.text);
      throw new OpenStackError(
        {
          service: 'identity',
          method: 'POST',
          path: '/v3/auth/tokens',
          status: res.status,
          type,
          requestId: requestIdOf(res),
        },
        `Keystone refused ${auth.type} authentication at ${auth.authUrl}: ${message}`,
      );
    }
    if (!token)
      throw new OpenStackError(
        {
          service: 'identity',
          method: 'POST',
          path: '/v3/auth/tokens',
          status: res.status,
          type: '',
          requestId: requestIdOf(res),
        },
        'Keystone answered without an X-Subject-Token header',
      );
    const body = JSON.parse(res.text) as {
      token?: {
        expires_at?: string;
        issued_at?: string;
        catalog?: CatalogService[];
        project?: { id?: string };
        user?: { id?: string };
      };
    };
    const now = this.#clock.now();
    const expiresAt = body.token?.expires_at ? Date.parse(body.token.expires_at) : now + 3_600_000;
    const issuedAt = body.token?.issued_at ? Date.parse(body.token.issued_at) : now;
    const margin = Math.min(RENEW_BEFORE_MS, Math.max(0, (expiresAt - issuedAt) / 2));
    this.#issued++;
    this.#current = {
      token,
      expiresAt,
      renewAt: expiresAt - margin,
      catalog: body.token?.catalog ?? [],
      projectId: body.token?.project?.id,
      userId: body.token?.user?.id,
    };
    this.#log.debug(
      {
        expiresAt: new Date(expiresAt).toISOString(),
        project: this.#current.projectId,
        services: this.#current.catalog.map((s) => s.type),
      },
      'obtained a Keystone token',
    );
    return this.#current;
  }
}
