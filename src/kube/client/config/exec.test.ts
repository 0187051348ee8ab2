import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../core/index.ts';
import { EXEC_REFRESH_MARGIN_MS, loadKubeconfig } from './index.ts';
import { b64, kubeconfig, pem, PLUGIN, tempDir } from '../../../../test/support/kubeconfig-fixtures.ts';

let t: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  t = await tempDir();
});
after(() => t.cleanup());

const START = Date.parse('2030-01-01T00:00:00Z');
const count = async (sub: string) => Number((await readFile(join(t.dir, sub, 'bin', 'count'), 'utf8')).trim());

/** A kubeconfig in `<sub>/` whose user runs `<sub>/bin/plugin` by a relative path. */
async function setup(
  sub: string,
  exec: Record<string, unknown>,
  cluster: Record<string, unknown> = { server: 'https://k8s.example' },
) {
  await t.write(`${sub}/bin/plugin`, PLUGIN, 0o755);
  return t.write(
    `${sub}/config`,
    kubeconfig({ cluster, user: { exec: { command: './bin/plugin', args: ['arg1'], ...exec } } }),
  );
}

const v1 = (expires?: string) => ({
  apiVersion: 'client.authentication.k8s.io/v1',
  interactiveMode: 'Never',
  env: [
    { name: 'API', value: 'client.authentication.k8s.io/v1' },
    ...(expires ? [{ name: 'EXPIRES', value: expires }] : []),
  ],
});

describe('exec credential plugins', () => {
  it('v1: runs the command with args and env, caches the token until shortly before expiry, then runs it again', async () => {
    const file = await setup('v1', v1('2030-01-01T00:10:00Z'));
    const clock = new FakeClock(START);
    const conn = await loadKubeconfig({ kubeconfig: file, clock });
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'tok-1-arg1' });
    assert.deepEqual(await Promise.all([conn.credentials!(), conn.credentials!()]), [
      { kind: 'bearer', token: 'tok-1-arg1' },
      { kind: 'bearer', token: 'tok-1-arg1' },
    ]);
    clock.advance(10 * 60_000 - EXEC_REFRESH_MARGIN_MS - 1);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'tok-1-arg1' });
    assert.equal(await count('v1'), 1);
    clock.advance(1);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'tok-2-arg1' });
    assert.equal(await count('v1'), 2);

    const info = JSON.parse(await readFile(join(t.dir, 'v1', 'bin', 'exec-info.json'), 'utf8')) as unknown;
    assert.deepEqual(info, {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
  });

  it('v1beta1: interactiveMode may be omitted; provideClusterInfo passes the cluster; concurrent callers share one run', async () => {
    const ca = pem('CERTIFICATE');
    const file = await setup(
      'v1beta1',
      {
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        provideClusterInfo: true,
        env: [
          { name: 'API', value: 'client.authentication.k8s.io/v1beta1' },
          { name: 'EXPIRES', value: '2030-01-01T01:00:00Z' },
        ],
      },
      {
        server: 'https://k8s.example',
        'certificate-authority-data': b64(ca),
        'tls-server-name': 'kubernetes',
        extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'raven' } }],
      },
    );
    const clock = new FakeClock(START);
    const conn = await loadKubeconfig({ kubeconfig: file, clock });
    const all = await Promise.all([1, 2, 3].map(() => conn.credentials!()));
    assert.deepEqual(all, Array(3).fill({ kind: 'bearer', token: 'tok-1-arg1' }));
    assert.equal(await count('v1beta1'), 1);
    const info = JSON.parse(await readFile(join(t.dir, 'v1beta1', 'bin', 'exec-info.json'), 'utf8')) as unknown;
    assert.deepEqual(info, {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: 'https://k8s.example',
          'tls-server-name': 'kubernetes',
          'certificate-authority-data': b64(ca),
          config: { audience: 'raven' },
        },
      },
    });
    clock.advance(60 * 60_000);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'tok-2-arg1' });
  });

  it('caches a credential without an expiry for good', async () => {
    const file = await setup('forever', v1());
    const clock = new FakeClock(START);
    const conn = await loadKubeconfig({ kubeconfig: file, clock });
    await conn.credentials?.();
    clock.advance(365 * 24 * 3600_000);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'tok-1-arg1' });
    assert.equal(await count('forever'), 1);
  });

  it('keeps a cached credential that has not yet expired when a refresh fails', async () => {
    const ok =
      '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-first","expirationTimestamp":"2030-01-01T00:01:00Z"}}';
    await t.write(
      'flaky/bin/plugin',
      `#!/bin/sh\nd=$(dirname "$0")\nif [ -e "$d/ran" ]; then echo "idp down" >&2; exit 1; fi\ntouch "$d/ran"\necho '${ok}'\n`,
      0o755,
    );
    const file = await t.write('flaky/config', kubeconfig({ user: { exec: { command: './bin/plugin', ...v1() } } }));
    const clock = new FakeClock(START);
    const conn = await loadKubeconfig({ kubeconfig: file, clock });
    assert.deepEqual(await conn.credentials!(), { kind: 'bearer', token: 'tok-first' });
    clock.advance(60_000 - EXEC_REFRESH_MARGIN_MS / 2);
    assert.deepEqual(
      await conn.credentials!(),
      { kind: 'bearer', token: 'tok-first' },
      'refresh failed inside the margin: the cached token still holds',
    );
    clock.advance(EXEC_REFRESH_MARGIN_MS);
    await assert.rejects(conn.credentials!(), /idp down/);
  });

  it('returns a client certificate a plugin prints', async () => {
    const cert = pem('CERTIFICATE');
    const key = pem('PRIVATE KEY');
    const out = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { clientCertificateData: cert, clientKeyData: key },
    });
    const json = await t.write('cert/plugin.json', out);
    // A bare command name is looked up on PATH.
    const abs = await t.write(
      'cert/config',
      kubeconfig({
        user: {
          exec: {
            command: 'cat',
            args: [json],
            apiVersion: 'client.authentication.k8s.io/v1',
            interactiveMode: 'IfAvailable',
          },
        },
      }),
    );
    assert.deepEqual(await (await loadKubeconfig({ kubeconfig: abs })).credentials?.(), {
      kind: 'client-certificate',
      cert,
      key,
    });
  });

  it('stops waiting when the caller aborts', async () => {
    await t.write('slow/bin/plugin', '#!/bin/sh\nsleep 1\n', 0o755);
    const file = await t.write('slow/config', kubeconfig({ user: { exec: { command: './bin/plugin', ...v1() } } }));
    const conn = await loadKubeconfig({ kubeconfig: file });
    const controller = new AbortController();
    const pending = conn.credentials!(controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(pending, /stop/);
  });
});
