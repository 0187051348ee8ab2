import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { KubeconfigError, loadKubeconfig, type KubeconfigErrorCode } from './index.ts';
import { b64, kubeconfig, pem, tempDir } from '../../../../test/support/kubeconfig-fixtures.ts';

let t: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  t = await tempDir();
});
after(() => t.cleanup());

const SECRETS = ['s3cret-token', 'hunter2', 'S3CRETKEY'];

/** Rejects with `code`, names the file and field in the message and as properties, and leaks no secret. */
async function expectError(
  p: Promise<unknown>,
  code: KubeconfigErrorCode,
  file: string,
  field: string | undefined,
  detail: RegExp,
): Promise<KubeconfigError> {
  let caught: unknown;
  await assert.rejects(
    Promise.resolve(p).catch((e: unknown) => {
      caught = e;
      throw e;
    }),
  );
  assert.ok(caught instanceof KubeconfigError, `not a KubeconfigError: ${String(caught)}`);
  const e = caught;
  assert.equal(e.code, code, e.message);
  assert.equal(e.file, file);
  assert.equal(e.field, field);
  assert.ok(e.message.startsWith(field ? `kubeconfig ${file}: ${field}: ` : `kubeconfig ${file}`), e.message);
  assert.match(e.message, detail);
  for (const secret of SECRETS) assert.ok(!e.message.includes(secret), `secret in: ${e.message}`);
  return e;
}

const load = (file: string, context?: string) => loadKubeconfig({ kubeconfig: file, ...(context ? { context } : {}) });

