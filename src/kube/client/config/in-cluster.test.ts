import assert from 'node:assert/strict';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import { FakeClock } from '../../../core/index.ts';
import { inClusterConfig, KubeconfigError, loadConnection } from './index.ts';
import { kubeconfig, pem, tempDir } from '../../../../test/support/kubeconfig-fixtures.ts';

let t: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  t = await tempDir();
});
after(() => t.cleanup());

const SA = 'var/run/secrets/kubernetes.io/serviceaccount';
const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

/** A fake root with a mounted service account. */
async function root(name: string, files: { token?: string; ca?: string; namespace?: string } = {}): Promise<string> {
  const r = join(t.dir, name);
  if (files.token !== undefined) await t.write(`${name}/${SA}/token`, files.token);
  if (files.ca !== undefined) await t.write(`${name}/${SA}/ca.crt`, files.ca);
  if (files.namespace !== undefined) await t.write(`${name}/${SA}/namespace`, files.namespace);
  return r;
}

const isCode = (code: string) => (e: unknown) => e instanceof KubeconfigError && e.code === code;

describe('inClusterConfig', () => {
  it('reads the service account and re-reads the token when it rotates', async () => {
    const r = await root('pod', { token: 'sa-token-1\n', ca: pem('CERTIFICATE'), namespace: 'raven-system\n' });
    const clock = new FakeClock(Date.now());
    const conn = inClusterConfig({ env, root: r, clock });
    assert.equal(conn.server, 'https://10.96.0.1:443');
    assert.equal(conn.ca, pem('CERTIFICATE'));
    assert.equal(conn.namespace, 'raven-system');
    assert.equal(conn.source, 'in-cluster');
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'sa-token-1' });
    const tokenPath = join(r, SA, 'token');
    await writeFile(tokenPath, 'sa-token-2\n');
    await utimes(tokenPath, new Date(), new Date(Date.now() + 5_000));
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'sa-token-2' });
    // Mid-rotation (the file briefly gone), the last token is kept.
    await rm(tokenPath);
    assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: 'sa-token-2' });
  });

  it('brackets an IPv6 host; POD_NAMESPACE wins over the file; "default" without either', async () => {
    const r = await root('ipv6', { token: 't', ca: pem('CERTIFICATE') });
    const conn = inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      root: r,
    });
    assert.equal(conn.server, 'https://[fd00::1]:6443');
    assert.equal(conn.namespace, 'default');
    assert.equal(inClusterConfig({ env: { ...env, POD_NAMESPACE: 'from-env' }, root: r }).namespace, 'from-env');
  });

  it('NOT_IN_CLUSTER without the environment; IN_CLUSTER_INVALID without a token or CA', async () => {
    assert.throws(
      () => inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: 'h' }, root: t.dir }),
      (e: unknown) => isCode('NOT_IN_CLUSTER')(e) && /KUBERNETES_SERVICE_PORT not set/.test((e as Error).message),
    );
    const noToken = await root('no-token', { ca: pem('CERTIFICATE') });
    assert.throws(
      () => inClusterConfig({ env, root: noToken }),
      (e: unknown) => isCode('IN_CLUSTER_INVALID')(e) && (e as KubeconfigError).file === join(noToken, SA, 'token'),
    );
    const noCa = await root('no-ca', { token: 't' });
    assert.throws(
      () => inClusterConfig({ env, root: noCa }),
      (e: unknown) => isCode('IN_CLUSTER_INVALID')(e) && /ca\.crt \(ENOENT\)/.test((e as Error).message),
    );
  });
});

describe('loadConnection', () => {
  it('uses a kubeconfig when one is found, else the service account', async () => {
    const r = await root('both', { token: 'sa', ca: pem('CERTIFICATE') });
    const home = join(t.dir, 'home');
    assert.equal((await loadConnection({ env, homeDir: home, root: r })).source, 'in-cluster');
    const file = await t.write('home/.kube/config', kubeconfig({ user: { token: 'x' } }));
    assert.equal((await loadConnection({ env, homeDir: home, root: r })).source, `kubeconfig ${file}, context "test"`);
  });

  it('KUBECONFIG_NOT_FOUND when there is neither, or --context without a kubeconfig', async () => {
    const home = join(t.dir, 'nowhere');
    await assert.rejects(
      loadConnection({ env: {}, homeDir: home }),
      (e: unknown) =>
        isCode('KUBECONFIG_NOT_FOUND')(e) &&
        /no such file .*, and in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT not set/.test(
          (e as Error).message,
        ),
    );
    await assert.rejects(
      loadConnection({ env, homeDir: home, context: 'dev', root: t.dir }),
      (e: unknown) => isCode('KUBECONFIG_NOT_FOUND')(e) && /--context needs one/.test((e as Error).message),
    );
    await assert.rejects(loadConnection({ kubeconfig: join(home, 'x'), env }), isCode('KUBECONFIG_NOT_FOUND'));
  });
});
