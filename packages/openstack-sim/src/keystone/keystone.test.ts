import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../../src/core/index.ts';
import {
  client,
  type Call,
  type Network,
  type NeutronErrorBody,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

interface TokenBody {
  token: {
    methods: string[];
    user: { id: string; name: string };
    project?: { id: string; name: string };
    roles?: { name: string }[];
    expires_at: string;
    catalog?: { type: string; endpoints: { interface: string; region_id: string; url: string }[] }[];
  };
}

const passwordAuth = (user: string, password: string, project: string) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password } } },
    scope: { project: { name: project, domain: { id: 'default' } } },
  },
});

/** Keystone tokens and their use at Neutron (keystonemiddleware's 401, member policy), over a real socket. */
describe('simulated Keystone', () => {
  const clock = new FakeClock(Date.parse('2026-11-22T09:00:00Z'));
  let sim: RunningOpenStackSim;
  let keystone: Call;

  const issue = async (body: unknown) => {
    const res = await keystone<TokenBody>('POST', '/auth/tokens', body);
    return { status: res.status, token: res.headers.get('x-subject-token') ?? '', body: res.body };
  };
  const neutron = (token?: string): Call => client(`${sim.neutronUrl}/v2.0`, token ? { 'x-auth-token': token } : {});

  before(async () => {
    sim = await runOpenStackSim({
      auth: 'keystone',
      password: 's3cret',
      clock,
      tokenLifetimeMs: 60_000,
      provisioningDelayMs: 0,
    });
    keystone = client(sim.keystoneUrl);
  });
  after(() => sim.close());

  it('issues a project-scoped token with roles, a catalog of the sim and the configured lifetime', async () => {
    const { status, token, body } = await issue(passwordAuth('admin', 's3cret', 'admin'));
    assert.equal(status, 201);
    assert.ok(token.startsWith('gAAAAA') && token.length === 183);
    assert.equal(body.token.project?.name, 'admin');
    assert.deepEqual(body.token.roles?.map((r) => r.name).sort(), ['admin', 'member', 'reader']);
    assert.equal(body.token.expires_at, '2026-11-22T09:01:00.000000Z');
    const network = body.token.catalog?.find((s) => s.type === 'network');
    assert.deepEqual(network?.endpoints.map((e) => [e.interface, e.region_id, e.url]).sort(), [
      ['admin', 'RegionOne', sim.neutronUrl],
      ['internal', 'RegionOne', sim.neutronUrl],
      ['public', 'RegionOne', sim.neutronUrl],
    ]);
    assert.ok(body.token.catalog?.some((s) => s.type === 'load-balancer' && s.endpoints[0]!.url === sim.octaviaUrl));
    const bad = await keystone<{ error: unknown }>('POST', '/auth/tokens', passwordAuth('admin', 'wrong', 'admin'));
    assert.deepEqual(
      [bad.status, bad.body.error],
      [401, { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' }],
    );
  });

  it('lists projects to an admin (by name too), shows a member its own, and refuses a member the list', async () => {
    const admin = await issue(passwordAuth('admin', 's3cret', 'admin'));
    const member = await issue(passwordAuth('demo', 's3cret', 'demo'));
    const as = (token: string) => client(sim.keystoneUrl, { 'x-auth-token': token });
    type Projects = { projects: { id: string; name: string }[] };
    const all = await as(admin.token)<Projects>('GET', '/projects');
    assert.deepEqual(all.body.projects.map((p) => p.name).sort(), ['admin', 'demo', 'service']);
    const demo = await as(admin.token)<Projects>('GET', '/projects?name=demo');
    assert.deepEqual(
      demo.body.projects.map((p) => p.name),
      ['demo'],
    );
    const own = await as(member.token)<{ project: { name: string } }>('GET', `/projects/${demo.body.projects[0]!.id}`);
    assert.deepEqual([own.status, own.body.project.name], [200, 'demo']);
    assert.equal((await as(member.token)('GET', '/projects')).status, 403);
    const other = all.body.projects.find((p) => p.name === 'admin')!;
    assert.equal((await as(member.token)('GET', `/projects/${other.id}`)).status, 404);
  });

  it('makes Neutron require a valid token, and expires tokens after their lifetime', async () => {
    const none = await neutron()<{ error: unknown }>('GET', '/networks');
    assert.equal(none.status, 401);
    assert.deepEqual(none.body.error, {
      code: 401,
      title: 'Unauthorized',
      message: 'The request you have made requires authentication.',
    });
    assert.equal(none.headers.get('www-authenticate'), `Keystone uri="${sim.keystoneUrl}"`);
    const { token } = await issue(passwordAuth('admin', 's3cret', 'admin'));
    assert.equal((await neutron(token)('GET', '/networks')).status, 200);
    assert.equal(
      (await keystone('GET', '/auth/tokens', undefined, { 'x-auth-token': token, 'x-subject-token': token })).status,
      200,
    );
    clock.advance(60_000);
    assert.equal((await neutron(token)('GET', '/networks')).status, 401);
    const fresh = (await issue(passwordAuth('admin', 's3cret', 'admin'))).token;
    const gone = await keystone<{ error: { message: string } }>('GET', '/auth/tokens', undefined, {
      'x-auth-token': fresh,
      'x-subject-token': token,
    });
    assert.deepEqual([gone.status, gone.body.error.message], [404, `Could not find token: ${token}.`]);
  });

  it('creates application credentials whose secret authenticates (by id, or by name and user) into their project', async () => {
    const admin = await issue(passwordAuth('admin', 's3cret', 'admin'));
    const created = await keystone<{ application_credential: { id: string; secret: string; project_id: string } }>(
      'POST',
      `/users/${admin.body.token.user.id}/application_credentials`,
      { application_credential: { name: 'raven' } },
      { 'x-auth-token': admin.token },
    );
    assert.equal(created.status, 201);
    const cred = created.body.application_credential;
    assert.ok(cred.secret.length > 20);
    assert.equal(cred.project_id, admin.body.token.project?.id);
    const listed = await keystone<{ application_credentials: Record<string, unknown>[] }>(
      'GET',
      `/users/${admin.body.token.user.id}/application_credentials`,
      undefined,
      { 'x-auth-token': admin.token },
    );
    assert.ok(
      listed.body.application_credentials.every((c) => !('secret' in c)),
      'the secret is shown once',
    );
    const byId = await issue({
      auth: {
        identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: cred.secret } },
      },
    });
    assert.deepEqual(
      [byId.status, byId.body.token.project?.id, byId.body.token.methods],
      [201, cred.project_id, ['application_credential']],
    );
    const byName = await issue({
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            name: 'raven',
            secret: cred.secret,
            user: { name: 'admin', domain: { name: 'Default' } },
          },
        },
      },
    });
    assert.equal(byName.status, 201);
    assert.equal((await neutron(byId.token)('GET', '/networks')).status, 200);
    const wrong = await issue({
      auth: {
        identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: 'nope' } },
      },
    });
    assert.equal(wrong.status, 401);
    const rescoped = await issue({
      auth: {
        identity: { methods: ['token'], token: { id: admin.token } },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    });
    assert.equal(rescoped.status, 201);
  });

  it("applies member policy: own and external networks visible, router:external and others' quotas forbidden", async () => {
    const admin = neutron((await issue(passwordAuth('admin', 's3cret', 'admin'))).token);
    const demoToken = await issue(passwordAuth('demo', 's3cret', 'demo'));
    const demo = neutron(demoToken.token);
    const priv = await admin<{ network: Network }>('POST', '/networks', { network: { name: 'admin-private' } });
    const pub = await admin<{ network: Network }>('POST', '/networks', {
      network: { name: 'public', 'router:external': true },
    });
    const own = await demo<{ network: Network }>('POST', '/networks', { network: { name: 'demo-net' } });
    assert.equal(own.status, 201);
    assert.equal(own.body.network.project_id, demoToken.body.token.project?.id);
    assert.equal(own.body.network['provider:network_type'], undefined, 'provider attributes are admin-only');
    const forbidden = await demo<NeutronErrorBody>('POST', '/networks', {
      network: { name: 'x', 'router:external': true },
    });
    assert.deepEqual([forbidden.status, forbidden.body.NeutronError.type], [403, 'PolicyNotAuthorized']);
    const seen = (await demo<{ networks: Network[] }>('GET', '/networks?fields=id')).body.networks
      .map((n) => n.id)
      .sort();
    assert.deepEqual(seen, [own.body.network.id, pub.body.network.id].sort());
    assert.equal((await demo('GET', `/networks/${priv.body.network.id}`)).status, 404);
    const adminProject = (await admin<{ network: Network }>('GET', `/networks/${priv.body.network.id}`)).body.network
      .project_id;
    assert.equal((await demo('GET', `/quotas/${adminProject}`)).status, 403);
  });
});
