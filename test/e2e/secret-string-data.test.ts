/**
 * A Secret's `stringData` on the embedded API server, as on the real one: write-only, folded into `data` (base64) on
 * create, update and patch (kubectl's client-side apply included), never stored or returned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { call, ok } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const path = '/api/v1/namespaces/default/secrets';
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
type Secret = KubeObject & { data?: Record<string, string>; stringData?: unknown };

describe('Secret stringData', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  it('create: stringData lands in data (winning over a data key of the same name), and is not returned', async () => {
    const created = await ok<Secret>(server, 'POST', path, {
      metadata: { name: 's1' },
      data: { kept: b64('old'), both: b64('from data') },
      stringData: { both: 'from stringData', 'clouds.yaml': 'clouds: {}\n' },
    });
    const read = await ok<Secret>(server, 'GET', `${path}/s1`);
    for (const secret of [created, read]) {
      assert.equal(secret.stringData, undefined);
      assert.deepEqual(secret.data, {
        kept: b64('old'),
        both: b64('from stringData'),
        'clouds.yaml': b64('clouds: {}\n'),
      });
    }
  });

  it('update and merge patch fold stringData too', async () => {
    const current = await ok<Secret>(server, 'GET', `${path}/s1`);
    const updated = await ok<Secret>(server, 'PUT', `${path}/s1`, { ...current, stringData: { kept: 'new' } });
    assert.equal(updated.stringData, undefined);
    assert.equal(updated.data?.kept, b64('new'));
    const patched = await ok<Secret>(
      server,
      'PATCH',
      `${path}/s1`,
      { stringData: { added: 'ü' } },
      'application/merge-patch+json',
    );
    assert.equal(patched.stringData, undefined);
    assert.equal(patched.data?.added, b64('ü'));
    assert.equal(patched.data?.kept, b64('new'));
  });

  it('stringData that is not a map of strings is a 400, nothing stored', async () => {
    const bad = await call(server, 'POST', path, { metadata: { name: 's2' }, stringData: { n: 1 } });
    assert.equal(bad.status, 400);
    assert.equal((await call(server, 'GET', `${path}/s2`)).status, 404);
  });

  it('kubectl apply: the Secret shows its keys (DATA 1), not DATA 0', async () => {
    const manifest = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s3\nstringData:\n  token: abc\n';
    await server.kubectl(['apply', '-f', '-'], { input: manifest });
    const table = await server.kubectl(['get', 'secret', 's3', '--no-headers']);
    assert.match(table, /^s3\s+Opaque\s+1\s/);
    const json = JSON.parse(await server.kubectl(['get', 'secret', 's3', '-o', 'json'])) as Secret;
    assert.equal(json.stringData, undefined);
    assert.deepEqual(json.data, { token: b64('abc') });
  });
});
