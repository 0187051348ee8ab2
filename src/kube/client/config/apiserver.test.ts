// The kubeconfig the embedded API server writes (`raven apiserver --kubeconfig-out`) loads into its own address,
// CA and token.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
// The brief allows this test (and only it) to reach up to the composition root for a real server, as envtest does.
import { runApiServer, type RunningApiServer } from '../../../daemon/index.ts';
import { loadKubeconfig } from './index.ts';
import { tempDir } from './test-fixtures.ts';

let t: Awaited<ReturnType<typeof tempDir>>;
let server: RunningApiServer;
const out = () => join(t.dir, 'kube', 'config');
before(async () => {
  t = await tempDir();
  server = await runApiServer({ port: 0, kubeconfigOut: out() });
});
after(async () => {
  await server.close();
  await t.cleanup();
});

it('loads the kubeconfig written by runApiServer', async () => {
  const conn = await loadKubeconfig({ kubeconfig: out() });
  assert.equal(conn.server, server.url.replace(/\/+$/, ''));
  assert.ok(server.caPem);
  assert.equal(conn.ca, server.caPem);
  assert.equal(conn.namespace, 'default');
  assert.deepEqual(await conn.credentials?.(), { kind: 'bearer', token: server.token });
});
