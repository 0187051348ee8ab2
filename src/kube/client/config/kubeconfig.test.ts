import assert from 'node:assert/strict';
import { utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../core/index.ts';
import { loadKubeconfig } from './index.ts';
import { b64, kubeconfig, pem, tempDir } from '../../../../test/support/kubeconfig-fixtures.ts';

let t: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  t = await tempDir();
});
after(() => t.cleanup());

describe('loadKubeconfig: clusters and users', () => {
  it('reads a token user, the CA data, TLS options and the namespace', async () => {
    const file = await t.write(
      'token/config',
      kubeconfig({
        cluster: {
          server: 'https://k8s.example:6443/',
          'certificate-authority-data': b64(pem('CERTIFICATE')),
          'tls-server-name': 'kubernetes',
          'proxy-url': 'http://proxy:3128',
        },
        user: { token: 'secret-token' },
        namespace: 'team-a',
      }),
    );
    const conn = await loadKubeconfig({ kubeconfig: file });
    assert.equal(conn.server, 'https://k8s.example:6443');
    assert.equal(conn.ca, pem('CERTIFICATE'));
    assert.equal(conn.tlsServerName, 'kubernetes');
    assert.equal(conn.proxyUrl, 'http://proxy:3128');
    assert.equal(conn.namespace, 'team-a');
    assert.equal(conn.source, `kubeconfig ${file}, context "test"`);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'secret-token' });
  });

  it('reads basic auth, insecure-skip-tls-verify and a server without a scheme', async () => {
    const file = await t.write(
      'basic/config',
      kubeconfig({
        cluster: { server: '10.0.0.1:6443', 'insecure-skip-tls-verify': true },
        user: { username: 'admin', password: 'pw' },
      }),
    );
    const conn = await loadKubeconfig({ kubeconfig: file });
    assert.equal(conn.server, 'https://10.0.0.1:6443');
    assert.equal(conn.insecureSkipTlsVerify, true);
    assert.equal(conn.ca, undefined);
    assert.equal(conn.namespace, undefined);
    assert.deepEqual(await conn.credentials?.(), { kind: 'basic', username: 'admin', password: 'pw' });
  });

  it('reads a client certificate from data', async () => {
    const file = await t.write(
      'cert-data/config',
      kubeconfig({
        user: {
          'client-certificate-data': b64(pem('CERTIFICATE', 'Y2VydA==')),
          'client-key-data': b64(pem('PRIVATE KEY', 'a2V5')),
        },
      }),
    );
    const conn = await loadKubeconfig({ kubeconfig: file });
    assert.deepEqual(await conn.credentials?.(), {
      kind: 'client-certificate',
      cert: pem('CERTIFICATE', 'Y2VydA=='),
      key: pem('PRIVATE KEY', 'a2V5'),
    });
  });

  it('resolves relative certificate-authority, client-certificate and client-key against the file, and re-reads rotated ones', async () => {
    await t.write('cert-files/pki/ca.crt', pem('CERTIFICATE', 'Y2E='));
    await t.write('cert-files/pki/client.crt', pem('CERTIFICATE', 'MQ=='));
    const keyPath = await t.write('cert-files/pki/client.key', pem('PRIVATE KEY', 'MQ=='));
    const file = await t.write(
      'cert-files/config',
      kubeconfig({
        cluster: { server: 'https://k8s.example', 'certificate-authority': 'pki/ca.crt' },
        user: { 'client-certificate': './pki/client.crt', 'client-key': 'pki/client.key' },
      }),
    );
    const conn = await loadKubeconfig({ kubeconfig: file });
    assert.equal(conn.ca, pem('CERTIFICATE', 'Y2E='));
    assert.deepEqual(await conn.credentials?.(), {
      kind: 'client-certificate',
      cert: pem('CERTIFICATE', 'MQ=='),
      key: pem('PRIVATE KEY', 'MQ=='),
    });
    await writeFile(keyPath, pem('PRIVATE KEY', 'Mg=='));
    await utimes(keyPath, new Date(), new Date(Date.now() + 5_000));
    assert.deepEqual(await conn.credentials?.(), {
      kind: 'client-certificate',
      cert: pem('CERTIFICATE', 'MQ=='),
      key: pem('PRIVATE KEY', 'Mg=='),
    });
  });

  it('re-reads a tokenFile when its mtime changes, and after a minute even when it does not', async () => {
    const tokenPath = await t.write('token-file/secrets/token', 'token-aaa\n');
    const file = await t.write('token-file/config', kubeconfig({ user: { tokenFile: 'secrets/token' } }));
    const clock = new FakeClock(Date.now());
    const conn = await loadKubeconfig({ kubeconfig: file, clock });
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'token-aaa' });

    await writeFile(tokenPath, 'token-bbb\n');
    const later = new Date(Date.now() + 10_000);
    await utimes(tokenPath, later, later);
    assert.deepEqual(
      await conn.credentials?.(),
      { kind: 'bearer', token: 'token-bbb' },
      'a new mtime is noticed at once',
    );

    // Same size, same mtime: indistinguishable by stat, so the cached token stands until a minute has passed.
    await writeFile(tokenPath, 'token-ccc\n');
    await utimes(tokenPath, later, later);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'token-bbb' });
    clock.advance(60_000);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'token-ccc' });
  });

  it('treats a context without a user as anonymous', async () => {
    const file = await t.write(
      'anon/config',
      'clusters: [{name: c, cluster: {server: "https://a"}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\nusers:\n',
    );
    const conn = await loadKubeconfig({ kubeconfig: file });
    assert.equal(conn.credentials, undefined);
    assert.equal(conn.server, 'https://a');
  });
});

