import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from '../../../test/support/node-test.ts';
import { loadCloudConfig } from './clouds.ts';
import { describeCloud } from './types.ts';

function dirs(): { cwd: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), 'raven-clouds-'));
  const cwd = join(root, 'cwd');
  const home = join(root, 'home');
  mkdirSync(cwd);
  mkdirSync(join(home, '.config', 'openstack'), { recursive: true });
  return { cwd, home };
}

const cloudsYaml = `
clouds:
  prod:
    auth:
      auth_url: https://keystone.example:5000/v3
      username: raven
      project_name: k8s
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionTwo
    interface: internal
  appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://127.0.0.1:15000
      application_credential_id: 21dced0fd20347869b93710d2b98aae0
      application_credential_secret: s3cr3t-app
  local:
    auth_type: none
    network_endpoint_override: http://127.0.0.1:19696/
    load_balancer_endpoint_override: http://127.0.0.1:19876
    load_balancer_project_id: proj-1
    verify: false
`;

describe('loadCloudConfig', () => {
  it('reads the cloud named by OS_CLOUD from ./clouds.yaml, with the password from secure.yaml', () => {
    const { cwd, home } = dirs();
    writeFileSync(join(cwd, 'clouds.yaml'), cloudsYaml);
    writeFileSync(
      join(home, '.config', 'openstack', 'secure.yaml'),
      'clouds:\n  prod:\n    auth:\n      password: hunter2\n',
    );
    const cloud = loadCloudConfig({ env: { OS_CLOUD: 'prod' }, cwd, homeDir: home });
    assert.equal(cloud.name, 'prod');
    assert.equal(cloud.source, join(cwd, 'clouds.yaml'));
    assert.deepEqual(cloud.auth, {
      type: 'password',
      authUrl: 'https://keystone.example:5000/v3',
      password: 'hunter2',
      username: 'raven',
      userId: undefined,
      userDomainName: 'Default',
      userDomainId: undefined,
      projectName: 'k8s',
      projectId: undefined,
      projectDomainName: 'Default',
      projectDomainId: undefined,
      domainName: undefined,
      domainId: undefined,
    });
    assert.equal(cloud.regionName, 'RegionTwo');
    assert.equal(cloud.interface, 'internal');
    assert.doesNotMatch(JSON.stringify(describeCloud(cloud)), /hunter2/);
  });

  it('--os-cloud wins over OS_CLOUD; application credentials and noauth clouds resolve', () => {
    const { cwd, home } = dirs();
    writeFileSync(join(home, '.config', 'openstack', 'clouds.yaml'), cloudsYaml);
    const app = loadCloudConfig({ cloud: 'appcred', env: { OS_CLOUD: 'prod' }, cwd, homeDir: home });
    assert.equal(app.auth.type, 'v3applicationcredential');
    assert.equal(app.interface, 'public');
    const local = loadCloudConfig({ cloud: 'local', env: {}, cwd, homeDir: home });
    assert.deepEqual(local.auth, { type: 'none' });
    assert.deepEqual(local.endpointOverrides, {
      network: 'http://127.0.0.1:19696/',
      'load-balancer': 'http://127.0.0.1:19876',
    });
    assert.equal(local.projectId, 'proj-1');
    assert.equal(local.insecure, true);
    // The form the openstack CLI rejects for auth_type none, still read.
    const old = join(cwd, 'old.yaml');
    writeFileSync(old, 'clouds:\n  old:\n    auth_type: none\n    project_id: proj-2\n');
    assert.equal(
      loadCloudConfig({ env: { OS_CLIENT_CONFIG_FILE: old, OS_CLOUD: 'old' }, cwd, homeDir: home }).projectId,
      'proj-2',
    );
  });

  it('OS_CLIENT_CONFIG_FILE is used before the search path, and must exist', () => {
    const { cwd, home } = dirs();
    const file = join(cwd, 'elsewhere.yaml');
    writeFileSync(file, cloudsYaml);
    writeFileSync(join(cwd, 'clouds.yaml'), 'clouds: {}\n');
    assert.equal(
      loadCloudConfig({ env: { OS_CLIENT_CONFIG_FILE: file, OS_CLOUD: 'local' }, cwd, homeDir: home }).source,
      file,
    );
    assert.throws(
      () =>
        loadCloudConfig({
          env: { OS_CLIENT_CONFIG_FILE: join(cwd, 'missing.yaml'), OS_CLOUD: 'x' },
          cwd,
          homeDir: home,
        }),
      (err: Error & { code?: string }) => err.code === 'CLOUDS_FILE_NOT_FOUND' && err.message.includes('missing.yaml'),
    );
  });

  it('without a cloud name, OS_* variables make the "envvars" cloud (OS_TENANT_* aliases, OS_INSECURE)', () => {
    const { cwd, home } = dirs();
    const cloud = loadCloudConfig({
      env: {
        OS_AUTH_URL: 'http://127.0.0.1:15000/v3',
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'pw',
        OS_TENANT_NAME: 'admin',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_ID: 'default',
        OS_REGION_NAME: 'RegionOne',
        OS_INTERFACE: 'public',
        OS_INSECURE: 'true',
      },
      cwd,
      homeDir: home,
    });
    assert.equal(cloud.name, 'envvars');
    assert.equal(cloud.source, 'environment');
    assert.equal(cloud.auth.type, 'password');
    assert.equal(cloud.auth.type === 'password' && cloud.auth.projectName, 'admin');
    assert.equal(cloud.auth.type === 'password' && cloud.auth.projectDomainId, 'default');
    assert.equal(cloud.insecure, true);
    const app = loadCloudConfig({
      env: { OS_AUTH_URL: 'http://k/v3', OS_APPLICATION_CREDENTIAL_ID: 'id', OS_APPLICATION_CREDENTIAL_SECRET: 's' },
      cwd,
      homeDir: home,
    });
    assert.equal(app.auth.type, 'v3applicationcredential');
  });

  it('the only cloud is chosen when nothing names one; several clouds need a name', () => {
    const { cwd, home } = dirs();
    writeFileSync(
      join(cwd, 'clouds.yaml'),
      'clouds:\n  only:\n    auth_type: none\n    network_endpoint_override: http://127.0.0.1:1/\n',
    );
    assert.equal(loadCloudConfig({ env: {}, cwd, homeDir: home }).name, 'only');
    writeFileSync(join(cwd, 'clouds.yaml'), cloudsYaml);
    assert.throws(
      () => loadCloudConfig({ env: {}, cwd, homeDir: home }),
      /has 3 clouds \(prod, appcred, local\): choose one with --os-cloud or OS_CLOUD/,
    );
  });

  it('errors name the file, the cloud and the field', () => {
    const { cwd, home } = dirs();
    const file = join(cwd, 'clouds.yaml');
    writeFileSync(file, cloudsYaml);
    assert.throws(
      () => loadCloudConfig({ cloud: 'nope', env: {}, cwd, homeDir: home }),
      /cloud "nope" is not in .*clouds\.yaml; it has: prod, appcred, local/,
    );
    assert.throws(
      () => loadCloudConfig({ cloud: 'prod', env: {}, cwd, homeDir: home }),
      new RegExp(`${file}: clouds.prod: auth.password is required for password auth`),
    );
    writeFileSync(file, 'clouds:\n  bad:\n    auth_type: kerberos\n    auth: {auth_url: http://x}\n');
    assert.throws(
      () => loadCloudConfig({ cloud: 'bad', env: {}, cwd, homeDir: home }),
      /clouds.bad: auth_type "kerberos" is not supported/,
    );
    writeFileSync(file, 'clouds:\n  bad:\n    auth_type: none\n    cacert: /no/such/ca.pem\n');
    assert.throws(
      () => loadCloudConfig({ cloud: 'bad', env: {}, cwd, homeDir: home }),
      /clouds.bad: cacert \/no\/such\/ca.pem: ENOENT/,
    );
    writeFileSync(file, 'clouds: [1, 2\n');
    assert.throws(
      () => loadCloudConfig({ cloud: 'bad', env: {}, cwd, homeDir: home }),
      (err: Error & { code?: string }) => err.code === 'CLOUDS_FILE_INVALID' && err.message.startsWith(file),
    );
    assert.throws(
      () => loadCloudConfig({ env: {}, cwd: join(cwd, '..', 'home'), homeDir: join(cwd, '..', 'nowhere') }),
      /no OpenStack cloud configured/,
    );
  });
});
