/**
 * Issue 26, row 8: the embedded API server's test-only fault API (`--enable-fault-api`) fails other users' requests,
 * compacts history and drops every watch, so only `system:masters` may call it, in either authorization mode. A
 * ServiceAccount's token (an authenticated user, not a master) is refused with upstream's 403 for a path.
 */
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { after, before, describe, it } from '../support/node-test.ts';
import type { Status } from '../../src/kube/api/index.ts';
import { call, ok, requester } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { Requester } from '../support/watch.ts';

for (const authorizationMode of ['AlwaysAllow', 'RBAC'] as const)
  describe(`the fault API under ${authorizationMode}`, () => {
    let server: TestServer;
    let agent: Agent | undefined;
    /** A ServiceAccount of namespace `default`, with its token. */
    let user: Requester;

    before(async () => {
      server = await startTestServer({ authorizationMode });
      await ok(server, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'tenant' },
      });
      const minted = await ok(server, 'POST', '/api/v1/namespaces/default/serviceaccounts/tenant/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      });
      agent = server.caPem ? new Agent({ connect: { ca: server.caPem } }) : undefined;
      user = requester(server.url, (minted.status as { token: string }).token, agent);
    });
    after(async () => {
      await agent?.close();
      await server?.stop();
    });

    it('refuses a user outside system:masters with 403, and changes nothing', async () => {
      for (const [method, path, body] of [
        ['POST', '/_raven/faults/rules', { path: '/api', count: 100, status: 500 }],
        ['POST', '/_raven/faults/compact', {}],
        ['POST', '/_raven/faults/drop-watches', { mode: 'abort' }],
        ['GET', '/_raven/faults/rules', undefined],
        ['DELETE', '/_raven/faults/rules', undefined],
      ] as const) {
        const reply = await call<Status>(user, method, path, body);
        assert.equal(reply.status, 403, `${method} ${path}`);
        assert.equal(reply.body.reason, 'Forbidden');
        assert.equal(
          reply.body.message,
          `forbidden: User "system:serviceaccount:default:tenant" cannot ${method.toLowerCase()} path "${path}": ` +
            'only system:masters may use the fault API',
        );
      }
      // No rule was installed: the tenant's own requests, and the admin's, go through.
      assert.deepEqual((await ok<{ rules: unknown[] }>(server, 'GET', '/_raven/faults/rules')).rules, []);
      assert.equal((await call(user, 'GET', '/api')).status, 200);
    });

    it('lets system:masters use it', async () => {
      const rule = await ok<{ id: number }>(server, 'POST', '/_raven/faults/rules', {
        path: '/api/v1/namespaces/default/configmaps',
        count: 1,
        status: 503,
      });
      assert.ok(rule.id > 0);
      await ok(server, 'DELETE', '/_raven/faults/rules');
    });
  });
