import { keystoneError } from '../http.ts';
import { domain, type ApplicationCredential, type Identity, type Token } from './identity.ts';

/** Keystone v3's routes the clients use: tokens (issue, validate, revoke), application credentials, discovery. */
export interface KeystoneResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Where the catalog points (the sim's own endpoints). */
export interface Endpoints {
  identity: string;
  network: string;
  loadBalancer: string;
}

function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function catalog(identity: Identity, e: Endpoints): unknown[] {
  const services: [type: string, name: string, url: string][] = [
    ['identity', 'keystone', e.identity],
    ['network', 'neutron', e.network],
    ['load-balancer', 'octavia', e.loadBalancer],
  ];
  // Ids derive from the service and interface, so every token shows the same catalog.
  const hexId = (s: string) => Buffer.from(s).toString('hex').padEnd(32, '0').slice(0, 32);
  return services.map(([type, name, url]) => ({
    endpoints: ['public', 'internal', 'admin'].map((iface) => ({
      id: hexId(`${name}${iface}`),
      interface: iface,
      region_id: 'RegionOne',
      url,
      region: 'RegionOne',
    })),
    id: hexId(name),
    type,
    name,
  }));
}

/** The `token` body Keystone returns on issue and validation. */
export function tokenBody(identity: Identity, token: Token, endpoints: Endpoints): unknown {
  const user = identity.user(token.userId)!;
  const project = identity.project(token.projectId);
  const body: Record<string, unknown> = {
    methods: token.methods,
    user: { domain, id: user.id, name: user.name, password_expires_at: null },
    audit_ids: [token.auditId],
    expires_at: keystoneTime(token.expiresAt),
    issued_at: keystoneTime(token.issuedAt),
  };
  if (project) {
    Object.assign(body, {
      project: { domain, id: project.id, name: project.name },
      is_domain: false,
      roles: token.roles.map((name) => ({ id: identity.role(name).id, name })),
      catalog: catalog(identity, endpoints),
    });
  }
  if (token.appCredId) {
    const cred = identity.appCreds.get(token.appCredId);
    body.application_credential = {
      id: token.appCredId,
      name: cred?.name ?? '',
      restricted: !(cred?.unrestricted ?? false),
    };
  }
  return { token: body };
}

function credBody(identity: Identity, c: ApplicationCredential, self: string, withSecret: boolean): unknown {
  return {
    links: { self },
    description: c.description,
    roles: c.roles.map((name) => ({ id: identity.role(name).id, domain_id: null, name })),
    access_rules: [],
    expires_at: c.expiresAt,
    unrestricted: c.unrestricted,
    ...(withSecret ? { secret: c.secret } : {}),
    project_id: c.projectId,
    id: c.id,
    name: c.name,
    user_id: c.userId,
  };
}

function version(identityUrl: string) {
  return {
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${identityUrl}/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  };
}

const unauthorized = () => keystoneError(401, 'The request you have made requires authentication.');

/** Handles a Keystone request; `segments` is the path below the identity prefix (`['v3', 'auth', 'tokens']`). */
export function handleKeystone(
  identity: Identity,
  endpoints: Endpoints,
  method: string,
  segments: string[],
  headers: Headers,
  body: unknown,
  query: URLSearchParams = new URLSearchParams(),
): KeystoneResult {
  const [v3, a, b, c, d, ...more] = segments;
  if (v3 === undefined) return { status: 300, body: { versions: { values: [version(endpoints.identity)] } } };
  if (v3 !== 'v3' || more.length > 0) throw keystoneError(404, 'The resource could not be found.');
  if (a === undefined) return { status: 200, body: { version: version(endpoints.identity) } };
  if (a === 'auth' && b === 'tokens' && c === undefined) {
    if (method === 'POST') {
      const token = identity.authenticate(body);
      return { status: 201, body: tokenBody(identity, token, endpoints), headers: { 'x-subject-token': token.id } };
    }
    if (!identity.validate(headers.get('x-auth-token'))) throw unauthorized();
    const subjectId = headers.get('x-subject-token') ?? '';
    const subject = identity.validate(subjectId);
    if (method === 'DELETE') {
      if (!subject) throw keystoneError(404, `Could not find token: ${subjectId}.`);
      identity.tokens.delete(subject.id);
      return { status: 204 };
    }
    if (!subject) throw keystoneError(404, `Could not find token: ${subjectId}.`);
    return {
      status: 200,
      body: method === 'HEAD' ? undefined : tokenBody(identity, subject, endpoints),
      headers: { 'x-subject-token': subject.id },
    };
  }
  const caller = identity.validate(headers.get('x-auth-token'));
  if (!caller) throw unauthorized();
  if (a === 'users' && b !== undefined && c === 'application_credentials') {
    if (b !== caller.userId)
      throw keystoneError(
        403,
        'You are not authorized to perform the requested action: identity:application_credential.',
      );
    const self = (id: string) => `${endpoints.identity}/users/${b}/application_credentials/${id}`;
    if (d === undefined && method === 'POST') {
      const cred = identity.createAppCred(caller, body);
      return { status: 201, body: { application_credential: credBody(identity, cred, self(cred.id), true) } };
    }
    if (d === undefined && method === 'GET') {
      const creds = [...identity.appCreds.values()]
        .filter((x) => x.userId === b)
        .map((x) => credBody(identity, x, self(x.id), false));
      return {
        status: 200,
        body: {
          application_credentials: creds,
          links: { self: `${endpoints.identity}/users/${b}/application_credentials`, previous: null, next: null },
        },
      };
    }
    const cred = d === undefined ? undefined : identity.appCreds.get(d);
    if (!cred || cred.userId !== b) throw keystoneError(404, `Could not find application credential: ${d ?? ''}.`);
    if (method === 'GET')
      return { status: 200, body: { application_credential: credBody(identity, cred, self(cred.id), false) } };
    if (method === 'DELETE') {
      identity.deleteAppCred(cred.id);
      return { status: 204 };
    }
  }
  if (a === 'auth' && b === 'projects' && method === 'GET') {
    const user = identity.user(caller.userId)!;
    const projects = identity.projects.filter((p) => (user.roles.get(p.id)?.length ?? 0) > 0);
    return { status: 200, body: { projects: projects.map(projectBody) } };
  }
  // `GET /v3/projects[?name=]` and `/v3/projects/{id}`, as the `openstack quota` commands look a project up. Keystone's
  // policy: listing takes the admin role; a project by id, the admin role or a role on it.
  if (a === 'projects' && c === undefined && method === 'GET') {
    const admin = caller.roles.includes('admin');
    if (b === undefined) {
      if (!admin)
        throw keystoneError(403, 'You are not authorized to perform the requested action: identity:list_projects.');
      const name = query.get('name');
      return {
        status: 200,
        body: { projects: identity.projects.filter((p) => name === null || p.name === name).map(projectBody) },
      };
    }
    const project = identity.project(b);
    if (!project || (!admin && caller.projectId !== b)) throw keystoneError(404, `Could not find project: ${b}.`);
    return { status: 200, body: { project: projectBody(project) } };
  }
  throw keystoneError(404, 'The resource could not be found.');
}

function projectBody(p: { id: string; name: string }) {
  return {
    id: p.id,
    name: p.name,
    domain_id: domain.id,
    enabled: true,
    is_domain: false,
    description: '',
    parent_id: domain.id,
  };
}
