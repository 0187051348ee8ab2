// The kubeconfig the embedded API server writes (`raven apiserver --kubeconfig-out`) loads into its own address,
// CA and token.
import assert from 'node:assert/strict';
import { after, before, it } from '../../../../test/support/node-test.ts';
import { startTestServer, type TestServer } from '../../../../test/support/server.ts';
import { loadKubeconfig } from './index.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.stop();
});

it('loads the kubeconfig written by runApiServer', async () => {
  const conn = await loadKubeconfig({ kubeconfig: server.kubeconfig });
  assert.equal(conn.server, server.url.replace(/\/+$/, ''));
  assert.ok(server.caPem);
  assert.equal(conn.ca, server.caPem);
  assert.equal(conn.namespace, 'default');
  assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: server.token });
});