describe('loadKubeconfig: finding and merging files', () => {
  const two = async (sub: string) => {
    const first = await t.write(
      `${sub}/one`,
      [
        'clusters: [{name: shared, cluster: {server: "https://one"}}]',
        'users: [{name: shared, user: {token: one-token}}]',
        'contexts: [{name: shared, context: {cluster: shared, user: shared, namespace: one}}]',
        'current-context: shared',
      ].join('\n'),
    );
    const second = await t.write(
      `${sub}/two`,
      [
        'clusters: [{name: shared, cluster: {server: "https://two"}}, {name: only-two, cluster: {server: "https://only-two"}}]',
        'users: [{name: shared, user: {token: two-token}}]',
        'contexts: [{name: shared, context: {cluster: shared, user: shared}}, {name: dev, context: {cluster: only-two, user: shared, namespace: dev}}]',
        'current-context: dev',
      ].join('\n'),
    );
    return { first, second };
  };

  it('merges KUBECONFIG files: the first to name an entry wins, current-context from the first file', async () => {
    const { first, second } = await two('merge');
    const conn = await loadKubeconfig({
      env: { KUBECONFIG: `${first}::${join(t.dir, 'missing')}:${second}:${first}` },
    });
    assert.equal(conn.server, 'https://one');
    assert.equal(conn.namespace, 'one');
    assert.equal(conn.source, `kubeconfig ${first}, context "shared"`);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'one-token' });
  });

  it("selects --context across merged files, with the first file's user", async () => {
    const { first, second } = await two('context');
    const conn = await loadKubeconfig({ context: 'dev', env: { KUBECONFIG: `${first}:${second}` } });
    assert.equal(conn.server, 'https://only-two');
    assert.equal(conn.namespace, 'dev');
    assert.equal(conn.source, `kubeconfig ${second}, context "dev"`);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'one-token' });
  });

  it('prefers --kubeconfig to KUBECONFIG, and KUBECONFIG to ~/.kube/config', async () => {
    const { first, second } = await two('precedence');
    const home = join(t.dir, 'home');
    await t.write('home/.kube/config', kubeconfig({ cluster: { server: 'https://home' } }));
    assert.equal(
      (await loadKubeconfig({ kubeconfig: second, env: { KUBECONFIG: first }, homeDir: home })).server,
      'https://only-two',
    );
    assert.equal((await loadKubeconfig({ env: { KUBECONFIG: first }, homeDir: home })).server, 'https://one');
    assert.equal((await loadKubeconfig({ env: {}, homeDir: home })).server, 'https://home');
    assert.equal((await loadKubeconfig({ env: { HOME: home } })).server, 'https://home');
  });

  it('ignores unknown fields and nulls, as kubectl does', async () => {
    const file = await t.write(
      'lenient/config',
      `${kubeconfig({ user: { token: 'x' } })}preferences: {colors: true}\nextensions:\n`,
    );
    assert.equal((await loadKubeconfig({ kubeconfig: file })).server, 'https://k8s.example:6443');
  });
});