describe('KubeconfigError codes, with file and field', () => {
  it('KUBECONFIG_NOT_FOUND: a missing --kubeconfig, and no file anywhere', async () => {
    const missing = join(t.dir, 'nope');
    await expectError(
      load(missing),
      'KUBECONFIG_NOT_FOUND',
      missing,
      undefined,
      /: no such file \(from --kubeconfig\)$/,
    );
    const both = `${missing}, ${missing}2`;
    await expectError(
      loadKubeconfig({ env: { KUBECONFIG: `${missing}:${missing}2` } }),
      'KUBECONFIG_NOT_FOUND',
      both,
      undefined,
      /: no such file \(from KUBECONFIG\)$/,
    );
    const home = join(t.dir, 'empty-home');
    await expectError(
      loadKubeconfig({ env: {}, homeDir: home }),
      'KUBECONFIG_NOT_FOUND',
      join(home, '.kube/config'),
      undefined,
      /\(from the default ~\/.kube\/config\)$/,
    );
  });

  it('KUBECONFIG_INVALID: YAML syntax, shown without the offending line', async () => {
    const file = await t.write('yaml', 'users:\n- name: a\n  user: {token: s3cret-token: x}\n');
    await expectError(load(file), 'KUBECONFIG_INVALID', file, undefined, /not valid YAML: .*line 3/);
  });

  it('KUBECONFIG_INVALID: wrong types, named by path', async () => {
    const file = await t.write('types', 'users:\n- name: a\n- name: b\n  user: {token: 5}\n');
    await expectError(load(file), 'KUBECONFIG_INVALID', file, 'users[1].user.token', /expected string/);
  });

  it('KUBECONFIG_INVALID: exec apiVersion and interactiveMode', async () => {
    const alpha = await t.write(
      'alpha',
      kubeconfig({ user: { exec: { command: 'x', apiVersion: 'client.authentication.k8s.io/v1alpha1' } } }),
    );
    const e = await expectError(
      load(alpha),
      'KUBECONFIG_INVALID',
      alpha,
      'users[0].user.exec.apiVersion',
      /unsupported/,
    );
    assert.equal(
      e.message,
      `kubeconfig ${alpha}: users[0].user.exec.apiVersion: unsupported "client.authentication.k8s.io/v1alpha1" (use v1 or v1beta1)`,
    );
    const mode = await t.write(
      'mode',
      kubeconfig({ user: { exec: { command: 'x', apiVersion: 'client.authentication.k8s.io/v1' } } }),
    );
    await expectError(
      load(mode),
      'KUBECONFIG_INVALID',
      mode,
      'users[0].user.exec.interactiveMode',
      /required with apiVersion v1/,
    );
  });

  it('KUBECONFIG_INVALID: cluster fields', async () => {
    const noServer = await t.write('no-server', kubeconfig({ cluster: {} }));
    await expectError(load(noServer), 'KUBECONFIG_INVALID', noServer, 'clusters[0].cluster.server', /required/);
    const caFile = await t.write(
      'ca-file',
      kubeconfig({ cluster: { server: 'https://a', 'certificate-authority': 'missing/ca.crt' } }),
    );
    await expectError(
      load(caFile),
      'KUBECONFIG_INVALID',
      caFile,
      'clusters[0].cluster.certificate-authority',
      new RegExp(`cannot read ${join(t.dir, 'missing/ca.crt')} \\(ENOENT\\)`),
    );
    const insecure = await t.write(
      'insecure',
      kubeconfig({
        cluster: {
          server: 'https://a',
          'certificate-authority-data': b64(pem('CERTIFICATE')),
          'insecure-skip-tls-verify': true,
        },
      }),
    );
    await expectError(
      load(insecure),
      'KUBECONFIG_INVALID',
      insecure,
      'clusters[0].cluster.insecure-skip-tls-verify',
      /certificate-authority/,
    );
  });

  it('KUBECONFIG_INVALID: user fields, without their values', async () => {
    const notB64 = await t.write(
      'not-b64',
      kubeconfig({ user: { 'client-certificate-data': b64(pem('CERTIFICATE')), 'client-key-data': 'S3CRETKEY!!' } }),
    );
    await expectError(load(notB64), 'KUBECONFIG_INVALID', notB64, 'users[0].user.client-key-data', /not base64/);
    const notPem = await t.write(
      'not-pem',
      kubeconfig({ user: { 'client-certificate-data': b64(pem('CERTIFICATE')), 'client-key-data': b64('S3CRETKEY') } }),
    );
    await expectError(load(notPem), 'KUBECONFIG_INVALID', notPem, 'users[0].user.client-key-data', /no PEM block/);
    const half = await t.write('half', kubeconfig({ user: { 'client-certificate-data': b64(pem('CERTIFICATE')) } }));
    await expectError(load(half), 'KUBECONFIG_INVALID', half, 'users[0].user.client-key', /required/);
    const two = await t.write(
      'two',
      kubeconfig({ user: { token: 's3cret-token', username: 'u', password: 'hunter2' } }),
    );
    await expectError(
      load(two),
      'KUBECONFIG_INVALID',
      two,
      'users[0].user',
      /more than one authentication method \(token, basic auth\)/,
    );
    const tokenFile = await t.write('token-file', kubeconfig({ user: { tokenFile: 'no-such-token' } }));
    await expectError(
      load(tokenFile),
      'KUBECONFIG_INVALID',
      tokenFile,
      'users[0].user.tokenFile',
      /cannot read .*no-such-token \(ENOENT\)/,
    );
  });

  it('KUBECONFIG_UNSUPPORTED: impersonation, SOCKS proxies, a token beside a client certificate', async () => {
    const as = await t.write('as', kubeconfig({ user: { token: 's3cret-token', as: 'admin' } }));
    await expectError(load(as), 'KUBECONFIG_UNSUPPORTED', as, 'users[0].user.as', /impersonation/);
    const socks = await t.write(
      'socks',
      kubeconfig({ cluster: { server: 'https://a', 'proxy-url': 'socks5://proxy:1080' } }),
    );
    await expectError(
      load(socks),
      'KUBECONFIG_UNSUPPORTED',
      socks,
      'clusters[0].cluster.proxy-url',
      /socks5: is not supported/,
    );
    const both = await t.write(
      'both',
      kubeconfig({
        user: {
          token: 's3cret-token',
          'client-certificate-data': b64(pem('CERTIFICATE')),
          'client-key-data': b64(pem('KEY', 'S3CRETKEY')),
        },
      }),
    );
    await expectError(load(both), 'KUBECONFIG_UNSUPPORTED', both, 'users[0].user', /token, client certificate/);
  });

  it('CONTEXT_NOT_FOUND: --context, current-context, or neither', async () => {
    const file = await t.write('ctx', kubeconfig({ currentContext: 'gone' }));
    await expectError(
      load(file),
      'CONTEXT_NOT_FOUND',
      file,
      'current-context',
      /context "gone" not found \(contexts: "test"\)/,
    );
    await expectError(load(file, 'other'), 'CONTEXT_NOT_FOUND', file, '--context', /context "other" not found/);
    const none = await t.write('no-ctx', kubeconfig({ currentContext: null }));
    await expectError(load(none), 'CONTEXT_NOT_FOUND', none, 'current-context', /not set, and no --context given/);
  });

  it('CLUSTER_NOT_FOUND and USER_NOT_FOUND name the context field that points nowhere', async () => {
    const file = await t.write(
      'refs',
      [
        'clusters: [{name: c, cluster: {server: "https://a"}}]',
        'users: [{name: u, user: {token: s3cret-token}}]',
        'contexts: [{name: bad-cluster, context: {cluster: x, user: u}}, {name: bad-user, context: {cluster: c, user: y}}]',
      ].join('\n'),
    );
    await expectError(
      load(file, 'bad-cluster'),
      'CLUSTER_NOT_FOUND',
      file,
      'contexts[0].context.cluster',
      /cluster "x" not found \(clusters: "c"\)/,
    );
    await expectError(
      load(file, 'bad-user'),
      'USER_NOT_FOUND',
      file,
      'contexts[1].context.user',
      /user "y" not found \(users: "u"\)/,
    );
  });

  it('AUTH_PROVIDER_UNSUPPORTED', async () => {
    const file = await t.write(
      'gcp',
      kubeconfig({ user: { 'auth-provider': { name: 'gcp', config: { 'access-token': 's3cret-token' } } } }),
    );
    await expectError(
      load(file),
      'AUTH_PROVIDER_UNSUPPORTED',
      file,
      'users[0].user.auth-provider',
      /"gcp" is not supported/,
    );
  });

  it('EXEC_FAILED: exit status with stderr, a missing command with its installHint, bad output', async () => {
    const exec = { apiVersion: 'client.authentication.k8s.io/v1beta1' };
    await t.write(
      'exec/fail.sh',
      '#!/bin/sh\necho \'{"status":{"token":"s3cret-token"}}\'\necho "login expired; run sso login" >&2\nexit 3\n',
      0o755,
    );
    const fail = await t.write('exec/fail', kubeconfig({ user: { exec: { ...exec, command: './fail.sh' } } }));
    await expectError(
      (await load(fail)).credentials!(),
      'EXEC_FAILED',
      fail,
      'users[0].user.exec',
      /fail\.sh" exited with code 3: login expired; run sso login$/,
    );

    const missing = await t.write(
      'exec/missing',
      kubeconfig({
        user: {
          exec: { ...exec, command: 'raven-no-such-plugin', installHint: 'Install it with: apt install raven-plugin' },
        },
      }),
    );
    await expectError(
      (await load(missing)).credentials!(),
      'EXEC_FAILED',
      missing,
      'users[0].user.exec',
      /could not be run \(ENOENT\)\nInstall it with: apt install raven-plugin/,
    );

    await t.write(
      'exec/v1.sh',
      '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"s3cret-token"}}\'\n',
      0o755,
    );
    const wrong = await t.write('exec/wrong', kubeconfig({ user: { exec: { ...exec, command: './v1.sh' } } }));
    await expectError(
      (await load(wrong)).credentials!(),
      'EXEC_FAILED',
      wrong,
      'users[0].user.exec',
      /apiVersion "client.authentication.k8s.io\/v1", want "client.authentication.k8s.io\/v1beta1"/,
    );

    await t.write('exec/junk.sh', '#!/bin/sh\necho s3cret-token\n', 0o755);
    const junk = await t.write('exec/junk', kubeconfig({ user: { exec: { ...exec, command: './junk.sh' } } }));
    await expectError((await load(junk)).credentials!(), 'EXEC_FAILED', junk, 'users[0].user.exec', /not JSON/);
  });
});
